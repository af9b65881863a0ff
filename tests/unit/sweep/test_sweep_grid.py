"""Grid files: shape, expansion, stable keys, and one-line errors before any work."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from streamrag.base.errors import ConfigError
from streamrag.cli import main
from streamrag.sweep import list_grids, load_grid, plan, point_key
from streamrag.sweep.inputs import PreparedInputs

SMALL = "generated:40:seed=3"


def _grid(tmp_path: Path, body: str, name: str = "g.toml") -> Path:
    path = tmp_path / name
    path.write_text(textwrap.dedent(body), encoding="utf-8")
    return path


def _plan(grid):
    return plan(grid, PreparedInputs(grid.input))


def test_builtin_grids_have_the_documented_sizes():
    assert set(list_grids()) >= {"paper_rq2", "paper_rq3", "triggers", "topk"}
    sizes = {name: load_grid(name).n_points for name in ("paper_rq2", "paper_rq3", "triggers", "topk")}
    assert sizes == {"paper_rq2": 36, "paper_rq3": 2, "triggers": 7 * 4 * 4, "topk": 6}
    rq2 = load_grid("paper_rq2")
    assert [(a.name, [v.value for v in a.values]) for a in rq2.axes] == [
        ("L_ms", [100, 300, 600, 1000]), ("delta_wps", [2.0, 3.0, 4.0]), ("theta", [0.5, 0.8, 1.0]),
    ]  # fmt: skip
    assert load_grid("topk").input.kind == "demo"


def test_triggers_on_a_table_skip_the_policies_that_need_rankings(tmp_path):
    from _simhelpers import small_table

    table = tmp_path / "bare.csv"  # no prefixes.parquet beside it: only t* is known
    small_table(40).to_csv(table, index=False)
    assert len(_plan(load_grid("triggers", input=SMALL)).runnable) == 112  # generated: synthetic evidence
    swept = _plan(load_grid("triggers", input=f"table:{table}"))
    assert len(swept.points) == 112 and len(swept.runnable) == 80
    assert {p.values["trigger"] for p in swept.skipped} == {"replace_500ms", "stable_2w"}
    assert all("needs per-prefix evidence" in p.skipped for p in swept.skipped)
    first = swept.points[0]  # first axis outermost, variants innermost
    assert first.values == {"L_ms": 300.0, "delta_wps": 2.0, "trigger": "interval_3w"}
    assert [p.values["trigger"] for p in swept.points[:7]] == [
        "interval_3w", "interval_1s", "replace_500ms", "stable_2w", "every_word", "oracle", "none",
    ]  # fmt: skip
    # A variant that sets a kind starts that section afresh: interval_1s has no `words`.
    one_s = swept.points[1].job.settings.scenario.trigger
    assert (one_s.kind, one_s.words, one_s.seconds) == ("interval", None, 1.0)
    assert swept.points[0].job.settings.scenario.select.population == "all"


def test_keys_are_stable_hashes_of_resolved_settings(tmp_path):
    body = """
        kind = "simulate"
        input = "{input}"
        [axes]
        "latency.L_ms" = {Ls}
        "input.delta_wps" = [2.0, 3.0]
    """
    a = _plan(load_grid(_grid(tmp_path, body.format(input=SMALL, Ls="[600, 1000]"), "a.toml")))
    again = _plan(load_grid(_grid(tmp_path, body.format(input=SMALL, Ls="[600, 1000]"), "a.toml")))
    assert [p.key for p in a.points] == [p.key for p in again.points]
    assert len({p.key for p in a.points}) == 4 and all(len(p.key) == 16 for p in a.points)
    # 600 and 600.0 are one setting; extending an axis keeps the existing keys.
    extended = _plan(load_grid(_grid(tmp_path, body.format(input=SMALL, Ls="[600.0, 1000.0, 2500]"), "b.toml")))
    assert {p.key for p in a.points} < {p.key for p in extended.points}
    # Reordering the axes reorders the points, not their keys.
    swapped = body.replace('"latency.L_ms" = {Ls}\n        "input.delta_wps" = [2.0, 3.0]',
                           '"input.delta_wps" = [2.0, 3.0]\n        "latency.L_ms" = {Ls}')  # fmt: skip
    b = _plan(load_grid(_grid(tmp_path, swapped.format(input=SMALL, Ls="[600, 1000]"), "c.toml")))
    assert sorted(p.key for p in b.points) == sorted(p.key for p in a.points)
    assert [p.key for p in b.points] != [p.key for p in a.points]
    # Another input (content) gives other keys.
    other = _plan(load_grid(_grid(tmp_path, body.format(input="generated:40:seed=4", Ls="[600, 1000]"), "d.toml")))
    assert not {p.key for p in other.points} & {p.key for p in a.points}
    fp = {"kind": "generated", "sha256": "0" * 64, "split": None, "limit": None}
    assert point_key("streamable", fp, {"L_ms": 600.0}) == point_key("streamable", dict(fp), {"L_ms": 600.0})


def test_nested_and_quoted_dotted_keys_mean_the_same(tmp_path):
    quoted = _grid(tmp_path, f"""
        kind = "simulate"
        input = "{SMALL}"
        [axes]
        "latency.L_ms" = [600, 1000]
        [axes.policy]
        oracle = {{ "trigger.kind" = "oracle" }}
    """, "q.toml")  # fmt: skip
    nested = _grid(tmp_path, f"""
        kind = "simulate"
        input = "{SMALL}"
        [axes]
        latency.L_ms = [600, 1000]
        [axes.policy.oracle]
        trigger = {{ kind = "oracle" }}
    """, "n.toml")  # fmt: skip
    assert [p.key for p in _plan(load_grid(quoted)).points] == [p.key for p in _plan(load_grid(nested)).points]


BAD_GRIDS = {
    "malformed TOML": ('kind = "simulate"\naxes = [\n', "invalid TOML"),
    "negative latency": (
        f'kind = "simulate"\ninput = "{SMALL}"\n[axes]\n"latency.L_ms" = [600, -5]\n',
        "point 1 (L_ms=-5): scenario paper_rq3: latency.L_ms: Input should be greater than or equal to 0",
    ),
    "unknown key": (f'kind = "simulate"\ninput = "{SMALL}"\n[axes]\n"latency.Lms" = [600]\n', "latency.Lms: Extra inputs"),
    "unknown trigger": (
        f'kind = "simulate"\ninput = "{SMALL}"\n[axes]\n"trigger.kind" = ["oracle", "sometimes"]\n',
        "point 1 (kind=sometimes)",
    ),
    "rankings on a table": (
        'kind = "simulate"\ninput = "table:bare.csv"\n[axes]\n"trigger.kind" = ["stable"]\n',  # no prefixes.parquet
        "trigger.kind 'stable' needs per-prefix evidence",
    ),
    "theta as text": (f'kind = "streamable"\ninput = "{SMALL}"\n[axes]\ntheta = [0.8, "high"]\n', "parameter theta: 'high'"),
    "k on a table": (f'kind = "streamable"\ninput = "{SMALL}"\n[axes]\nk = [1, 3]\n', "apply to data inputs only"),
    "empty axis": (f'kind = "streamable"\ninput = "{SMALL}"\n[axes]\nL_ms = []\n', "axes.L_ms: the list of values is empty"),
    "duplicate value": (f'kind = "streamable"\ninput = "{SMALL}"\n[axes]\nL_ms = [600, 600.0]\n', "listed twice"),
    "missing input file": ('kind = "streamable"\ninput = "table:nowhere.csv"\n', "no such file"),
    "unknown kind": (f'kind = "dance"\ninput = "{SMALL}"\n', "kind: Input should be"),
    "analyze a table": (f'kind = "analyze"\ninput = "{SMALL}"\n[axes]\nk = [1]\n', "analyze points need a data file"),
    "variant not a table": (f'kind = "simulate"\ninput = "{SMALL}"\n[axes.trigger]\nnone = "none"\n', "a variant is a table"),
}


@pytest.mark.parametrize("case", sorted(BAD_GRIDS))
def test_bad_grid_is_one_line_error_before_any_work(tmp_path, capsys, case):
    from _simhelpers import small_table

    body, expected = BAD_GRIDS[case]
    small_table(10).to_csv(tmp_path / "bare.csv", index=False)
    path = tmp_path / "bad.toml"
    path.write_text(body, encoding="utf-8")
    out = tmp_path / "run"
    code = main(["sweep", str(path), "--out", str(out)])
    err = capsys.readouterr().err
    assert code == 1
    assert err.count("\n") == 1 and err.startswith("streamrag: error: ")
    assert expected in err, err
    assert str(path) in err  # names the file
    assert not out.exists()  # nothing written


def test_other_cli_errors_are_one_line(tmp_path, capsys):
    (tmp_path / "full").mkdir()
    (tmp_path / "full" / "x").write_text("")
    cases = [
        (["sweep", "no_such_grid", "--out", str(tmp_path / "o")], "built-in: "),
        (["sweep", "paper_rq2", "--out", str(tmp_path / "full")], "pass --resume"),
        (["sweep", "paper_rq2", "--out", str(tmp_path / "o"), "--input", "generated:0"], "generated:N"),
        (["sweep", "paper_rq2", "--out", str(tmp_path / "o"), "--jobs", "0"], "--jobs"),
    ]
    for argv, expected in cases:
        assert main(argv) == 1
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and expected in err, err
    with pytest.raises(ConfigError, match="only simulate grids have a scenario"):
        load_grid(_grid(tmp_path, f'kind = "streamable"\ninput = "{SMALL}"\nscenario = "paper_rq3"\n'))


def test_scenario_path_is_relative_to_the_grid_and_a_grid_without_axes_is_one_point(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "mine.toml").write_text('name = "mine"\n[trigger]\nkind = "every_word"\n[latency]\nL_ms = 250.0\n')
    grid = load_grid(_grid(tmp_path / "sub", f'kind = "simulate"\ninput = "{SMALL}"\nscenario = "mine.toml"\n'))
    (point,) = _plan(grid).points
    assert point.describe() == "base"
    assert (point.descriptors["trigger"], point.descriptors["L_ms"]) == ("every_word", 250.0)


def test_a_sweep_over_records_without_split_says_how_a_grid_reads_them_and_leaves_nothing(tmp_path, capsys):
    """The refusal names the grid's way to read every split, writes nothing, and the
    corrected grid then runs in the same folder."""
    import json

    from streamrag.data.demo import demo_path

    lines = [json.loads(line) for line in demo_path().read_text(encoding="utf-8").splitlines()[:4]]
    data = tmp_path / "nosplit.jsonl"
    data.write_text("".join(json.dumps({k: v for k, v in r.items() if k != "split"}) + "\n" for r in lines), encoding="utf-8")
    body = """
        kind = "simulate"
        scenario = "paper_rq3"
        input = {input}
        [axes]
        "latency.L_ms" = [300, 600]
    """
    out = tmp_path / "run"
    refused = _grid(tmp_path, body.replace("{input}", f'"data:{data}"'), "refused.toml")
    assert main(["sweep", str(refused), "--out", str(out)]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "field 'split'" in err and 'split = "all"' in err
    assert not out.exists()
    fixed = _grid(tmp_path, body.replace("{input}", f'{{source = "data:{data}", split = "all"}}'), "fixed.toml")
    assert main(["--quiet", "sweep", str(fixed), "--out", str(out)]) == 0
    assert (out / "sweep.csv").is_file()
