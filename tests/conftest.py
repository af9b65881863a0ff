"""Shared fixtures. Real CRAG data is read from ../shared/data/crag/ and never copied.

Tests are filed by purpose: ``unit/<layer>/`` (the first folder under ``streamrag/`` a test is
mainly about; ``unit/`` itself for the package as a whole), ``parity/`` (against a reference:
rank_bm25, the anchor's code and tables, scipy, closed forms, the engine), ``hostile/``
(damaged input, interrupts, limits), ``cli/`` (commands run through ``main([...])``) and
``integration/`` (browser, adapters, speech, notebooks, live). Helpers shared across folders
sit here (``_simhelpers.py``, ...), test-only reference implementations in ``oracles/``; both
folders are on ``sys.path`` (pyproject's ``pythonpath``). Session fixtures below run a
command once per worker for the tests that only read its outputs."""

from __future__ import annotations

import os
import signal
from pathlib import Path
from typing import TYPE_CHECKING

import pytest

if TYPE_CHECKING:
    from streamrag.simulator.questions import QuestionSet

ROOT = Path(__file__).resolve().parents[1]
CRAG_DIR = Path(os.environ.get("STREAMRAG_CRAG_DIR", ROOT.parent / "shared" / "data" / "crag"))
ANCHOR_REPO = Path(os.environ.get("STREAMRAG_ANCHOR_REPO", ROOT.parent / "shared" / "anchor"))
"""The anchor study's repository (github.com/elroy-galbraith/stablize_CRAG), a clone or a bare
git folder, whose published result files some reproduction tests read with ``git show``;
those tests skip, saying so, where it is absent. Its files are never copied here."""


@pytest.fixture(scope="session")
def crag_dir() -> Path:
    """The folder of real CRAG data; tests that need it skip where it is absent."""
    if not (CRAG_DIR / "dev_data.jsonl.bz2").exists():
        pytest.skip(f"real CRAG data not found at {CRAG_DIR} (set STREAMRAG_CRAG_DIR to its folder)")
    return CRAG_DIR


@pytest.fixture(scope="session")
def crag_sample(crag_dir: Path) -> Path:
    """CRAG's own 10-record example file with real HTML pages."""
    return crag_dir / "dev_data.jsonl.bz2"


@pytest.fixture(scope="session")
def sample_question_set(crag_sample: Path) -> QuestionSet:
    """The simulator's questions of the real sample (read only), built once per worker:
    chunking its pages costs ~3 s, and several modules simulate on them."""
    from streamrag.data.selection import Selection
    from streamrag.simulator.questions import questions_from_data
    from streamrag.simulator.sections import DataConfig

    return questions_from_data(crag_sample, DataConfig(), Selection(split=None))


@pytest.fixture(scope="session")
def demo_analysis(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``analyze`` on every question of the demo set (``--split all --no-figures --no-cache``),
    run once per worker for the tests that only read its folder (stabilization.csv,
    prefixes.parquet, summary.json). A test that checks how analyze writes runs its own."""
    from streamrag.cli import main
    from streamrag.data.demo import demo_path

    out = tmp_path_factory.mktemp("demo-analysis") / "analysis"
    argv = ["analyze", str(demo_path()), "--split", "all", "--no-figures", "--no-cache", "--out", str(out), "-q"]
    assert main(argv) == 0
    return out


@pytest.fixture(scope="session")
def demo_features_analysis(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The same analysis with ``--features`` (features.csv beside the table), once per worker,
    read only; skipped, with the reason, without the entity tagger (the ``ner`` extra)."""
    from streamrag.analysis.studies.entity import ner_unavailable_reason
    from streamrag.cli import main
    from streamrag.data.demo import demo_path

    if ner_unavailable_reason():  # --features runs the entity tagger
        pytest.skip(ner_unavailable_reason())
    out = tmp_path_factory.mktemp("demo-features") / "analysis"
    argv = ["analyze", str(demo_path()), "--split", "all", "--features", "--no-figures", "--no-cache", "--out", str(out), "-q"]
    assert main(argv) == 0
    return out


@pytest.fixture(scope="session", autouse=True)
def _private_chunk_cache(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Commands that use the default chunk cache write into a temporary folder, not ~/.cache."""
    os.environ["STREAMRAG_CACHE"] = str(tmp_path_factory.mktemp("chunk-cache"))


@pytest.fixture(scope="session", autouse=True)
def _children_start_in_the_foreground() -> None:
    """Commands a test starts get SIGINT at its default, as from a terminal.

    A test run that a script started with ``&`` inherits SIGINT ignored, and so would every
    command it starts (an ignored signal survives exec): the tests that press Ctrl-C on one
    would see it run to its end. A handler, unlike SIG_IGN, is reset by exec.
    """
    if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """The hostile harness in numbers: surfaces, damaged inputs, how each ended."""
    reports = [r for rs in terminalreporter.stats.values() for r in rs if isinstance(r, pytest.TestReport)]
    from fuzz_surfaces import harness_counts

    total = harness_counts(reports)
    if total is None:
        return
    terminalreporter.write_line(
        f"hostile harness: {total['surfaces']} surfaces, {total.get('inputs', 0)} damaged inputs "
        f"({total.get('refused', 0)} refused in one line, {total.get('read', 0)} read), "
        f"{total.get('tracebacks', 0)} tracebacks, {total.get('silent', 0)} silent runs"
    )
