"""The questions a run replays: a :class:`~streamrag.simulator.questions.QuestionSet`
selected by the scenario.

:func:`select` applies the scenario's population (``all``, ``retrieved_gold``,
``fallback``) and ``limit``; questions it leaves out become skipped entries naming the
rule; :class:`Selector` applies the same rules one entry at a time (a streamed table
replay, :mod:`~streamrag.simulator.table_run`). :func:`load_selected` reads a run's input
(:mod:`~streamrag.simulator.questions`) and selects it.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import TYPE_CHECKING

from streamrag.base.errors import EmptySelectionError
from streamrag.data.selection import Population, Selection, check_ids_found
from streamrag.pipeline.question import SimQuestion
from streamrag.simulator.questions import Entry, QuestionSet, SkippedQuestion, questions_from_data, questions_from_table

if TYPE_CHECKING:
    from streamrag.data.chunk_cache import ChunkCache
    from streamrag.retrieval.kinds import RetrieverEnv
    from streamrag.simulator.scenario import Scenario


def _in_population(q: SimQuestion, population: Population) -> bool:
    if population == "retrieved_gold":
        return q.retrieved_gold
    if population == "fallback":
        return not q.retrieved_gold
    return True


POPULATION_REASONS = {
    "retrieved_gold": "not retrieved-gold (select.population = retrieved_gold)",
    "fallback": "retrieved-gold (select.population = fallback)",
}


class Selector:
    """:func:`select`'s rules over entries one at a time (:meth:`take`), its counts at the
    end (:meth:`counts`)."""

    def __init__(
        self, *, population: Population = "all", limit: int | None = None, ids: Sequence[str] | None = None, origin: str = ""
    ) -> None:
        self.population, self.limit, self.ids = population, limit, ids
        self.origin = origin
        """The input's name, for errors (empty: unnamed)."""
        self._wanted = None if ids is None else set(ids)
        self._found: set[str] = set()
        self.n_input = self.n_skipped = self.n_not_in_ids = self.n_population = self.n_limit = self.kept = 0

    def take(self, e: Entry) -> Entry | None:
        """``e`` as the selection leaves it (a question it leaves out becomes a skipped
        entry naming the rule), or None when ``ids`` leaves it out of the run."""
        self.n_input += 1
        if isinstance(e, SkippedQuestion):
            self.n_skipped += 1
        if self._wanted is not None:
            if e.interaction_id not in self._wanted:
                self.n_not_in_ids += 1
                return None
            self._found.add(e.interaction_id)
        if isinstance(e, SkippedQuestion):
            return e
        if not _in_population(e, self.population):
            self.n_population += 1
            return SkippedQuestion(e.interaction_id, POPULATION_REASONS[self.population], e.n_words, e.t_star, e.question_type)
        if self.limit is not None and self.kept >= self.limit:
            self.n_limit += 1
            return SkippedQuestion(e.interaction_id, "over select.limit", e.n_words, e.t_star, e.question_type)
        self.kept += 1
        return e

    def counts(self) -> dict[str, int]:
        """How many each rule took, once every entry is taken; an id of ``ids`` not in the
        input is an InputError, no question left to replay an EmptySelectionError."""
        check_ids_found(self.ids, self._found, self.origin or "the input")
        counts = {"input_rows": self.n_input, "skipped_in_input": self.n_skipped}
        if self.ids is not None:
            counts["not_in_ids"] = self.n_not_in_ids
        if self.population != "all":
            counts[f"not_{self.population}"] = self.n_population
        if self.n_limit:
            counts["over_limit"] = self.n_limit
        counts["selected"] = self.kept
        if not self.kept:
            where = f"{self.origin}: " if self.origin else ""
            raise EmptySelectionError(f"{where}no question to simulate ({', '.join(f'{k} {v}' for k, v in counts.items())})")
        return counts


def select(
    qs: QuestionSet,
    *,
    population: Population = "all",
    limit: int | None = None,
    ids: Sequence[str] | None = None,
    origin: str = "",
) -> QuestionSet:
    """Apply ``ids`` (an id not in the input is an error), the population and ``limit``
    (the first ``limit`` questions of the population, input order).

    Questions left out stay as skipped entries naming the rule; ``counts`` says how many
    each rule took. Raises EmptySelectionError when no question is left to replay.
    """
    selector = Selector(population=population, limit=limit, ids=ids, origin=origin)
    out = [taken for e in qs.entries if (taken := selector.take(e)) is not None]
    return QuestionSet(out, selector.counts(), qs.evidence_source)


def select_for(qs: QuestionSet, selection: Selection) -> QuestionSet:
    """:func:`select` with a :class:`~streamrag.data.selection.Selection`."""
    return select(qs, population=selection.population, limit=selection.limit, ids=selection.ids)


def load_selected(
    scenario: Scenario,
    *,
    data: str | os.PathLike[str] | None = None,
    table: str | os.PathLike[str] | None = None,
    evidence: str | os.PathLike[str] | bool | None = None,
    ids: Sequence[str] | None = None,
    cache: ChunkCache | None = None,
    jobs: int = 1,
    env: RetrieverEnv | None = None,
) -> QuestionSet:
    """The questions a run replays, from ``data`` (full mode) or ``table`` (trace-driven),
    selected by the scenario (``[data]`` split and scope, ``[select]``) and ``ids``;
    ``evidence`` as for :func:`questions_from_table`."""
    selection = scenario.selection(ids)
    if table is not None:
        qs = questions_from_table(table, evidence=evidence, k=scenario.data.k)
        return select(qs, population=selection.population, limit=selection.limit, ids=ids, origin=str(table))
    if data is None:
        raise ValueError("load_selected: give data or table")
    # The analyzer reads only the requested ids; population and limit apply after it.
    analyzed = questions_from_data(
        data, scenario.data, selection.model_copy(update={"population": "all", "limit": None}), cache=cache, jobs=jobs, env=env
    )
    return select(analyzed, population=selection.population, limit=selection.limit, origin=str(data))
