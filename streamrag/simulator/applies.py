"""Where each setting applies: a setting a run would not read is refused, never recorded.

A scenario section (or one of its fields) declares the inputs and the routes that read
it (:data:`DECLARED`, the most specific prefix wins):

- inputs — ``data`` (a CRAG-style file, analyzed by the run: ``simulate DATA``),
  ``table`` (a stabilization table, analyzed already), ``generated`` (questions drawn
  with their t* and synthetic evidence);
- routes — ``replay`` (every question alone on unlimited capacity: the closed form or the
  event engine) and ``load`` (sessions sharing ``[resources]``: a scenario with ``[load]``).

:func:`refusals` compares a resolved scenario with the defaults: every value that differs
in a section the run does not read is refused in one line naming the setting and why
(``simulate``, ``predict`` and ``sweep`` call it before any work). A value equal to its
default is what the run does anyway (a replay runs on unlimited capacity with the
``always`` policy), so the built-in scenarios, which spell out their defaults, pass.
``[resources]`` applies everywhere: a question replayed alone on finite capacity queues
its own calls (the event engine's route).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from streamrag.base.errors import ConfigError
from streamrag.simulator.scenario import ResolvedScenario, Scenario

InputKind = Literal["data", "table", "generated"]
Route = Literal["replay", "load"]
INPUT_KINDS: tuple[InputKind, ...] = ("data", "table", "generated")
ROUTES: tuple[Route, ...] = ("replay", "load")


@dataclass(frozen=True, slots=True)
class Applies:
    """Setting paths under ``prefix`` are read by these inputs and routes (None: all)."""

    prefix: str
    inputs: frozenset[InputKind] | None
    routes: frozenset[Route] | None
    why: str
    """Why the others do not read it, and what to do instead."""

    def covers(self, input_kind: InputKind, route: Route) -> bool:
        return (self.inputs is None or input_kind in self.inputs) and (self.routes is None or route in self.routes)


_ANALYZED = (
    "the questions of a table or generated input were analyzed already (their t*, rankings and evidence are "
    "fixed): analyze the data again with this setting, or simulate the data file"
)
DECLARED: tuple[Applies, ...] = (
    Applies(
        "data.k",
        frozenset({"data", "table"}),
        None,
        "generated questions carry their own top-k rankings; k applies to a data file or a table's evidence",
    ),
    Applies("data", frozenset({"data"}), None, _ANALYZED),
    Applies(
        "reflector.threshold",
        frozenset({"data"}),
        None,
        "a calibrated threshold is set from the analysis' final-query scores of every question, which a table or "
        "generated questions do not carry: simulate the data file, or set reflector.score_threshold (or "
        "cosine_threshold) to the value analyze --compare-retrievers records",
    ),
    Applies(
        "endpoint",
        None,
        frozenset({"replay"}),
        "a load run does not put the replies to an endpointer's false cut-offs on the shared capacity yet: replay "
        "the questions alone (no [load]), or end turns with input.end_of_turn_ms",
    ),
    Applies(
        "compute",
        None,
        frozenset({"replay"}),
        "the compute columns (calls and tokens in) are written beside an endpointer's turn parts, which a load run "
        "does not put on the shared capacity yet: replay the questions alone (no [load])",
    ),
    Applies(
        "policy",
        None,
        frozenset({"load"}),
        "a speculation policy decides under shared load; a question replayed alone takes every fire "
        "(a scenario with [load], e.g. --scenario load)",
    ),
)
"""Where settings apply, most specific prefix first; a path no prefix covers applies everywhere."""


def declaration(path: str) -> Applies | None:
    """The declaration that covers setting ``path`` (None: it applies everywhere)."""
    return next((d for d in DECLARED if path == d.prefix or path.startswith(d.prefix + ".")), None)


def _diff(mine: Any, theirs: Any, prefix: str) -> dict[str, Any]:
    """Paths under ``prefix`` where ``mine`` differs from ``theirs``; a table of another
    ``kind`` counts whole, by its kind."""
    if isinstance(mine, dict) and not isinstance(theirs, dict) and "kind" in mine:
        return {f"{prefix}.kind": mine["kind"]}  # a table the default leaves out (data.asr)
    if not (isinstance(mine, dict) and isinstance(theirs, dict)):
        return {} if mine == theirs else {prefix: mine}
    if mine.get("kind") != theirs.get("kind"):
        return {f"{prefix}.kind": mine.get("kind")}
    out: dict[str, Any] = {}
    for key, value in mine.items():
        out.update(_diff(value, theirs.get(key), f"{prefix}.{key}"))
    return out


def changed_settings(scenario: Scenario) -> dict[str, Any]:
    """The declared sections' settings whose value differs from the default scenario's."""
    given = scenario.model_dump(mode="json")
    default = Scenario().model_dump(mode="json")
    out: dict[str, Any] = {}
    for section in sorted({d.prefix.split(".")[0] for d in DECLARED}):
        out.update(_diff(given.get(section), default.get(section), section))
    return out


_NOUNS: dict[InputKind, str] = {"data": "a data file", "table": "a table", "generated": "generated questions"}


def refusals(rs: ResolvedScenario, input_kind: InputKind, *, ignore: tuple[str, ...] = ()) -> list[str]:
    """One line per setting of ``rs`` the run would not read (module docstring);
    ``ignore``: paths the caller sets itself (a sweep's split)."""
    route: Route = "load" if rs.scenario.load is not None else "replay"
    out = []
    for path, value in changed_settings(rs.scenario).items():
        found = declaration(path)
        if path in ignore or found is None or found.covers(input_kind, route):
            continue
        run = "a load run" if route == "load" else "a replay"
        setting = f"{path.removesuffix('.kind')} (kind {value!r})" if path.endswith(".kind") else f"{path} = {value!r}"
        out.append(f"{setting} does not apply to {run} of {_NOUNS[input_kind]}: {found.why}")
    return out


def refuse_inapplicable(rs: ResolvedScenario, input_kind: InputKind, *, ignore: tuple[str, ...] = ()) -> None:
    """ConfigError naming the first setting the run would not read (:func:`refusals`)."""
    lines = refusals(rs, input_kind, ignore=ignore)
    if lines:
        more = f" (and {len(lines) - 1} more)" if len(lines) > 1 else ""
        raise ConfigError(lines[0] + more)
