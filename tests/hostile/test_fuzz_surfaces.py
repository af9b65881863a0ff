"""The hostile harness: damaged inputs on every registered surface (``fuzz_surfaces.py``).

For each surface, hypothesis draws damaged versions of a valid seed file and runs the
command on each. The contract, checked on every input:

- never a traceback (on stdout or stderr) and never an exception out of ``main``;
- exit 0, or exit 1 with exactly one ``streamrag: error:`` line naming the damaged file;
- an absurd value put into a declared number field is refused (exit 1) or skipped and
  said (a ``warning`` or ``skipped`` line): never a silent run;
- no temporary or partial file left behind.

The draws are derandomized (the same inputs on every run: CI stays green on a busy
machine and a failure reproduces); ``STREAMRAG_FUZZ_EXAMPLES=N`` draws N per surface
(default 12) and ``STREAMRAG_FUZZ_RANDOM=1`` draws new ones. Each surface's counts go to
the run's terminal summary (``conftest.py``): surfaces, inputs, refused, read, tracebacks
and silent runs.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest
from fuzz_surfaces import EXEMPT, NOT_FILES, SURFACES, Mutation, Surface, mutations
from hypothesis import HealthCheck, Phase, given, settings

from streamrag.cli import build_parser, main

pytestmark = pytest.mark.hostile

EXAMPLES = int(os.environ.get("STREAMRAG_FUZZ_EXAMPLES", "12"))
RANDOM = os.environ.get("STREAMRAG_FUZZ_RANDOM") == "1"
COUNTS_PROPERTY = "hostile_harness"
"""The test report's property holding a surface's counts (``conftest.py`` and
``scripts/hostile_counts.py`` add them up, across xdist workers too)."""


def _run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _argv(surface: Surface, folder: Path) -> list[str]:
    return [a.format(tmp=folder, out=folder / "out") for a in surface.argv]


def _said(out: str, err: str) -> bool:
    text = (out + err).lower()
    return "warning" in text or bool(re.search(r"\bskipp", text)) or "not read" in text


@pytest.mark.parametrize("surface", SURFACES, ids=[s.name for s in SURFACES])
def test_damaged_input_is_refused_in_one_line_or_read_and_never_a_traceback(
    surface: Surface, tmp_path: Path, record_property: Callable[[str, object], None], capsys: pytest.CaptureFixture[str]
) -> None:
    seed = tmp_path / "seed"
    seed.mkdir()
    surface.seed(seed)
    code, _out, err = _run(["--quiet", *_argv(surface, seed)], capsys)
    assert code == 0, f"the seed of {surface.name} must run: {err}"
    raw = (seed / surface.file).read_bytes()
    shutil.rmtree(seed / "out", ignore_errors=True)
    counts = {"inputs": 0, "refused": 0, "read": 0, "tracebacks": 0, "silent": 0}
    case = 0

    @settings(
        max_examples=EXAMPLES,
        derandomize=not RANDOM,
        database=None,
        deadline=None,
        phases=(
            Phase.explicit,
            Phase.generate,
        ),  # no shrinking: a mutation is already small, and shrinking 200 kB values took minutes
        suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
    )
    @given(mutation=mutations(surface))
    def one(mutation: Mutation) -> None:
        nonlocal case
        case += 1
        damaged = mutation.apply(surface, raw)
        if damaged == raw:  # e.g. a field set to the value it had: nothing to try
            return
        folder = tmp_path / f"case{case}"
        shutil.copytree(seed, folder)
        target = folder / surface.file
        target.write_bytes(damaged)
        counts["inputs"] += 1
        try:
            code, out, err = _run(["--quiet", *_argv(surface, folder)], capsys)
        except BaseException as exc:  # main must return a code, whatever it read
            counts["tracebacks"] += 1
            raise AssertionError(f"{surface.name} {mutation}: main raised {exc!r}") from exc
        if "Traceback" in out + err:
            counts["tracebacks"] += 1
        assert "Traceback" not in out + err, f"{surface.name} {mutation}:\n{err}"
        assert code in (0, 1), f"{surface.name} {mutation}: exit {code}\n{err}"
        if code == 1:
            counts["refused"] += 1
            lines = err.strip().splitlines()
            assert len(lines) == 1 and lines[0].startswith("streamrag: error: "), f"{surface.name} {mutation}:\n{err}"
            assert Path(surface.file).name in lines[0], f"{surface.name} {mutation}: the error names no file: {lines[0]}"
        else:
            counts["read"] += 1
            if mutation.absurd and not _said(out, err):
                counts["silent"] += 1
                raise AssertionError(f"{surface.name} {mutation}: an absurd {mutation.field} was read silently")
        left = [p.name for p in folder.rglob("*") if p.name.endswith((".tmp", ".partial"))]
        assert not left, f"{surface.name} {mutation}: left {left}"
        shutil.rmtree(folder)

    try:
        one()
    finally:
        record_property(COUNTS_PROPERTY, {"surface": surface.name, **counts})
    assert counts["inputs"] >= min(EXAMPLES, 6)


VALUE_TYPES = {"int", "float", "positive_int", "non_negative_int", "probability", "split_value", "min_n_value", "lower"}
"""Argument types that parse a value, not a path."""


def _file_arguments() -> set[tuple[str, str]]:
    """(command, dest) of every argument that names a file or folder to read."""
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    found = set()
    for command, sp in sub.choices.items():
        for action in sp._actions:
            if (action.option_strings and action.nargs == 0) or isinstance(action, argparse._HelpAction):
                continue
            metavar = action.metavar if isinstance(action.metavar, str) else ""
            typed = getattr(action.type, "__name__", "")
            valued = typed in VALUE_TYPES or metavar in ("N", "MS", "WPS", "P", "R", "F", "S", "B", "X", "CAP", "URL")
            if action.dest in NOT_FILES or valued or action.choices is not None:
                continue
            found.add((command, action.dest))
    return found


def test_every_file_argument_is_registered() -> None:
    """A command that gains an argument reading a file fails here until a surface in
    ``fuzz_surfaces.py`` fuzzes it (or ``EXEMPT`` says why not)."""
    registered = {s.reads for s in SURFACES}
    assert all(reason.strip() for reason in EXEMPT.values())
    missing = sorted(_file_arguments() - registered - set(EXEMPT))
    assert not missing, f"file arguments with no surface: {missing}"
    stale = sorted((registered | set(EXEMPT)) - _file_arguments() - {r for r in registered if r[1].startswith("--set ")})
    assert not stale, f"surfaces naming no argument: {stale}"
