"""``streamrag.advise(...)``: the situation in, one row per policy and a recommendation out.

Per G/F end (:func:`~streamrag.advice.situation.latency_ends`): the frontier sweep
(:mod:`~streamrag.advice.sweep_end`), then per policy its best operating point within the
budget, its p50/p90 users and its behaviour under load (:mod:`~streamrag.advice.rows`).
Then the recommendation (:mod:`~streamrag.advice.recommend`) and the files
(:mod:`~streamrag.advice.output`). Nothing here computes a simulation rule: every number is
the frontier's, simulate's, ``predict``'s or the load simulation's at the same settings.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from streamrag.base.system.outputs import check_out_dir

from .result import Advice
from .situation import Situation, latency_ends, read_situation, tool_stages


def advise(
    situation: Situation | Mapping[str, Any] | str | os.PathLike[str],
    out: str | os.PathLike[str],
    *,
    jobs: int = 1,
    scheduler: str | None = None,
    on_progress: Any = None,
) -> Advice:
    """Answer ``situation`` (a :class:`~streamrag.advice.situation.Situation`, a mapping of
    its keys, or a situation TOML file) into the folder ``out``; ``jobs`` processes run
    each frontier sweep, or a Dask ``scheduler`` (its address) does. ``on_progress(done,
    total)`` counts policies answered."""
    import pandas as pd

    from streamrag.sweep.executors import check_parallelism

    from .output import write_advice
    from .recommend import recommend, sentence, verdict
    from .rows import policy_rows
    from .sweep_end import run_end

    check_parallelism(jobs, scheduler)
    if isinstance(situation, Situation):
        sit = situation
    elif isinstance(situation, Mapping):
        sit = read_situation(None, dict(situation))
    else:
        sit = read_situation(situation, {})
    folder = check_out_dir(out)
    folder.mkdir(parents=True, exist_ok=True)
    tools, tool_source = tool_stages(sit, folder)
    ends = latency_ends(sit, tools)
    rows: list[dict[str, Any]] = []
    runs = []
    done = [0]
    sets = sit.inputs
    cases = [(questions, end) for questions in sets for end in ends]
    for i, (questions, end) in enumerate(cases):
        where = folder / "runs" / (end.name if len(sets) == 1 else f"{i // len(ends) + 1}-{end.name}")
        # Absolute: the grid that names it lives in another folder, and a relative file
        # setting is read relative to the grid's folder (a relative --out named it twice).
        profile = (folder / "latency" / f"{end.name}.toml").resolve()
        run = run_end(sit, end, where, profile, questions=questions, jobs=jobs, scheduler=scheduler)
        runs.append(run)
        total = len(cases) * max(1, run.frontier.points["policy"].nunique() - 2)  # less the null and the bound

        def step(total: int = total) -> None:
            done[0] += 1
            if on_progress is not None:
                on_progress(done[0], total)

        rows += policy_rows(run, sit, on_row=step)
    for row in rows:
        row["verdict"] = verdict(row)
    names = [(questions, e.name) for questions, e in cases]
    rec = recommend(rows, names)
    answer = sentence(rec, rows, names)
    frame = pd.DataFrame(rows)
    described = [{"end": e.name, "assumes": e.assumes, "tool": tool_source} for e in ends]
    advice = Advice(sit, frame, rec, answer, described)
    files = write_advice(folder, advice, runs)
    return Advice(sit, frame, rec, answer, described, files)
