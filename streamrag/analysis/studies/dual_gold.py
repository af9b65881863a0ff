"""Clean versus string-grounded gold on a benchmark with labelled supporting facts.

The anchor study (``benchmark_stats.py``, results ``hotpotqa/dual_stab.*``) measures how
string grounding biases t_suf where the true gold is known: each HotpotQA question
(:mod:`streamrag.data.hotpotqa`) is ranked once per prefix (BM25, paper preset, over its
own paragraphs), and t_suf is taken twice from the same rankings:

- *clean*: gold = the supporting-fact paragraphs;
- *string*: gold = the paragraphs the answer is found in by the grounding rule
  (:func:`streamrag.data.grounding.gold_chunks`, exact by default; no alternative answers),
  as CRAG's gold is derived.

Per question (:data:`DUAL_COLUMNS`, the anchor's columns): ``retrieved_gold_*``,
``t_suf_*`` and ``phi_suf_*`` of each arm (empty when undefined). Summary
(:func:`dual_summary`): per arm, over its retrieved-gold questions, n, mean and median
φ_suf and the share ``t_suf = 1``; across arms, the questions whose answer string occurs
in no paragraph (``n_string_ungroundable``), retrieved-gold in both, and among those how
often the string arm stabilizes earlier or later than the clean one.
"""

from __future__ import annotations

import csv
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from streamrag.analysis._values import share, to_float
from streamrag.analysis.metrics import phi, t_suf
from streamrag.base.atomic import atomic_path
from streamrag.base.columns import TableKind
from streamrag.data.grounding import GroundingMode, gold_chunks
from streamrag.data.hotpotqa import HotpotQuestion
from streamrag.retrieval.bm25 import BM25Index, BM25Params
from streamrag.retrieval.prefix import prefix_rankings

__all__ = ["DUAL", "DUAL_COLUMNS", "dual_row", "dual_summary", "write_dual_table"]

DUAL = TableKind(
    "dual_gold",
    {
        "interaction_id": "str",
        "question_type": "str",
        "level": "str",
        "n_words": "int",
        "n_passages": "int",
        "n_gold_clean": "int",
        "n_gold_string": "int",
        "retrieved_gold_clean": "bool",
        "t_suf_clean": "int",
        "phi_suf_clean": "float",
        "retrieved_gold_string": "bool",
        "t_suf_string": "int",
        "phi_suf_string": "float",
    },
)
"""``dual_gold.csv``, declared (the anchor's columns)."""
DUAL_COLUMNS: tuple[str, ...] = tuple(DUAL.columns)


def dual_row(
    question: HotpotQuestion, *, k: int = 3, grounding: GroundingMode = "exact", bm25: BM25Params | None = None
) -> dict[str, Any]:
    """Both arms' t_suf of one question from one set of prefix rankings."""
    index = BM25Index.build(question.passages, params=bm25)
    topk = prefix_rankings(index, question.query, k=k).topk
    n_words = len(question.query.split())
    string_gold = gold_chunks(question.passages, [question.answer], grounding)
    row: dict[str, Any] = {
        "interaction_id": question.interaction_id,
        "question_type": question.question_type,
        "level": question.level,
        "n_words": n_words,
        "n_passages": len(question.passages),
        "n_gold_clean": len(question.gold),
        "n_gold_string": len(string_gold),
    }
    for arm, gold in (("clean", question.gold), ("string", string_gold)):
        t = t_suf(topk, gold)
        row[f"retrieved_gold_{arm}"] = t is not None
        row[f"t_suf_{arm}"] = t
        row[f"phi_suf_{arm}"] = phi(t, n_words)
    return row


def _cell(rows: Sequence[dict[str, Any]], arm: str) -> dict[str, Any]:
    hit = [r for r in rows if r[f"retrieved_gold_{arm}"]]
    values = np.array([r[f"phi_suf_{arm}"] for r in hit], dtype=float)
    if not hit:
        return {"n": 0, "mean_phi_suf": None, "median_phi_suf": None, "share_t_suf_1": None}
    return {
        "n": len(hit),
        "mean_phi_suf": to_float(values.mean()),
        "median_phi_suf": to_float(np.median(values)),
        "share_t_suf_1": share(sum(1 for r in hit if r[f"t_suf_{arm}"] == 1), len(hit)),
    }


def dual_summary(rows: Sequence[dict[str, Any]]) -> dict[str, Any]:
    """Per-arm cells and the paired comparison (see the module docstring)."""
    both = [r for r in rows if r["retrieved_gold_clean"] and r["retrieved_gold_string"]]
    return {
        "n_questions": len(rows),
        "clean": _cell(rows, "clean"),
        "string": _cell(rows, "string"),
        "n_string_ungroundable": sum(1 for r in rows if r["n_gold_string"] == 0),
        "n_retrieved_gold_both": len(both),
        "n_string_earlier": sum(1 for r in both if r["t_suf_string"] < r["t_suf_clean"]),
        "n_string_later": sum(1 for r in both if r["t_suf_string"] > r["t_suf_clean"]),
    }


def write_dual_table(rows: Iterable[dict[str, Any]], path: str | os.PathLike[str]) -> Path:
    """The per-question table as CSV (:data:`DUAL_COLUMNS`), atomically; undefined is empty."""
    target = Path(path)
    with atomic_path(target) as tmp, open(tmp, "w", encoding="utf-8", newline="") as fh:
        writer = csv.writer(fh, lineterminator="\n")
        writer.writerow(DUAL_COLUMNS)
        for row in rows:
            writer.writerow(["" if row[c] is None else row[c] for c in DUAL_COLUMNS])
    return target
