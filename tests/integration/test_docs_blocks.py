"""Every shell and Python block of the docs and the README runs, against the demo set (issue 48).

Each page's blocks run in order in one scratch folder, so a later block reads what an
earlier one wrote; shell blocks under ``bash -euo pipefail``, Python blocks in a fresh
interpreter, both with this environment's ``streamrag`` first on PATH and a private chunk
cache. An HTML comment on the line before a block changes what happens to it:

- ``<!-- not-runnable: REASON -->`` — not run; the reason is required (a placeholder such
  as DATA, a server, an install, a file that is not shipped);
- ``<!-- tested-by: PATH -->`` — run by that test file (which must exist) instead;
- ``<!-- file: NAME -->`` — written to NAME in the scratch folder, not run (a retriever
  class, a grid file that later blocks use);
- ``<!-- slow -->`` — run only with ``-m slow`` (``make test-all``).

The scratch folder links the checkout's ``scripts/``, ``examples/``, ``benchmarks/``,
``sim/`` and ``calibration/``, so a page's ``python scripts/X.py`` runs as it does from the
checkout's root.

Every fenced block names its language; blocks of other languages (``toml``, ``text``,
``json``) are not run. The generated reference pages (``docs/reference/``) hold no shell
or Python blocks.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SHELL = {"bash", "sh", "shell", "console"}
RUNNABLE = SHELL | {"python"}
MARKER = re.compile(r"<!--\s*(not-runnable|tested-by|file|slow)\s*:?\s*(.*?)\s*-->")
BLOCK = re.compile(r"^```([\w-]*)[^\n]*\n(.*?)^```[ \t]*$", re.S | re.M)


@dataclass(frozen=True)
class Block:
    page: str
    line: int
    language: str
    code: str
    marker: str | None
    argument: str

    @property
    def where(self) -> str:
        return f"{self.page}:{self.line}"


def pages() -> list[Path]:
    return [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]


def blocks(path: Path) -> list[Block]:
    text = path.read_text(encoding="utf-8")
    out = []
    for match in BLOCK.finditer(text):
        before = text[: match.start()].rstrip("\n").rsplit("\n", 1)[-1]
        marker = MARKER.search(before)
        out.append(
            Block(
                page=path.relative_to(ROOT).as_posix(),
                line=text.count("\n", 0, match.start()) + 1,
                language=match.group(1),
                code=match.group(2),
                marker=marker.group(1) if marker else None,
                argument=marker.group(2) if marker else "",
            )
        )
    return out


ALL = [b for p in pages() for b in blocks(p)]


def test_every_block_names_its_language_and_every_marker_is_complete() -> None:
    bad = [b.where for b in ALL if not b.language]
    assert not bad, f"a fenced block without a language (bash, python, toml, text …): {bad}"
    bad = [b.where for b in ALL if b.marker == "not-runnable" and len(b.argument) < 10]
    assert not bad, f"not-runnable without a reason: {bad}"
    bad = [b.where for b in ALL if b.marker == "tested-by" and not (ROOT / b.argument).is_file()]
    assert not bad, f"tested-by names no test file: {bad}"
    bad = [b.where for b in ALL if b.page.startswith("docs/reference/") and b.language in RUNNABLE]
    assert not bad
    assert sum(b.language in RUNNABLE and b.marker in (None, "slow") for b in ALL) >= 10  # most run


def _env(tmp: Path) -> dict[str, str]:
    env = dict(os.environ)
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    env["STREAMRAG_CACHE"] = str(tmp / ".cache")
    env.pop("PYTHONPATH", None)
    return env


CHECKOUT = ("scripts", "examples", "benchmarks", "sim", "calibration")
"""Folders of the checkout a page's commands name (``python scripts/….py``): linked into the
scratch folder, read only, as a reader at the checkout's root sees them."""


def _run_page(page: str, tmp: Path, *, slow: bool) -> None:
    todo = [b for b in ALL if b.page == page]
    env = _env(tmp)
    for name in CHECKOUT:
        (tmp / name).symlink_to(ROOT / name, target_is_directory=True)
    for block in todo:
        if block.marker == "file":
            (tmp / block.argument).write_text(block.code, encoding="utf-8")
            continue
        if block.language not in RUNNABLE or block.marker in ("not-runnable", "tested-by"):
            continue
        if block.marker == "slow" and not slow:
            continue
        shell = ["bash", "-euo", "pipefail", "-c", block.code]
        argv = shell if block.language in SHELL else [sys.executable, "-c", block.code]
        done = subprocess.run(argv, cwd=tmp, env=env, capture_output=True, text=True, timeout=900, check=False)
        assert done.returncode == 0, f"{block.where} ({block.language}) exited {done.returncode}:\n{done.stderr[-3000:]}"


FAST = sorted({b.page for b in ALL if b.language in RUNNABLE and b.marker is None})
SLOW = sorted({b.page for b in ALL if b.language in RUNNABLE and b.marker == "slow"})


@pytest.mark.parametrize("page", FAST)
def test_the_blocks_of_a_page_run(page: str, tmp_path: Path) -> None:
    _run_page(page, tmp_path, slow=False)


@pytest.mark.slow
@pytest.mark.parametrize("page", SLOW)
def test_the_slow_blocks_of_a_page_run(page: str, tmp_path: Path) -> None:
    _run_page(page, tmp_path, slow=True)


HISTORY = re.compile(r"20\d\d-[01]\d-[0-3]\d|load average|this session|on a quiet machine", re.I)


def test_no_page_states_measurement_history() -> None:
    """Dates of runs, load averages and sessions belong to benchmark records
    (benchmarks/results/*.json, shown by benchmarks/RESULTS.md), not to the pages."""
    found = [
        f"{path.relative_to(ROOT)}:{n}"
        for path in pages()
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if HISTORY.search(line)
    ]
    assert not found, found
