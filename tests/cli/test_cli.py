"""The command line: help is instant (no heavy imports), exit codes, public commands."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from streamrag.cli import COMMANDS, build_parser, main

HEAVY = ("numpy", "pandas", "scipy", "pydantic", "bs4", "matplotlib", "rich", "anyio", "selectolax", "structlog")


def _main_in_fresh_interpreter(argv: list[str]) -> tuple[subprocess.CompletedProcess[str], int, list[str]]:
    """Run ``main(argv)`` in a new interpreter: the process, its exit code and the heavy modules it imported."""
    code = (
        "import sys, json\n"
        "from streamrag.cli import main\n"
        f"rc = main({argv!r})\n"
        f"print(json.dumps([rc, sorted(m for m in {list(HEAVY)!r} if m in sys.modules)]))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    rc, loaded = json.loads(done.stdout.splitlines()[-1])
    return done, rc, loaded


def test_help_imports_no_heavy_module() -> None:
    code = (
        "import sys, json\n"
        "from streamrag.cli import main\n"
        f"for argv in [['--help']] + [[c, '--help'] for c in {list(COMMANDS)!r}]:\n"
        "    try:\n        main(argv)\n    except SystemExit:\n        pass\n"
        f"print(json.dumps(sorted(m for m in {list(HEAVY)!r} if m in sys.modules)))\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert json.loads(out.splitlines()[-1]) == []


def test_every_command_is_registered_and_has_help(capsys: pytest.CaptureFixture[str]) -> None:
    parser = build_parser()
    registered = set(parser._subparsers._group_actions[0].choices)  # type: ignore[union-attr]
    assert registered == set(COMMANDS)
    for command in COMMANDS:
        assert main([command, "--help"]) == 0
        assert "usage: streamrag " + command in capsys.readouterr().out


def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    assert main(["analyze"]) == 2
    assert main(["analyze", "x.jsonl", "--out", "o", "--split", "7"]) == 2
    assert "invalid split '7'" in capsys.readouterr().err


def test_known_error_exits_1_with_one_line(tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["analyze", str(tmp_path / "missing.jsonl"), "--out", str(tmp_path / "o")]) == 1
    err = capsys.readouterr().err
    assert err == f"streamrag: error: {tmp_path / 'missing.jsonl'}: no such file\n"


def test_empty_split_says_which_splits_exist(crag_sample, tmp_path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["analyze", str(crag_sample), "--out", str(tmp_path / "o"), "--no-cache"]) == 1
    err = capsys.readouterr().err
    assert "no record has split 0 (split 1: 10)" in err and "--split all" in err


def test_python_dash_m_streamrag_is_the_same_command_line() -> None:
    done = subprocess.run([sys.executable, "-m", "streamrag", "--help"], capture_output=True, text=True, check=True)
    assert "usage: streamrag" in done.stdout
    assert all(c in done.stdout for c in COMMANDS)
    bad = subprocess.run([sys.executable, "-m", "streamrag", "no-such-command"], check=False, capture_output=True, text=True)
    assert bad.returncode == 2


@pytest.mark.parametrize(
    "argv", [["simulate", "--table", "MISSING.csv", "--scenario", "paper_rq3"], ["analyze", "MISSING.jsonl"]]
)
def test_a_missing_input_is_reported_before_heavy_imports(tmp_path, argv: list[str]) -> None:
    done, rc, loaded = _main_in_fresh_interpreter([*argv, "--out", str(tmp_path / "out")])
    assert rc == 1
    assert not set(loaded) & {"numpy", "pandas", "scipy", "pydantic", "matplotlib", "anyio"}  # logging's own may load
    assert done.stderr.strip() == f"streamrag: error: {argv[-3] if argv[0] == 'simulate' else argv[-1]}: no such file"
    assert not (tmp_path / "out").exists()


def test_a_table_replay_imports_neither_pandas_nor_structlog(tmp_path) -> None:
    # Importing pandas (and structlog, when nothing is logged) took longer than replaying
    # CRAG's validation split; a table and its prefixes.parquet are read without them.
    table = tmp_path / "gen.csv"
    assert main(["generate", str(table), "--questions", "30", "--table"]) == 0
    assert (tmp_path / "gen.prefixes.parquet").is_file()
    done, rc, loaded = _main_in_fresh_interpreter(
        ["simulate", "--table", str(table), "--scenario", "paper_rq3", "--out", str(tmp_path / "run")]
    )
    assert rc == 0 and "per-prefix evidence" in done.stdout
    assert not set(loaded) & {"pandas", "structlog", "scipy", "matplotlib", "rich"}


def test_the_lists_copied_into_commands_for_an_instant_help_match_their_originals() -> None:
    # commands/ keeps a few constant lists of its own so that ``--help`` imports nothing
    # heavy; each must stay what it copies.
    from typing import get_args

    from streamrag.base.lines import SUFFIXES
    from streamrag.calibration.fit import ModelChoice
    from streamrag.commands import calibrate, generate

    assert generate._RECORD_SUFFIXES == SUFFIXES
    assert get_args(ModelChoice) == calibrate.MODELS


def test_one_error_inside_task_groups_is_reported_as_itself() -> None:
    # A command's async work runs in task groups, which wrap what a task raised: the one
    # top-level handler reports the error inside, in one line, however deep.
    from streamrag.base.errors import ConfigError
    from streamrag.cli import _unwrapped

    inner = ConfigError("x: bad")
    assert _unwrapped(BaseExceptionGroup("g", [ExceptionGroup("h", [inner])])) is inner
    two = ExceptionGroup("g", [inner, ValueError("other")])
    assert _unwrapped(two) is two  # two errors are not one: a bug report, not a line


def test_data_demo_names_the_built_in_demo_set_with_every_split(tmp_path: Path) -> None:
    """``DATA demo`` reads the demo set as ``--input demo`` does (every split) in
    ``analyze``, ``simulate`` and ``predict``; an explicit split still applies."""

    def n(folder: Path) -> int:
        return json.loads((folder / "summary.json").read_text(encoding="utf-8"))["n_questions"]

    assert main(["--quiet", "analyze", "demo", "--no-figures", "--out", str(tmp_path / "a")]) == 0
    assert main(["--quiet", "analyze", "demo", "--split", "0", "--no-figures", "--out", str(tmp_path / "a0")]) == 0
    assert (n(tmp_path / "a"), n(tmp_path / "a0")) == (32, 24)
    sim = ["--quiet", "simulate", "demo", "--scenario", "paper_rq3"]
    assert main([*sim, "--out", str(tmp_path / "s")]) == 0
    assert main([*sim, "--set", "data.split=0", "--out", str(tmp_path / "s0")]) == 0
    manifest = json.loads((tmp_path / "s" / "manifest.json").read_text(encoding="utf-8"))
    assert "data.split=all" in manifest["command"]
    assert main(["--quiet", "predict", "demo", "--scenario", "paper_rq3", "--out", str(tmp_path / "p")]) == 0
