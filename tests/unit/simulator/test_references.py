"""The frameworks' reference policies (issue 46): each a file of settings with a source per
value, applied by ``--reference`` before ``--set``, recorded as what ran."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd
import pytest

from streamrag.base.errors import ConfigError
from streamrag.cli import main
from streamrag.commands._common import REFERENCES
from streamrag.data.demo import demo_path
from streamrag.simulator.reference import list_references, read_reference, reference_overrides
from streamrag.simulator.scenario import load_scenario

DEMO = str(demo_path())


def test_the_built_in_references_are_the_four_frameworks_and_each_value_has_a_source() -> None:
    assert list_references() == ["deepgram_flux", "livekit", "openai_server_vad", "pipecat"]
    assert list(REFERENCES) == list_references()  # the copy --help names them from
    for name in list_references():
        tables = read_reference(name)
        for key in tables["settings"]:
            assert key.endswith(".kind") or len(tables["sources"][key]) > 20, (name, key)
        rs = load_scenario("paper_rq3", reference_overrides(name))
        assert rs.scenario.endpoint.kind in ("silence", "detector")


def test_a_reference_is_applied_before_the_users_set_and_the_manifest_reruns_it_without_the_file(tmp_path, capsys) -> None:
    out = tmp_path / "r"
    args = ["simulate", DEMO, "--scenario", "paper_rq3", "--reference", "livekit", "--set", "endpoint.delay_ms=700"]
    assert main([*args, "--out", str(out), "-q"]) == 0
    manifest = json.loads((out / "manifest.json").read_text())
    command = manifest["command"]
    assert "--reference" not in command and 'endpoint.kind="detector"' in command
    assert command.index("endpoint.delay_ms=543") < command.index("endpoint.delay_ms=700")  # yours win
    results = pd.read_csv(out / "results.csv")
    assert set(results["confirm_ms"].dropna()) == {700.0}
    again = tmp_path / "again"
    rerun = list(command[1:])
    rerun[rerun.index("--out") + 1] = str(again)
    assert main([*rerun, "-q"]) == 0
    assert (again / "results.csv").read_bytes() == (out / "results.csv").read_bytes()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            'description = "x"\n[settings]\n"endpoint.kind" = "silence"\n"endpoint.silence_ms" = 300\n',
            "sources.endpoint.silence_ms: missing",
        ),
        ('[settings]\n"endpoint.kind" = "fixed"\n', "description: missing"),
        ('description = "x"\n[settings]\n"endpoint.kind" = "silence"\n', "--reference"),
        ('description = "x"\nextra = 1\n[settings]\n"a.b" = 1\n', "unknown key 'extra'"),
    ],
)
def test_a_bad_reference_file_is_one_line_naming_it(tmp_path, text: str, message: str) -> None:
    path = tmp_path / "mine.toml"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(ConfigError, match=message) as caught:
        reference_overrides(str(path))
    assert str(path) in str(caught.value)


def test_an_unknown_reference_lists_the_built_in_ones(capsys) -> None:
    with pytest.raises(ConfigError, match="built-in: deepgram_flux, livekit, openai_server_vad, pipecat"):
        reference_overrides("vapi")


def test_a_reference_runs_through_the_frontier(tmp_path: Path) -> None:
    grid = tmp_path / "g.toml"
    grid.write_text(
        'name = "g"\nkind = "simulate"\ninput = "generated:20:seed=2"\nscenario = "frontier"\n[axes.policy]\n'
        'none = { "trigger.kind" = "none" }\ninterval_words = { "trigger.kind" = "interval", "trigger.words" = [2, 4] }\n',
        encoding="utf-8",
    )
    out = tmp_path / "f"
    assert main(["frontier", str(grid), "--reference", "deepgram_flux", "--out", str(out), "--bootstrap", "50", "-q"]) == 0
    summaries = [json.loads(p.read_text()) for p in sorted((out / "points").glob("*/summary.json"))]
    assert len(summaries) == 3 and all(s["endpoint"]["eager_restarts_per_100_turns"] is not None for s in summaries)
    assert '"endpoint.eager_ms" = 100' in (out / "grid.toml").read_text()  # the run's grid reruns it
    sweep = pd.read_csv(out / "sweep.csv")
    assert sweep["endpoint.extra_llm_share"].notna().all() and sweep["endpoint.false_cutoffs_per_100_turns"].notna().all()


def test_advise_takes_a_reference_predicts_and_loads_nothing_it_cannot_and_the_speculators_file_has_no_endpointer(
    tmp_path: Path,
) -> None:
    out = tmp_path / "a"
    situation = ["--tool-p50-ms", "800", "--tool-p90-ms", "2000", "--G-ms", "590", "--F-ms", "2520", "--turns-per-s", "2"]
    argv = ["advise", *situation, "--tool-workers", "4", "--input", "generated:20", "--reference", "openai_server_vad"]
    assert main(["--quiet", *argv, "--out", str(out)]) == 0
    rows = pd.read_csv(out / "advice.csv")
    placed = rows[rows["no_point"].isna()]
    assert len(placed) and placed["break_even.median_saved.offered_load"].isna().all()  # not predicted ...
    assert "break-even not predicted (endpoint.kind: predict's model" in json.loads((out / "advice.json").read_text())["answer"]
    assert placed["at_load.source"].str.startswith("not simulated: a load run does not put an endpointer").all()
    assert placed["endpoint.extra_llm_share"].notna().all() and placed["endpoint.false_cutoffs_per_100_turns"].notna().all()
    assert "endpoint" not in (out / "scenario.toml").read_text()  # live, the framework ends the turn
    assert 'kind = "silence"' in (out / "load_scenario.toml").read_text()
    import streamrag
    from streamrag.engine.clock import RealClock
    from streamrag.live.backends import BM25Tool

    clock = RealClock()
    streamrag.Speculator(BM25Tool(["a b c"], clock), str(out / "scenario.toml"), clock=clock)  # no endpointer to refuse
