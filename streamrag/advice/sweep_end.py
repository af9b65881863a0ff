"""One end of the G/F range through the frontier: its grid, its sweep, its frontier.

The grid is the built-in ``frontier`` grid (every policy over its knob, one harness) with
the situation in its ``[base]``: the end's latency profile (written beside the run), the
words per second and the seed; and the situation's input. The grid's text is kept in the
run folder (``grid.toml``), so ``streamrag frontier RUN/grid.toml --out X`` recomputes the
same points (a test does).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from streamrag.base.config.bundled import grids_dir
from streamrag.base.config.tomlfile import dumps_toml, parse_toml
from streamrag.calibration.profile import write_profile
from streamrag.simulator.scenario import ResolvedScenario
from streamrag.sweep.frontier.operating import Frontier, compute_frontier
from streamrag.sweep.grid import Grid, grid_from_tables, with_sets
from streamrag.sweep.inputs import InputSpec, parse_input
from streamrag.sweep.resumable import SweepResult, point_dir, run_sweep

from .situation import LatencyEnd, Situation

FRONTIER_GRID = "frontier"
N_BOOT = 1000
"""Bootstrap resamples over questions (the frontier's default)."""


def input_source(spec: InputSpec) -> str:
    """An input spec as a source string with absolute paths (the grid file's ``input``)."""
    if spec.kind in ("table", "data"):
        return f"{spec.kind}:{spec.path}"
    if spec.kind == "generated":
        return f"generated:{spec.n_questions}:seed={spec.seed}"
    return spec.source


def end_profile(end: LatencyEnd, path: Path) -> Path:
    """The end's three stages as a profile file (``latency.profile`` of the grid)."""
    stages = {s: end.stages[s].model_dump(mode="json", exclude_none=True) for s in ("G", "L", "F")}
    tables = {"name": f"advise-{end.name}", "description": end.assumes, "source": "streamrag advise", "stages": stages}
    path.parent.mkdir(parents=True, exist_ok=True)
    write_profile(path, tables)
    return path


RANKED_POLICIES = ("learned", "learned_rearm")
"""The built-in grid's policies that rank each word prefix heard (a deployable ``learned``
trigger): advise prices their rankings (:mod:`~streamrag.pipeline.ranking_cost`)."""


def priced_rankings(text: str, local_rank_ms: float) -> str:
    """The frontier grid with each of :data:`RANKED_POLICIES` replaced by two: ``P_tool``
    (a search per word on the tool) and ``P_local`` (a local index, ``local_rank_ms`` per word)."""
    for policy in RANKED_POLICIES:
        pattern = rf"^{policy} = \{{(.*)\}}$"
        found = re.search(pattern, text, flags=re.M)
        if found is None:  # the built-in grid changed shape: fail loudly, not silently
            raise RuntimeError(f"the built-in frontier grid has no line '{policy} = {{ ... }}'")
        inner = found.group(1).strip()
        local = json.dumps(local_rank_ms)
        lines = (
            f'{policy}_tool = {{ {inner}, "pipeline.ranking" = "tool" }}\n'
            f'{policy}_local = {{ {inner}, "pipeline.ranking" = "local", "pipeline.local_rank_ms" = {local} }}'
        )
        text = text[: found.start()] + lines + text[found.end() :]
    return text


def grid_text(situation: Situation, profile: Path, source: str, end: LatencyEnd) -> str:
    """The built-in frontier grid's text with the situation (module docstring)."""
    text = (grids_dir() / f"{FRONTIER_GRID}.toml").read_text(encoding="utf-8")
    head = {
        "name": f"advise-{end.name}",
        "description": f"streamrag advise: every policy over its knob; {end.assumes}",
        "input": source,
    }
    for key, value in head.items():
        line = f"{key} = {json.dumps(value)}"
        text, n = re.subn(rf"^{key} = .*$", line.replace("\\", "\\\\"), text, count=1, flags=re.M)
        if n != 1:  # the built-in grid changed shape: fail loudly, not silently
            raise RuntimeError(f"the built-in frontier grid has no line '{key} = ...'")
    text = priced_rankings(text, situation.local_rank_ms)
    base = {"latency.profile": str(profile), "input.delta_wps": situation.words_per_s, "seed": situation.seed}
    return text.rstrip("\n") + "\n\n# streamrag advise: the situation\n[base]\n" + dumps_toml(base)


@dataclass(frozen=True, slots=True)
class EndRun:
    """One end's finished sweep and frontier."""

    end: LatencyEnd
    result: SweepResult
    frontier: Frontier
    folder: Path
    question_set: str
    """The question set (the situation's ``input`` it ran)."""

    def settings(self, key: str) -> ResolvedScenario:
        """The scenario a point ran (resolved)."""
        return next(p.job.settings for p in self.result.plan.runnable if p.key == key)

    def summary(self, key: str) -> dict[str, Any]:
        """The point's ``summary.json`` (simulate's)."""
        data: dict[str, Any] = json.loads((point_dir(self.result.out, key) / "summary.json").read_text(encoding="utf-8"))
        return data

    def questions(self, key: str) -> list[Any]:
        """The questions the point replayed (as the frontier selects them)."""
        from streamrag.simulator.question_select import select_for
        from streamrag.sweep.inputs import ref_analysis

        point = next(p for p in self.result.plan.runnable if p.key == key)
        selected = select_for(
            self.result.plan.inputs.questions(ref_analysis(point.job.input_ref)), point.job.settings.scenario.selection()
        )
        return list(selected.questions)


def run_end(
    situation: Situation,
    end: LatencyEnd,
    folder: Path,
    profile: Path,
    *,
    questions: str,
    jobs: int,
    scheduler: str | None = None,
    on_point: Any = None,
) -> EndRun:
    """Sweep the frontier grid for one end on the question set ``questions`` into
    ``folder`` (resumed when it ran before), its three stages written as the profile file
    ``profile``, the situation's ``settings`` in its ``[base]``; ``scheduler``: a Dask
    scheduler's address."""
    spec = parse_input(questions, base_dir=Path.cwd())
    origin = str(folder / "grid.toml")
    text = grid_text(situation, end_profile(end, profile), input_source(spec), end)
    sets = (*situation.input_settings, *situation.settings)
    text, tables = with_sets(text, parse_toml(text, "advise grid"), sets, origin)
    grid: Grid = grid_from_tables(tables, text=text, origin=origin, base_dir=folder)
    cache = None
    if grid.input.kind == "data":
        from streamrag.data.chunk_cache import ChunkCache, default_cache_dir

        cache = ChunkCache(default_cache_dir())
    grid = grid.model_copy(update={"output": grid.output.model_copy(update={"figures": False})})
    command = ["streamrag", "frontier", str(folder / "grid.toml"), "--out", str(folder), "--seed", str(situation.seed)]
    if scheduler:  # the settings are in grid.toml already
        command += ["--scheduler", scheduler]
    result = run_sweep(grid, folder, resume=True, jobs=jobs, scheduler=scheduler, cache=cache, on_point=on_point, command=command)
    frontier = compute_frontier(result, n_boot=N_BOOT, seed=situation.seed, jobs=jobs)
    return EndRun(end, result, frontier, folder, questions)
