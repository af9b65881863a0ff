"""HotpotQA (distractor setting) questions with their labelled supporting facts.

HotpotQA ships the gold a CRAG question lacks: the paragraphs holding the supporting
facts. The anchor study (``benchmarks.py``) maps one question to its contract as:

- passages = the context paragraphs in order, each ``" ".join(sentences)``: one
  paragraph = one passage (they are passage-sized already), passage id = paragraph index;
- gold = the ids of the paragraphs whose title is a supporting-fact title (*clean* gold);
- ``question_type`` = ``type`` (bridge | comparison), ``level`` kept (easy | medium | hard);
- a question without paragraphs, query words or supporting paragraphs is skipped.

Two layouts of the same data are read, told by the file:

- the original release (``hotpot_dev_distractor_v1.json``): one JSON array of objects with
  ``_id``, ``question``, ``answer``, ``type``, ``level``, ``supporting_facts`` as
  ``[[title, sentence_id], ...]`` and ``context`` as ``[[title, [sentence, ...]], ...]``;
- the Hugging Face layout (``hotpotqa/hotpot_qa``, ``distractor``) as JSON lines: ``id``
  and ``supporting_facts = {"title": [...], "sent_id": [...]}``, ``context = {"title":
  [...], "sentences": [[...], ...]}``.

The file is the user's download; bad input is a one-line
:class:`~streamrag.base.errors.RecordError` naming file, record and field.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any, NamedTuple

from streamrag.base.errors import DataFileError, RecordError
from streamrag.base.lines import SUFFIXES, iter_json_objects

__all__ = ["HotpotQuestion", "read_hotpotqa"]


class HotpotQuestion(NamedTuple):
    interaction_id: str
    query: str
    answer: str
    question_type: str
    level: str
    passages: list[str]
    gold: frozenset[int]


def _objects(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """(record number — the line of a JSON-lines file, the 1-based position in an array — , object)."""
    if any(path.name.endswith(s) for s in SUFFIXES):
        yield from iter_json_objects(path)
        return
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DataFileError(f"{path}: no such file") from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise DataFileError(f"{path}: not a JSON array of HotpotQA questions ({exc})") from None
    if not isinstance(data, list):
        raise DataFileError(f"{path}: expected a JSON array of HotpotQA questions, got {type(data).__name__}")
    for number, obj in enumerate(data, start=1):
        if not isinstance(obj, dict):
            raise RecordError(str(path), number, "", f"expected a JSON object, got {type(obj).__name__}")
        yield number, obj


def _text(path: Path, number: int, obj: dict[str, Any], field: str) -> str:
    value = obj.get(field)
    if not isinstance(value, str):
        raise RecordError(str(path), number, field, "missing" if value is None else f"expected a string, got {value!r}")
    return value


def _context(path: Path, number: int, obj: dict[str, Any]) -> tuple[list[str], list[list[str]]]:
    ctx = obj.get("context")
    if isinstance(ctx, dict):
        titles, sentences = ctx.get("title"), ctx.get("sentences")
    elif isinstance(ctx, list) and all(isinstance(p, list) and len(p) == 2 for p in ctx):
        titles, sentences = [p[0] for p in ctx], [p[1] for p in ctx]
    else:
        raise RecordError(str(path), number, "context", "expected [[title, [sentence, ...]], ...] or {title, sentences}")
    if not (isinstance(titles, list) and isinstance(sentences, list) and len(titles) == len(sentences)):
        raise RecordError(str(path), number, "context", "expected as many sentence lists as titles")
    if not all(isinstance(t, str) for t in titles) or not all(
        isinstance(s, list) and all(isinstance(x, str) for x in s) for s in sentences
    ):
        raise RecordError(str(path), number, "context", "titles and sentences must be strings")
    return titles, sentences


def _support_titles(path: Path, number: int, obj: dict[str, Any]) -> set[str]:
    facts = obj.get("supporting_facts")
    if isinstance(facts, dict) and isinstance(facts.get("title"), list):
        titles = facts["title"]
    elif isinstance(facts, list) and all(isinstance(f, list) and len(f) == 2 for f in facts):
        titles = [f[0] for f in facts]
    else:
        raise RecordError(str(path), number, "supporting_facts", "expected [[title, sentence_id], ...] or {title, sent_id}")
    if not all(isinstance(t, str) for t in titles):
        raise RecordError(str(path), number, "supporting_facts", "titles must be strings")
    return set(titles)


def read_hotpotqa(path: str | os.PathLike[str], *, limit: int | None = None) -> Iterator[HotpotQuestion]:
    """The usable questions of a HotpotQA file in file order (at most ``limit``)."""
    source = Path(path)
    n = 0
    for number, obj in _objects(source):
        qid = obj.get("_id", obj.get("id"))
        if not isinstance(qid, str) or not qid:
            raise RecordError(str(source), number, "_id", "missing or not a non-empty string (the question's id)")
        query, answer = _text(source, number, obj, "question"), _text(source, number, obj, "answer")
        titles, sentences = _context(source, number, obj)
        support = _support_titles(source, number, obj)
        passages = [" ".join(s) for s in sentences]
        gold = frozenset(i for i, t in enumerate(titles) if t in support)
        if not passages or not query.split() or not gold:
            continue
        qtype, level = obj.get("type", ""), obj.get("level", "")
        yield HotpotQuestion(
            qid, query, answer, qtype if isinstance(qtype, str) else "", level if isinstance(level, str) else "", passages, gold
        )
        n += 1
        if limit is not None and n >= limit:
            return
