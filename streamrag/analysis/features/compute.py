"""Per-word trigger features: one row per question × word, the anchor's columns and ours.

The anchor study's learned trigger (its ``experiments/trigger_features.py``) reads, at
word t of a question with n words:

==========================  ===========================================================
``top1_stable_streak``      prefixes in a row, ending at t, with the same top-1 (1 at
                            t = 1 and at every change)
``top1_changed``            1 if top1(t) ≠ top1(t − 1), 0 at t = 1
``t``                       the word position
``named_entity_detected``   1 if a named entity begins at or before word t
``words_since_first_ne``    t − (word where the first entity begins), 0 before it
``question_word_type``      the first of who/what/when/where/which/why/how among the
                            first three words, else ``other``
``label``                   1[t ≥ t_suf] (retrieved-gold questions; empty otherwise)
``label_sc``                1[t ≥ t_sc]
==========================  ===========================================================

plus ``interaction_id, question_type, domain, retrieved_gold, n_words, t_suf, t_sc``. Its
entity and question-word columns read the *full* query (spaCy on the whole question, the
first three words even at t = 1): right context. Ours default to the online rule — the
tagger on the prefix ``q[1:t]`` and the question word among the words heard so far — and
the column ``context`` says which ran (``prefix`` or ``full``; the anchor's files, which
lack it, are ``full``). Our extra columns, all online: ``top1_margin`` (the prefix's own
BM25 score of top1 − top2), ``top1_coverage_prefix`` (share of the prefix's distinct
tokens in the top-1 chunk) and ``hypothesis_revised`` (ASR hypotheses: 1 if hypothesis t
is later revised — known only afterwards, so it is a label-like column, not a feature).

:func:`prefix_features` is the one rule: the feature table
(:mod:`streamrag.analysis.features.table`) and the ``learned`` trigger (through
:class:`~streamrag.pipeline.question.SimQuestion`'s ``features``, or live from the words
heard) all call it, or :func:`features_of` under it, on a question's
:class:`~streamrag.analysis.evidence.prefixes.PrefixEvidence`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np

from streamrag.analysis.evidence.prefixes import PrefixEvidence
from streamrag.analysis.features.schema import ANCHOR_COLUMNS, EXTRA_COLUMNS
from streamrag.analysis.studies.entity import EntityContext

__all__ = [
    "ANCHOR_COLUMNS",
    "EXTRA_COLUMNS",
    "FEATURE_FILE",
    "QUESTION_WORDS",
    "Context",
    "features_of",
    "online_evidence",
    "prefix_features",
    "question_word_type",
]

Context = EntityContext
"""Which words the entity and question-word columns see (one rule with ``t_entity``'s)."""

FEATURE_FILE = "features.csv"
"""The feature table's name in an ``analyze --out`` folder."""

TABLE_SOURCE = "table:"
"""``table:T.csv``: the features of a stabilization table with its per-prefix evidence."""

QUESTION_WORDS = ("who", "what", "when", "where", "which", "why", "how")
"""The anchor's question words; ``other`` when none of the first three words is one."""
QUESTION_WORD_LEVELS = (*QUESTION_WORDS, "other")


NUMERIC_FEATURES = (
    "top1_stable_streak",
    "top1_changed",
    "t",
    "named_entity_detected",
    "words_since_first_ne",
    "top1_margin",
    "top1_coverage_prefix",
)
"""Numeric features a model may use (``question_word_type`` is one-hot: ``question_word_type=who`` …)."""
CONTEXT_FEATURES = ("named_entity_detected", "words_since_first_ne", "question_word_type")
"""Features with an online and a right-context variant (``_full`` in :func:`prefix_features`)."""


def question_word_type(words: Sequence[str]) -> str:
    """The first question word among ``words[:3]`` (lowercased), else ``other`` (the anchor's rule)."""
    for w in words[:3]:
        if w.lower() in QUESTION_WORDS:
            return w.lower()
    return "other"


def _entity_columns(first: np.ndarray, t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(named_entity_detected, words_since_first_ne) from the first entity word seen at each t (0: none)."""
    seen = (first > 0) & (first <= t)
    return seen.astype(np.float64), np.where(seen, t - first, 0).astype(np.float64)


def prefix_features(ev: PrefixEvidence) -> dict[str, np.ndarray]:
    """Every feature of every prefix of one question: float64 (n,) arrays by name
    (``question_word_type`` an object array of str). The online variants carry the plain
    names; right-context ones (the anchor's rule) add ``_full``. Entity columns are
    present only when the evidence has the tagger's output, question words only with
    the words, margin and prefix coverage only when the analysis computed them."""
    return features_of(
        ev.top_ids[:, 0],
        words=ev.words,
        margin=ev.margin,
        coverage_prefix=ev.coverage_prefix,
        ne_first=ev.ne_first,
        ne_first_full=ev.ne_first_full,
    )


def features_of(
    top1: np.ndarray,
    *,
    words: Sequence[str] | None = None,
    margin: np.ndarray | None = None,
    coverage_prefix: np.ndarray | None = None,
    ne_first: np.ndarray | None = None,
    ne_first_full: np.ndarray | None = None,
) -> dict[str, np.ndarray]:
    """:func:`prefix_features` from its inputs: ``top1`` (n,) each prefix's top chunk, and
    the optional per-prefix inputs of :class:`~streamrag.analysis.evidence.prefixes.PrefixEvidence`
    of the same names. Row t reads rows 1..t only (the ``_full`` columns aside), so a
    live turn computes the features of the prefixes heard so far with this same rule
    (:mod:`streamrag.simulator.heard`)."""
    top1 = np.asarray(top1)
    n = int(top1.shape[0])
    t = np.arange(1, n + 1, dtype=np.int64)
    changed = np.zeros(n, dtype=bool)  # not np.r_: its indexing machinery costs a replay's share per question
    changed[1:] = top1[1:] != top1[:-1]
    # streak: prefixes since the last change (inclusive), 1 at t = 1
    last_change = np.maximum.accumulate(np.where(changed | (t == 1), t, 0))
    out: dict[str, np.ndarray] = {
        "t": t.astype(np.float64),
        "top1_changed": changed.astype(np.float64),
        "top1_stable_streak": (t - last_change + 1).astype(np.float64),
    }
    if margin is not None:
        out["top1_margin"] = np.asarray(margin, dtype=np.float64)
    if coverage_prefix is not None:
        out["top1_coverage_prefix"] = np.asarray(coverage_prefix, dtype=np.float64)
    if ne_first is not None:
        out["named_entity_detected"], out["words_since_first_ne"] = _entity_columns(np.asarray(ne_first, dtype=np.int64), t)
    if ne_first_full is not None:
        full = _entity_columns(np.asarray(ne_first_full, dtype=np.int64), t)
        out["named_entity_detected_full"], out["words_since_first_ne_full"] = full
    if words is not None:
        heard = list(words)
        out["question_word_type"] = np.array([question_word_type(heard[:i]) for i in t.tolist()], dtype=object)
        out["question_word_type_full"] = np.array([question_word_type(heard)] * n, dtype=object)
    return out


# --- the online evidence the analyzer adds --------------------------------------------


def _prefix_scores(index: Any, word_tokens: Sequence[Sequence[str]], chunks: np.ndarray) -> np.ndarray:
    """float64 (n, len(chunks)): the BM25 score of each prefix for each of ``chunks``."""
    per_word = np.zeros((len(word_tokens), chunks.shape[0]), dtype=np.float64)
    keys = chunks.astype(np.int32)
    for w, tokens in enumerate(word_tokens):
        for token in tokens:
            ids, vals = index.postings(token)
            if ids.shape[0]:
                pos = np.minimum(np.searchsorted(ids, keys), ids.shape[0] - 1)
                per_word[w] += np.where(ids[pos] == keys, vals[pos], 0.0)
    return np.cumsum(per_word, axis=0)


def _prefix_coverage(index: Any, word_tokens: Sequence[Sequence[str]], top1: np.ndarray) -> np.ndarray:
    """float64 (n,): share of prefix t's distinct tokens found in top1(t)'s chunk."""
    out = np.zeros(len(word_tokens), dtype=np.float64)
    seen: dict[str, None] = {}
    for w, tokens in enumerate(word_tokens):
        seen.update(dict.fromkeys(tokens))
        if not seen:
            continue
        chunk = np.array([top1[w]], dtype=np.int32)
        hits = 0
        for token in seen:
            ids, _ = index.postings(token)
            if ids.shape[0]:
                pos = min(int(np.searchsorted(ids, chunk[0])), ids.shape[0] - 1)
                hits += int(ids[pos] == chunk[0])
        out[w] = hits / len(seen)
    return out


def prefix_entities(query: str) -> tuple[np.ndarray, np.ndarray]:
    """(online, full) int16 (n,): the first entity word the tagger finds in prefix t, and in
    the whole query (the same on every row), 0 for none (the ``ner`` extra)."""
    from streamrag.analysis.studies.entity import first_entity_positions

    words = query.split()
    prefixes = [" ".join(words[:t]) for t in range(1, len(words) + 1)]
    *online, full = first_entity_positions([*prefixes, query])
    return (np.array([p or 0 for p in online], dtype=np.int16), np.full(len(words), full or 0, dtype=np.int16))


def entity_columns_of(ev: PrefixEvidence, context: EntityContext) -> dict[str, int | None]:
    """The row's entity column (:func:`streamrag.analysis.studies.entity.entity_columns`) read off
    the evidence's tagging of every prefix and of the full query, without tagging again:
    the first prefix with an entity, or where the full query's first entity begins."""
    from streamrag.analysis.studies.entity import ENTITY_COLUMNS

    assert ev.ne_first is not None and ev.ne_first_full is not None  # online_evidence(..., entities=True)
    if context == "prefix":
        hits = np.flatnonzero(ev.ne_first)
        position = int(hits[0]) + 1 if hits.size else None
    else:
        position = int(ev.ne_first_full[0]) or None
    return {ENTITY_COLUMNS[context]: position}


def online_evidence(
    ev: PrefixEvidence, query: str, index: Any, word_tokens: Sequence[Sequence[str]], *, bm25: bool, entities: bool
) -> PrefixEvidence:
    """``ev`` with the online trigger evidence added: the words; with ``entities`` (the
    analysis runs the tagger: ``--features``, ``--entity-predictor``, ``data.entity_predictor``)
    also the prefix's top-1/top-2 BM25 margin (``bm25``: the ranking is BM25's, else the
    margin is left out), the prefix coverage of top-1, and the tagger's output on every
    prefix and on the full query. Word prefixes only (one row per whitespace word)."""
    words = tuple(query.split())
    if len(words) != ev.n_words or len(word_tokens) != ev.n_words:
        raise ValueError("online_evidence: word prefixes only (one row per whitespace word)")
    if not entities:  # the words alone: the rest is paid only when asked for
        return replace(ev, words=words)
    top1 = ev.top_ids[:, 0]
    margin = None
    if bm25:
        top2 = ev.top_ids[:, 1] if ev.k_max > 1 else top1
        support, inverse = np.unique(np.r_[top1, top2], return_inverse=True)
        scores = _prefix_scores(index, word_tokens, support)
        rows = np.arange(ev.n_words)
        n = ev.n_words
        margin = scores[rows, inverse[:n]] - scores[rows, inverse[n:]]
    coverage = _prefix_coverage(index, word_tokens, top1)
    ne, ne_full = prefix_entities(query)
    for a in (margin, coverage, ne, ne_full):
        if a is not None:
            a.flags.writeable = False
    return replace(ev, words=words, margin=margin, coverage_prefix=coverage, ne_first=ne, ne_first_full=ne_full)
