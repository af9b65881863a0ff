"""Every setting applies or is refused (streamrag.simulator.applies): a test generated from
the declarations, crossing input kinds × routes × declared settings."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest

from streamrag.cli import main
from streamrag.simulator.applies import DECLARED, INPUT_KINDS, ROUTES, declaration, refusals
from streamrag.simulator.scenario import load_scenario

SAMPLES = {
    "data.k": ["data.k=1"],
    "data": ["data.grounding=relaxed"],
    "policy": ["policy.kind=admission"],
    "endpoint": ["endpoint.kind=detector", "endpoint.delay_ms=500"],
    "reflector.threshold": ["reflector.threshold=calibrated"],
    "compute": ["compute.prompt_tokens=300"],
}
"""A value away from its default for every declared prefix (a new declaration needs one)."""
NEEDS = {"compute": ["endpoint.kind=detector", "endpoint.delay_ms=500"]}
"""What a sample needs beside it to be a valid scenario (set in both arms of a comparison)."""
LOAD = ["load.arrivals.n_sessions=60", "load.warmup_s=0", "load.reference_sessions=10"]
"""A small load run on the built-in ``load`` scenario."""


def test_every_declaration_has_a_sample_and_the_samples_are_covered_by_it() -> None:
    assert set(SAMPLES) == {d.prefix for d in DECLARED}
    for prefix, sample in SAMPLES.items():
        found = declaration(_path(sample))
        assert found is not None and found.prefix == prefix


def _path(sample: list[str]) -> str:
    return sample[0].partition("=")[0]


CASES = list(itertools.product(SAMPLES, INPUT_KINDS, ROUTES))


@pytest.mark.parametrize(("prefix", "input_kind", "route"), CASES)
def test_a_setting_is_refused_exactly_where_it_is_declared_not_to_apply(prefix: str, input_kind: str, route: str) -> None:
    scenario = "load" if route == "load" else "paper_rq3"
    rs = load_scenario(scenario, [*NEEDS.get(prefix, []), *SAMPLES[prefix]])
    found = declaration(_path(SAMPLES[prefix]))
    assert found is not None
    own = _path(SAMPLES[prefix]).removesuffix(".kind")
    lines = [line for line in refusals(rs, input_kind) if line.startswith(own)]  # type: ignore[arg-type]
    if found.covers(input_kind, route):  # type: ignore[arg-type]
        assert lines == []
    else:
        assert len(lines) == 1 and lines[0].startswith(_path(SAMPLES[prefix]).removesuffix(".kind"))
        assert "does not apply" in lines[0] and found.why in lines[0]


def test_the_built_in_scenarios_set_nothing_they_would_not_read() -> None:
    from streamrag.simulator.scenario import list_scenarios

    for name in list_scenarios():
        rs = load_scenario(name)
        for input_kind in INPUT_KINDS:
            assert refusals(rs, input_kind) == [], (name, input_kind)


# --- through the commands: refused in one line, or applied and visible -----------------


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    import streamrag

    root = tmp_path_factory.mktemp("applies")
    table = root / "t.csv"
    assert main(["generate", str(table), "--table", "--questions", "60", "--seed", "1", "-q"]) == 0
    return {"data": Path(streamrag.demo_path()), "table": table}


def _simulate(inputs: dict[str, Path], input_kind: str, route: str, sets: list[str], out: Path) -> int:
    source = [str(inputs["data"])] if input_kind == "data" else ["--table", str(inputs["table"])]
    scenario = (
        ["--scenario", "load", *(a for s in LOAD for a in ("--set", s))] if route == "load" else ["--scenario", "paper_rq3"]
    )
    extra = [a for s in sets for a in ("--set", s)]
    # retrieved_gold: the gold rule and k move which questions a load run asks
    population = "retrieved_gold" if route == "load" else "all"
    return main(["simulate", *source, *scenario, "--set", f"select.population={population}", *extra, "--out", str(out), "-q"])


def _result(out: Path) -> bytes:
    return (out / ("sessions.csv" if (out / "sessions.csv").exists() else "results.csv")).read_bytes()


_BM25_ITSELF = "BM25 calibrated against itself keeps the anchor's threshold (streamrag.base.threshold): the same run"
NO_OP: dict[tuple[str, str, str], str] = {
    ("reflector.threshold", "data", "replay"): _BM25_ITSELF,
    ("reflector.threshold", "data", "load"): _BM25_ITSELF,
}
"""Covered combinations where the sample value changes nothing on these inputs, and why
(with population ``retrieved_gold`` even k moves which questions a load run asks)."""


@pytest.mark.parametrize(
    ("prefix", "input_kind", "route"),
    [c for c in CASES if c[1] in ("data", "table")],  # the commands' inputs (a sweep's generated: below)
)
def test_through_simulate_a_setting_changes_the_result_or_is_refused(
    inputs: dict[str, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str], prefix: str, input_kind: str, route: str
) -> None:
    found = declaration(_path(SAMPLES[prefix]))
    assert found is not None
    needs = NEEDS.get(prefix, [])
    rc = _simulate(inputs, input_kind, route, [*needs, *SAMPLES[prefix]], tmp_path / "with")
    err = capsys.readouterr().err.strip().splitlines()
    if not found.covers(input_kind, route):  # type: ignore[arg-type]
        assert rc == 1 and len(err) == 1 and "does not apply" in err[0]
        assert not (tmp_path / "with").exists() or not any((tmp_path / "with").iterdir())
        return
    assert rc == 0
    assert _simulate(inputs, input_kind, route, needs, tmp_path / "without") == 0
    changed = _result(tmp_path / "with") != _result(tmp_path / "without")
    assert changed is ((prefix, input_kind, route) not in NO_OP)


def test_the_revision_model_on_a_table_is_refused_not_recorded(inputs: dict[str, Path], tmp_path: Path, capsys) -> None:
    # The reported case: data.asr on a table gave byte-identical results while the
    # manifest and summary recorded the model as applied.
    rc = _simulate(inputs, "table", "replay", ["data.asr.p=0.9", "data.asr.r=3"], tmp_path / "a")
    err = capsys.readouterr().err.strip()
    assert rc == 1 and err.startswith("streamrag: error: data.asr (kind 'model') does not apply to a replay of a table")
    assert not (tmp_path / "a" / "manifest.json").exists()


def test_predict_and_sweep_refuse_by_the_same_declarations(inputs: dict[str, Path], tmp_path: Path, capsys) -> None:
    rc = main(["predict", "--table", str(inputs["table"]), "--scenario", "paper_rq3", "--set", "policy.kind=admission"])
    assert rc == 1 and "policy (kind 'admission') does not apply" in capsys.readouterr().err
    grid = tmp_path / "g.toml"
    grid.write_text(
        'name = "g"\nkind = "simulate"\ninput = "generated:20:seed=0"\nscenario = "paper_rq3"\n'
        '[axes]\n"policy.max_queue" = [1, 2]\n[base]\n"policy.kind" = "admission"\n',
        encoding="utf-8",
    )
    assert main(["sweep", str(grid), "--out", str(tmp_path / "run"), "-q"]) == 1
    assert "policy (kind 'admission') does not apply to a replay of generated questions" in capsys.readouterr().err


def test_the_python_api_refuses_by_the_same_declarations(inputs: dict[str, Path]) -> None:
    import streamrag
    from streamrag.base.errors import ConfigError

    with pytest.raises(ConfigError, match=r"data.asr \(kind 'model'\) does not apply to a replay of a table"):
        streamrag.simulate(str(inputs["table"]), "paper_rq3", set=["data.asr.p=0.9"])


@pytest.mark.parametrize(("input_kind", "route"), list(itertools.product(("data", "table"), ROUTES)))
@pytest.mark.parametrize("ranking", ["tool", "local"])
def test_a_rankings_price_applies_on_every_input_and_route(
    inputs: dict[str, Path], tmp_path: Path, input_kind: str, route: str, ranking: str
) -> None:
    # pipeline.ranking is declared nowhere, so it applies everywhere: priced, the same
    # trigger on the same input and route gives another result, and a replay counts it.
    stable = ["trigger.kind=stable"]
    priced = [*stable, f"pipeline.ranking={ranking}", *(["pipeline.local_rank_ms=200"] if ranking == "local" else [])]
    assert declaration("pipeline.ranking") is None
    assert _simulate(inputs, input_kind, route, priced, tmp_path / "with") == 0
    assert _simulate(inputs, input_kind, route, stable, tmp_path / "without") == 0
    assert _result(tmp_path / "with") != _result(tmp_path / "without")
    if route == "replay":
        assert "rankings" in (tmp_path / "with" / "results.csv").read_text(encoding="utf-8").splitlines()[0].split(",")
