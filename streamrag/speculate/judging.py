"""What a speculative call returned, and the rules that judge it at end of turn.

A call is an async tool function awaited with JSON-serializable arguments; what it
returns is kept as a :class:`~streamrag.pipeline.tools.Called` (its query, arguments
and value). A reflector
decides whether one speculative call's value may stand for the full query's:

- ``"scenario"`` (default): the scenario's rule. The heuristic one (the simulator's
  :class:`~streamrag.pipeline.reflectors.HeuristicReflector`) reads retrieval hits: the
  value's top hit re-scored under the full query by a :class:`Judge` (``score ≥
  threshold`` and coverage ``≥ min_coverage``), so it needs hits and a judge;
- ``"unchanged"``: accept only a call whose arguments equal the full query's (a tool
  whose every argument matters: SQL, a booking API);
- any callable ``accept(full_query, call) -> bool``.

Every rule judges through the pipeline's :class:`~streamrag.pipeline.reflectors.Reflector`
protocol, so the streaming arm's shell (pick, wait, re-judge, fall back) is the same.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, Protocol

from streamrag.base.errors import ConfigError
from streamrag.pipeline.reflectors import Coverage, HeuristicReflectorConfig, Reflector, Verdict
from streamrag.pipeline.tools import Called, Hit, ToolResult


class Judge(Protocol):
    """Scores a chunk of the tool's corpus under the full query: ``(score, coverage)``,
    coverage counting the full query's distinct tokens or their occurrences."""

    def judge(self, full_query: str, chunk_id: int, coverage: Coverage = "distinct") -> tuple[float, float]: ...


Accept = Callable[[str, Called], bool]
ReflectorChoice = Literal["scenario", "unchanged"] | Accept


def hits_of(value: Any) -> tuple[Hit, ...] | None:
    """A value's retrieval hits, best first: a :class:`ToolResult`, a sequence of
    :class:`Hit` s, or of ``{"id": int, "score": number}`` dicts (the HTTP tool's
    shape); ``None`` when the value is not hits."""
    if isinstance(value, ToolResult):
        return value.hits
    if isinstance(value, Mapping) and "hits" in value:
        value = value["hits"]
    if not isinstance(value, Sequence) or isinstance(value, str | bytes):
        return None
    hits = []
    for h in value:
        if isinstance(h, Hit):
            hits.append(h)
        elif isinstance(h, Mapping) and isinstance(h.get("id"), int) and isinstance(h.get("score"), int | float):
            hits.append(Hit(h["id"], float(h["score"]), str(h.get("text", ""))))
        else:
            return None
    return tuple(hits)


def render_result(resolution: Any) -> str:
    """A resolution's value as text for an LLM's context: the hits' texts (a retrieval
    tool), the lines of a list of strings, else the value as a string."""
    value = resolution.value
    hits = hits_of(value)
    if hits:
        body = "\n".join(h.text for h in hits)
    elif isinstance(value, list | tuple) and all(isinstance(v, str) for v in value):
        body = "\n".join(value)
    else:
        body = str(value)
    return f"Information relevant to the user's message:\n{body}"


class HitEvidence:
    """The heuristic rule's evidence on real results: the full query's score of a
    result's top hit and its coverage, re-scored by the judge (``None``: no hits)."""

    def __init__(self, results: Mapping[int, Called], judge: Judge, full_query: Callable[[], str], coverage: Coverage) -> None:
        self.results = results
        self.judge = judge
        self.full_query = full_query
        self.coverage = coverage

    def top_chunk(self, prefix_t: int) -> tuple[float, float] | None:
        called = self.results.get(prefix_t)
        hits = None if called is None else hits_of(called.value)
        if not hits:
            return None
        return self.judge.judge(self.full_query(), hits[0].chunk_id, self.coverage)


class AcceptReflector:
    """A yes/no rule on each finished call, in completion order (``"unchanged"`` or a
    user's callable); a rule that raises is one line naming it, never a traceback."""

    check_us = 0

    def __init__(self, accept: Accept, results: Mapping[int, Called], full_query: Callable[[], str], name: str) -> None:
        self.accept = accept
        self.results = results
        self.full_query = full_query
        self.name = name

    def pick(self, finished: list[tuple[int, int]]) -> list[tuple[int, int]]:
        return finished

    def judge(self, prefix_t: int) -> Verdict:
        called = self.results.get(prefix_t)
        if called is None:
            return Verdict(False)
        try:
            return Verdict(bool(self.accept(self.full_query(), called)))
        except Exception as exc:  # a user's rule: its failure is reported, not raised through the arm
            raise ConfigError(f"reflector {self.name}: {type(exc).__name__}: {exc}") from None


def build_reflector(
    choice: ReflectorChoice,
    scenario_rule: Any,
    results: Mapping[int, Called],
    full_query: Callable[[], str],
    arguments: Callable[[str], Mapping[str, Any]],
    judge: Judge | None,
) -> Reflector:
    """The reflector a :class:`~streamrag.speculate.speculator.Speculator` judges with."""
    if choice == "unchanged":

        def unchanged(full: str, called: Called) -> bool:
            return dict(called.arguments) == dict(arguments(full))

        return AcceptReflector(unchanged, results, full_query, "unchanged")
    if callable(choice):
        return AcceptReflector(choice, results, full_query, getattr(choice, "__name__", "callable"))
    if choice != "scenario":
        raise ConfigError(f"reflector: expected 'scenario', 'unchanged' or a callable, got {choice!r}")
    if not isinstance(scenario_rule, HeuristicReflectorConfig):
        kind = getattr(scenario_rule, "kind", "?")
        raise ConfigError(f"reflector.kind: {kind!r} is not available live (heuristic, 'unchanged' or a callable)")
    if judge is None:
        raise ConfigError(
            "reflector.kind: 'heuristic' re-scores each result's top hit under the full query: pass judge= "
            "(e.g. a BM25Tool), or reflector='unchanged' or a callable"
        )
    return scenario_rule.on(HitEvidence(results, judge, full_query, scenario_rule.coverage))
