"""The real CRAG pages available offline, pooled into one global corpus, and CRAG's questions.

Reads (never copies) the folder described in ``shared/data/crag/README.md``:

- ``dev_data.jsonl.bz2``: CRAG's 10-record example with its HTML pages. Each record's
  pages become one document ``sample/<interaction_id>``, chunked exactly as in
  per-question scope (html → text, 120/20-word windows, ≤ 400 chunks per record).
- ``streamrag_audio_crag_eval/documents.jsonl.bz2``: 250 plain-text pages, document
  ``audio/<doc_id>`` (``text``, or ``snippet`` when the text is empty), ≤ 400 windows each.
- ``shenzt_crag_finance/crag_finance_docs.jsonl``: 119 Markdown pages, document
  ``finance/<doc_id>``; the YAML front matter (ids, repository paths, tags — metadata,
  not page text) is removed.

Questions: the 2,706 of ``crag_v4_questions.jsonl`` in file order (query, answer, type,
domain, dynamism, split from v4), then the sample records whose ids are not in v4 (3 of
10; split as in the sample file). Answers are the v4 answer plus every alternative the
other files give for the same interaction id (the sample's ``alternative_answers``, the
audio set's curated ``answer`` and ``alt_answers``, the finance set's ``gold_answer``).

Per question, from the files' own cross-references (by interaction id):

- ``own_docs``: the sample record's pages; the audio item's ``source_document_ids``
  present among the 250 pages (``selection_manifest.json``); the finance case's pages
  (``source_path`` ``crag/finance/<case index>/page_*``) and its ``expected_doc``;
- ``labeled_docs``: the audio item's supporting pages (``exact_supporting_doc_ids`` of the
  manifest, ``supporting_doc_ids`` and ``acceptable_supporting_doc_ids`` of
  ``test_gold.jsonl`` and ``dev_queries.jsonl``) and the finance case's ``expected_doc``.
"""

from __future__ import annotations

import json
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from streamrag.base.errors import DataFileError, RecordError
from streamrag.base.lines import iter_json_objects, iter_question_objects
from streamrag.data.chunk_cache import ChunkCache
from streamrag.data.chunking import PAPER_CHUNKS, ChunkSettings
from streamrag.data.crag import CragRecord, read_records
from streamrag.data.ingest import cached_chunks
from streamrag.data.pools.corpus import PoolBuilder, PoolQuestion, PoolSource

__all__ = ["CragPoolPaths", "load_crag_pool"]


@dataclass(frozen=True, slots=True)
class CragPoolPaths:
    """Where each input lives; :meth:`in_folder` gives the layout of ``shared/data/crag``."""

    questions: Path
    sample: Path
    audio_docs: Path
    audio_manifest: Path
    audio_gold: tuple[Path, ...]
    finance_cases: Path
    finance_docs: Path

    @classmethod
    def in_folder(cls, folder: str | Path) -> CragPoolPaths:
        root = Path(folder)
        audio, finance = root / "streamrag_audio_crag_eval", root / "shenzt_crag_finance"
        return cls(
            questions=root / "crag_v4_questions.jsonl",
            sample=root / "dev_data.jsonl.bz2",
            audio_docs=audio / "documents.jsonl.bz2",
            audio_manifest=audio / "selection_manifest.json",
            audio_gold=(audio / "test_gold.jsonl", audio / "dev_queries.jsonl"),
            finance_cases=finance / "crag_finance_cases.json",
            finance_docs=finance / "crag_finance_docs.jsonl",
        )


def _json(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DataFileError(f"{path}: no such file") from None
    except (OSError, ValueError) as exc:
        raise DataFileError(f"{path}: unreadable ({exc})") from None


def _field(obj: dict[str, Any], name: str, path: Path, line_no: int, kind: type = str) -> Any:
    value = obj.get(name)
    if not isinstance(value, kind):
        problem = "missing" if value is None else f"expected {kind.__name__}, got {type(value).__name__}"
        raise RecordError(str(path), line_no, name, problem)
    return value


def _strip_front_matter(text: str) -> str:
    """Markdown body without a leading ``---`` … ``---`` YAML block."""
    if text.startswith("---\n"):
        end = text.find("\n---\n", 4)
        if end >= 0:
            return text[end + 5 :]
    return text


class _Labels:
    """Per interaction id: extra answers, own documents, labeled documents."""

    def __init__(self) -> None:
        self.answers: dict[str, list[str]] = defaultdict(list)
        self.own: dict[str, list[str]] = defaultdict(list)
        self.labeled: dict[str, list[str]] = defaultdict(list)
        self.capped: dict[str, tuple[int, int]] = {}
        """Per sample question: (pages unread, chunks cut) by the cap on its own pages."""

    def add(self, table: dict[str, list[str]], iid: str, values: list[str]) -> None:
        table[iid].extend(v for v in values if v not in table[iid])


def _add_sample(
    paths: CragPoolPaths, builder: PoolBuilder, labels: _Labels, settings: ChunkSettings, cache: ChunkCache | None
) -> dict[str, CragRecord]:
    records: dict[str, CragRecord] = {}
    for record in read_records(paths.sample):
        if not isinstance(record, CragRecord):  # not reached: read_records raises on a bad line
            continue
        doc = f"sample/{record.interaction_id}"
        chunked = cached_chunks(record.search_results, settings, cache)
        builder.add_chunks(doc, chunked.chunks)
        labels.capped[record.interaction_id] = (chunked.n_pages_unread, chunked.n_chunks_cut)
        labels.add(labels.own, record.interaction_id, [doc])
        labels.add(labels.answers, record.interaction_id, [record.answer, *record.alt_ans])
        records[record.interaction_id] = record.model_copy(update={"search_results": ()})
    return records


def _add_audio(paths: CragPoolPaths, builder: PoolBuilder, labels: _Labels, settings: ChunkSettings) -> None:
    present: set[str] = set()
    for line_no, doc in iter_json_objects(paths.audio_docs):
        doc_id = _field(doc, "doc_id", paths.audio_docs, line_no)
        text = doc.get("text") or doc.get("snippet") or ""
        if not isinstance(text, str):
            raise RecordError(str(paths.audio_docs), line_no, "text", f"expected str, got {type(text).__name__}")
        builder.add_text(f"audio/{doc_id}", text, settings)
        present.add(doc_id)
    manifest = _json(paths.audio_manifest)
    items = manifest.get("items") if isinstance(manifest, dict) else None
    if not isinstance(items, list):
        raise DataFileError(f"{paths.audio_manifest}: field 'items': expected a list")
    item_iid: dict[str, str] = {}
    for pos, item in enumerate(items):
        where = f"{paths.audio_manifest}: items[{pos}]"
        iid, item_id = item.get("source_interaction_id"), item.get("id")
        if not isinstance(iid, str) or not isinstance(item_id, str):
            raise DataFileError(f"{where}: fields 'id' and 'source_interaction_id' must be strings")
        item_iid[item_id] = iid
        own = [f"audio/{d}" for d in item.get("source_document_ids", []) if d in present]
        labels.add(labels.own, iid, own)
        labels.add(labels.labeled, iid, [f"audio/{d}" for d in item.get("exact_supporting_doc_ids", [])])
    for path in paths.audio_gold:
        for line_no, row in iter_json_objects(path):
            item_id = _field(row, "id", path, line_no)
            if item_id not in item_iid:
                raise RecordError(str(path), line_no, "id", f"{item_id!r} is not in {paths.audio_manifest.name}")
            iid = item_iid[item_id]
            docs = [*row.get("supporting_doc_ids", []), *row.get("acceptable_supporting_doc_ids", [])]
            labels.add(labels.labeled, iid, [f"audio/{d}" for d in docs])
            answers = [row.get("answer"), *row.get("alt_answers", [])]
            labels.add(labels.answers, iid, [str(a) for a in answers if isinstance(a, (str, int, float))])


def _add_finance(paths: CragPoolPaths, builder: PoolBuilder, labels: _Labels, settings: ChunkSettings) -> None:
    folder_docs: dict[str, list[str]] = defaultdict(list)
    for line_no, doc in iter_json_objects(paths.finance_docs):
        doc_id = _field(doc, "doc_id", paths.finance_docs, line_no)
        body = _strip_front_matter(_field(doc, "content", paths.finance_docs, line_no))
        if not body.split():
            body = str(doc.get("title") or "")
        builder.add_text(f"finance/{doc_id}", body, settings)
        parts = str(doc.get("source_path", "")).split("/")  # crag/finance/<case index>/page_<j>
        if len(parts) >= 3:
            folder_docs[parts[2]].append(f"finance/{doc_id}")
    cases = _json(paths.finance_cases)
    if not isinstance(cases, list):
        raise DataFileError(f"{paths.finance_cases}: expected a list of cases")
    for pos, case in enumerate(cases):
        iid, expected = case.get("crag_interaction_id"), case.get("expected_doc")
        if not isinstance(iid, str) or not isinstance(expected, str):
            raise DataFileError(
                f"{paths.finance_cases}: case {pos}: fields 'crag_interaction_id' and 'expected_doc' must be strings"
            )
        expected_doc = f"finance/{expected.removesuffix('.md')}"
        # Identical pages were stored once: a case's expected page may sit in another case's folder.
        labels.add(labels.own, iid, [*folder_docs.get(str(pos), []), expected_doc])
        labels.add(labels.labeled, iid, [expected_doc])
        if isinstance(case.get("gold_answer"), str):
            labels.add(labels.answers, iid, [case["gold_answer"]])


def _question(record: CragRecord, labels: _Labels) -> PoolQuestion:
    iid = record.interaction_id
    extra = [a for a in labels.answers.get(iid, []) if a not in record.answers]
    if extra:
        record = record.model_copy(update={"alt_ans": (*record.alt_ans, *extra)})
    unread, cut = labels.capped.get(iid, (None, None))
    return PoolQuestion(record, tuple(labels.own.get(iid, ())), tuple(labels.labeled.get(iid, ())), unread, cut)


def load_crag_pool(
    folder: str | Path | None = None,
    *,
    paths: CragPoolPaths | None = None,
    settings: ChunkSettings = PAPER_CHUNKS,
    split: int | None = None,
    cache: ChunkCache | None = None,
) -> PoolSource:
    """The real CRAG pool and its questions (``split`` 0/1 keeps that split; None keeps all).

    Give ``folder`` (the layout of ``shared/data/crag``) or explicit ``paths``. Raises
    :class:`~streamrag.base.errors.DataFileError` / ``RecordError`` naming file, line and field.
    """
    if paths is None:
        if folder is None:
            raise ValueError("give folder or paths")
        paths = CragPoolPaths.in_folder(folder)
    builder, labels = PoolBuilder(), _Labels()
    sample = _add_sample(paths, builder, labels, settings, cache)
    _add_audio(paths, builder, labels, settings)
    _add_finance(paths, builder, labels, settings)
    items: list[PoolQuestion] = []
    seen: set[str] = set()
    for line_no, iid, row in iter_question_objects(paths.questions, twice="repeats an earlier line"):
        base = sample.get(iid)
        answer = row.get("answer", "")
        fields = {
            "interaction_id": iid,
            "query": _field(row, "query", paths.questions, line_no),
            "answer": answer if isinstance(answer, (str, int, float)) else "",
            "alt_ans": list(base.alt_ans) if base is not None else [],
            "domain": row.get("domain", ""),
            "question_type": row.get("question_type", ""),
            "static_or_dynamic": row.get("static_or_dynamic", ""),
            "split": row.get("split"),
        }
        try:
            record = CragRecord.model_validate(fields)
        except ValueError as exc:
            raise RecordError(str(paths.questions), line_no, "", str(exc).splitlines()[0]) from None
        seen.add(iid)
        items.append(_question(record, labels))
    items += [_question(record, labels) for iid, record in sample.items() if iid not in seen]
    if split is not None:
        items = [q for q in items if q.record.split == split]
    parameters = {"pool": str(folder or paths.questions.parent), "chunks": settings.model_dump(), "split": split}
    return PoolSource(builder.build(), list(items), "crag-pool", parameters)
