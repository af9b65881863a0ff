"""The trace fold names event kinds as strings (folding builds no model): each must be a
kind of the trace models, and a table replay must not build them."""

from __future__ import annotations

import subprocess
import sys
from typing import get_args

from streamrag.engine.trace_events import TraceEvent
from streamrag.simulator.replay import fold


def test_every_kind_the_fold_handles_is_a_trace_models_kind() -> None:
    kinds = {m.model_fields["kind"].default for m in get_args(get_args(TraceEvent)[0])}
    handled = set(fold._STREAMING) | set(fold._BASELINE) | set(fold._MARKS)
    assert handled <= kinds, handled - kinds


def test_a_table_replay_builds_no_trace_event_model(tmp_path) -> None:
    # Writing a trace needs no model (31 classes); reading or validating one imports them.
    from streamrag.cli import main

    table = str(tmp_path / "gen.csv")
    assert main(["-q", "generate", table, "--table", "--questions", "20", "--seed", "1"]) == 0
    argv = ["-q", "simulate", "--table", table, "--scenario", "paper_rq3", "--out", str(tmp_path / "run")]
    code = f"import sys\nfrom streamrag.cli import main\nrc = main({argv!r})\nprint(rc, 'streamrag.engine.trace_events' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split()
    assert out[-2:] == ["0", "False"]
    assert (tmp_path / "run" / "trace.jsonl").stat().st_size > 0
