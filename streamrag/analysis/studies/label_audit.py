"""A seeded sample of retrieved-gold questions for a human to judge the gold label.

The anchor study (``audit_labels.py``) derives gold by string matching and audits it by
hand: it samples retrieved-gold questions and shows each one's first gold passage, to be
marked answer-bearing or not. Its rule, reproduced here as the ``paper`` sampler:

- the population is the retrieved-gold questions (t_suf defined), in file order;
- ``random.Random(seed).sample(population, min(N, len(population)))`` — the standard
  library's generator, so a seed picks the same questions as the anchor's script on the
  same population — then sorted by ``interaction_id``;
- the passage shown is the first gold chunk the anchor's gold *set* yields: its ids
  inserted in ascending order into a Python ``set``, then ``next(iter(...))`` — CPython's
  hash-table order, which is not the lowest id once the set outgrows its table (CRAG's
  55b219e5: gold {16, 17, …, 97, 99} yields 97). ``passage="lowest"`` shows the
  lowest-numbered gold chunk instead; column ``passage_rule`` says which ran.

Columns (:data:`AUDIT_COLUMNS`): the anchor's ``interaction_id, query, t_suf,
gold_passage, is_answer_bearing`` (left empty for the judge), and what the judge needs
besides: ``question_type``, ``answer`` and ``alt_answers`` (JSON list), ``matched_answer``
(the normalized candidate found in that chunk, :mod:`streamrag.data.grounding`),
``gold_chunk_id``, ``n_gold``, ``gold_density`` and ``passage_rule``.
"""

from __future__ import annotations

import csv
import json
import os
import random
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal

from streamrag.analysis.stabilize import QuestionAnalysis
from streamrag.base.atomic import atomic_path
from streamrag.base.columns import TableKind
from streamrag.data.chunking import ChunkSettings
from streamrag.data.crag import SkippedRecord
from streamrag.data.grounding import GroundingMode, answer_candidates, chunk_is_gold, normalize

__all__ = ["AUDIT", "AUDIT_COLUMNS", "AUDIT_FILE", "PASSAGE_RULES", "label_audit", "sample_ids", "shown_chunk", "write_audit"]

AUDIT_FILE = "label_audit.csv"
AUDIT = TableKind(
    "label_audit",
    {
        "interaction_id": "str",
        "query": "str",
        "question_type": "str",
        "t_suf": "int",
        "answer": "str",
        "alt_answers": "str",
        "matched_answer": "str",
        "gold_chunk_id": "int",
        "n_gold": "int",
        "gold_density": "float",
        "gold_passage": "str",
        "is_answer_bearing": "bool",
        "passage_rule": "str",
    },
)
"""``label_audit.csv``, declared (``is_answer_bearing`` is empty until the judge marks it)."""
AUDIT_COLUMNS: tuple[str, ...] = tuple(AUDIT.columns)

PassageRule = Literal["paper", "lowest"]
"""Which gold chunk an audit row shows: the anchor's (``paper``) or the lowest id."""
PASSAGE_RULES: tuple[PassageRule, ...] = ("paper", "lowest")


def shown_chunk(gold: frozenset[int], rule: PassageRule) -> int:
    """The gold chunk an audit row shows under ``rule`` (see the module docstring)."""
    if rule == "lowest":
        return min(gold)
    anchors: set[int] = set()
    for chunk_id in sorted(gold):  # filled in chunk order, as the anchor's loop over chunks fills it
        anchors.add(chunk_id)
    return next(iter(anchors))


def sample_ids(ids: Sequence[str], n: int, seed: int) -> list[str]:
    """The anchor's draw: ``random.Random(seed).sample(ids, min(n, len(ids)))``, sorted."""
    return sorted(random.Random(seed).sample(list(ids), min(n, len(ids))))


def label_audit(
    path: str | os.PathLike[str],
    analyses: Sequence[QuestionAnalysis],
    n: int,
    seed: int,
    *,
    chunks: ChunkSettings,
    grounding: GroundingMode = "exact",
    cache: Any = None,
    passage: PassageRule = "paper",
) -> list[dict[str, Any]]:
    """Audit rows of ``n`` retrieved-gold questions of ``analyses`` (the analysis of the
    CRAG file at ``path``); the sampled questions' chunks are read again from the file
    (or the chunk cache)."""
    from streamrag.data.ingest import ingest

    rows = {a.row["interaction_id"]: a for a in analyses if a.row.get("retrieved_gold") and a.gold}
    picked = sample_ids(list(rows), n, seed)
    out: dict[str, dict[str, Any]] = {}
    for item in ingest(Path(path), settings=chunks, cache=cache, split=None, ids=set(picked)):
        if isinstance(item, SkippedRecord):
            continue
        record = item.record
        analysis = rows[record.interaction_id]
        chunk_id = shown_chunk(analysis.gold, passage)
        text = item.chunks[chunk_id]
        normalized = normalize(text)
        matched = next((c for c in answer_candidates(record.answers) if chunk_is_gold(normalized, [c], grounding)), "")
        out[record.interaction_id] = {
            "interaction_id": record.interaction_id,
            "query": record.query,
            "question_type": record.question_type,
            "t_suf": analysis.row["t_suf"],
            "answer": record.answer,
            "alt_answers": json.dumps(list(record.alt_ans)),
            "matched_answer": matched,
            "gold_chunk_id": chunk_id,
            "n_gold": len(analysis.gold),
            "gold_density": analysis.row.get("gold_density"),
            "gold_passage": text,
            "is_answer_bearing": "",
            "passage_rule": passage,
        }
    return [out[qid] for qid in picked if qid in out]


def write_audit(rows: Sequence[dict[str, Any]], path: str | os.PathLike[str]) -> Path:
    """Write the audit rows as CSV (:data:`AUDIT_COLUMNS`), atomically."""
    target = Path(path)
    with atomic_path(target) as tmp, open(tmp, "w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(AUDIT_COLUMNS)
        for row in rows:
            writer.writerow(["" if row.get(c) is None else row[c] for c in AUDIT_COLUMNS])
    return target
