"""The learned trigger on live input: its features from the words heard so far.

A live turn without a known question has no analysis behind it — no per-prefix evidence,
no t*. What the ``learned`` trigger reads of prefix t (:func:`~streamrag.analysis.features.compute.prefix_features`:
t, the top-1's stable streak and change, the first entity, the question word, the
prefix's top-1/top-2 margin and top-1 coverage) needs only words 1 … t and a ranking of
each prefix. :class:`HeardFeatures` ranks a prefix the first time the trigger asks for
it, with a local :class:`Ranker` (the Speculator's ``ranker``: by default its judge, or
the tool itself, when it has ``rank``), keeps each prefix's inputs, and hands them to the
analyzer's own rule (:func:`~streamrag.analysis.features.compute.features_of`), so no feature is
restated here. Only the inputs the model reads are computed (the entity tagger runs on a
prefix only for a model with entity columns).

A **revision** — a word heard at a position already heard, with other text — withdraws
that prefix and every later one: their inputs are dropped and computed again from the
new words when asked for, and the trigger's own state goes back to before that position
(:class:`~streamrag.pipeline.learned.LearnedTrigger`). The features of the prefixes kept
are unchanged, since row t reads rows 1 … t only.

When the ranker ranks what the analyzer ranked (a BM25 tool over the question's own
chunks in per-question scope, over the pool in global scope), each prefix's inputs equal
the analyzer's evidence, and a live turn fires at the words full mode fires at (tested);
the margin is the difference of the ranker's own scores of the prefix, equal to the
analyzer's incremental sums to the last bits.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import numpy as np

from streamrag.analysis.features.compute import features_of
from streamrag.base.errors import ConfigError
from streamrag.pipeline.learned import LearnedTrigger, LearnedTriggerConfig
from streamrag.pipeline.tools import Hit

__all__ = ["HeardFeatures", "Ranker", "online_trigger"]


class Ranker(Protocol):
    """Role: a local ranking of a query over the tool's corpus — hits best first, scored
    for that query (a :class:`~streamrag.live.backends.BM25Tool`). For the prefix coverage
    it also needs ``judge(query, chunk_id, coverage)`` (the heuristic reflector's judge)."""

    def rank(self, query: str, k: int) -> Sequence[Hit]: ...


class HeardFeatures:
    """Per-prefix features of a turn's words as heard (module docstring): call it with t
    for the features of prefixes 1 … t of ``words`` (the turn's list, read as it fills)."""

    def __init__(self, words: Sequence[str], ranker: Ranker, inputs: frozenset[str]) -> None:
        if "coverage_prefix" in inputs and not callable(getattr(ranker, "judge", None)):
            raise ConfigError(
                "trigger.model reads top1_coverage_prefix: the ranker needs judge(query, chunk_id, coverage) too (a BM25Tool)"
            )
        self.words = words
        self.ranker = ranker
        self.inputs = inputs
        self._heard: list[str] = []
        """The words the kept rows were computed from (row t from words 1 … t)."""
        self._rows: list[tuple[int, float, float, int]] = []
        """Per prefix: top-1 chunk id, margin, prefix coverage, first entity word (0: none)."""

    def __call__(self, t: int) -> dict[str, np.ndarray]:
        words = list(self.words[:t])
        if len(words) < t:
            raise ValueError(f"HeardFeatures: prefix {t} asked for, {len(words)} word(s) heard")
        kept = 0
        for old, now in zip(self._heard, words, strict=False):
            if old != now:
                break
            kept += 1
        del self._heard[kept:], self._rows[kept:]  # revised: those prefixes are asked again
        for i in range(len(self._rows) + 1, t + 1):
            self._rows.append(self._row(" ".join(words[:i])))
            self._heard.append(words[i - 1])
        rows = self._rows[:t]
        inputs: dict[str, Any] = {}
        if "margin" in self.inputs:
            inputs["margin"] = np.array([r[1] for r in rows])
        if "coverage_prefix" in self.inputs:
            inputs["coverage_prefix"] = np.array([r[2] for r in rows])
        if "ne_first" in self.inputs:
            inputs["ne_first"] = np.array([r[3] for r in rows], dtype=np.int64)
        if "words" in self.inputs:
            inputs["words"] = tuple(words)
        return features_of(np.array([r[0] for r in rows], dtype=np.int64), **inputs)

    def _row(self, prefix: str) -> tuple[int, float, float, int]:
        hits = self.ranker.rank(prefix, 2 if "margin" in self.inputs else 1)
        if not hits:
            raise ConfigError(f"ranker: no hit for {prefix!r} (the learned trigger reads each prefix's top-1)")
        top1 = hits[0].chunk_id
        # the analyzer's margin: top1 − top2, 0 when the corpus has one chunk
        margin = hits[0].score - hits[1].score if len(hits) > 1 else 0.0
        coverage = float(self.ranker.judge(prefix, top1, "distinct")[1]) if "coverage_prefix" in self.inputs else 0.0  # type: ignore[attr-defined]
        entity = 0
        if "ne_first" in self.inputs:
            from streamrag.analysis.studies.entity import first_entity_positions

            entity = first_entity_positions([prefix])[0] or 0
        return int(top1), float(margin), coverage, entity


def online_trigger(config: Any, words: Sequence[str], ranker: Ranker | None) -> LearnedTrigger:
    """The trigger of ``config`` (a kind declaring ``ranks_online``) on the turn's ``words``
    as heard, ranked by ``ranker``; ConfigError naming what is missing."""
    if not isinstance(config, LearnedTriggerConfig):  # the one kind that declares it
        raise ConfigError(f"trigger.kind: {config.kind!r} cannot rank the words heard itself")
    if ranker is None:
        raise ConfigError(
            "trigger.kind: 'learned' reads a ranking of each prefix heard: pass ranker= (an object with "
            "rank(query, k), e.g. a BM25Tool over the tool's corpus), or a judge or tool that has rank"
        )
    return config.online(HeardFeatures(words, ranker, config.online_inputs()))
