"""The floor of ``predict`` under load: what any run of its load model must do before any
queue is solved — start, import, read the table, and replay every question's nominal
timeline through the streaming arm's machine at the model's grid of waits
(:data:`streamrag.simulator.predict.load._WAIT_GRID_MS`, plus the unloaded timeline).

Run by ``bench_predict.py`` as a child process, beside ``streamrag predict``:
``python benchmarks/_predict_floor.py TABLE.csv [--set KEY=VALUE ...]`` (scenario ``load``).
Prints the replays it made.
"""

from __future__ import annotations

import argparse

from streamrag.simulator.applies import refuse_inapplicable
from streamrag.simulator.predict.load import _WAIT_GRID_MS, LOAD_ATOMS
from streamrag.simulator.predict.saving import call_latency
from streamrag.simulator.predict.timelines import TimelineCache
from streamrag.simulator.question_select import load_selected
from streamrag.simulator.scenario import load_scenario


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("table")
    ap.add_argument("--set", dest="sets", action="append", default=[])
    args = ap.parse_args()
    rs = load_scenario("load", args.sets)
    refuse_inapplicable(rs, "table")
    qs = load_selected(rs.scenario, data=None, table=args.table, evidence=None, ids=None, cache=None, jobs=1)
    cache = TimelineCache(qs.questions, rs)
    x = call_latency(rs, LOAD_ATOMS)
    for wait_ms in _WAIT_GRID_MS:
        cache.at(x.mean_ms + float(wait_ms))
    print(f"{cache.n_replayed} replays of {len(qs.questions)} questions at {len(_WAIT_GRID_MS)} grid waits")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
