"""Worker pools: when the parent may start a thread, and importing while workers run."""

from __future__ import annotations

import subprocess
import sys

import pytest

from streamrag.base.system.processes import all_workers_started, worker_pool


def _square(x: int) -> int:
    return x * x


def test_all_workers_started_only_once_each_worker_exists() -> None:
    pool = worker_pool(2)
    try:
        assert not all_workers_started(pool, 2)  # a pool starts its workers as work comes in
        futures = [pool.submit(_square, i) for i in range(8)]
        assert [f.result() for f in futures] == [i * i for i in range(8)]
        assert all_workers_started(pool, 2)
    finally:
        pool.shutdown()


def test_an_analysis_imports_its_output_modules_while_the_workers_run(crag_sample, tmp_path) -> None:
    # In a fresh interpreter: the outputs' imports (pandas, pyarrow, scipy.special) are not
    # needed to start an analysis on 2 processes and are started while it runs, after
    # the workers were forked; the run's outputs are complete.
    code = (
        "import sys, streamrag.base.system.processes as P\n"
        "seen = []\n"
        "orig = P.import_in_background\n"
        "def spy(mods):\n"
        "    seen.append(('scipy.stats' in sys.modules, 'pandas' in sys.modules, len(P.threading.enumerate())))\n"
        "    return orig(mods)\n"
        "P.import_in_background = spy\n"
        "from streamrag.cli import main\n"
        f"rc = main(['analyze', {str(crag_sample)!r}, '--split', 'all', '--no-cache', '--jobs', '2', '--no-figures',"
        f" '--out', {str(tmp_path / 'out')!r}, '--quiet'])\n"
        "print(rc, seen)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=300)
    rc, seen = done.stdout.strip().splitlines()[-1].split(" ", 1)
    assert rc == "0"
    assert seen.startswith("[(False, False, ")  # started once, before the heavy modules were imported
    assert (tmp_path / "out" / "summary.json").is_file() and (tmp_path / "out" / "prefixes.parquet").is_file()


def _dispositions() -> tuple[object, ...]:
    import signal

    return tuple(signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP))


def test_a_worker_leaves_interrupts_to_its_parent() -> None:
    # Under the CLI's handlers (SIGTERM and SIGHUP raise KeyboardInterrupt), which a forked
    # worker inherits: a worker ignores Ctrl-C and dies quietly on SIGTERM or SIGHUP.
    import signal

    from streamrag.base.system.signals import terminations_interrupt

    with terminations_interrupt(), worker_pool(1) as pool:
        got = pool.submit(_dispositions).result()
    assert got == (signal.SIG_IGN, signal.SIG_DFL, signal.SIG_DFL)


def test_an_interrupted_pool_ends_its_workers_instead_of_waiting_for_them() -> None:
    import time

    import pytest

    workers: list = []

    def interrupted_while_busy() -> None:
        with worker_pool(2) as pool:
            futures = [pool.submit(time.sleep, 30) for _ in range(2)]
            while not all(f.running() for f in futures):
                time.sleep(0.01)
            workers.extend(pool._processes.values())
            raise KeyboardInterrupt

    started = time.monotonic()
    with pytest.raises(KeyboardInterrupt):
        interrupted_while_busy()
    assert time.monotonic() - started < 15  # the work in flight (30 s) was not waited for
    assert not any(p.is_alive() for p in workers)


def test_a_hung_test_fails_with_its_stack_instead_of_holding_the_run(tmp_path) -> None:
    # The suite's per-test timeout (pyproject: timeout): a test waiting on what never
    # comes fails, naming where it waited, instead of holding CI forever.
    import subprocess
    import sys

    hung = tmp_path / "test_hung.py"
    hung.write_text("import threading\n\ndef test_waits_forever():\n    threading.Event().wait()\n", encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "pytest", str(hung), "-p", "no:cacheprovider", "-o", "addopts=", "--timeout", "2"],
        check=False,
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=300,
    )
    assert done.returncode != 0 and "Timeout" in done.stdout and "test_hung.py" in done.stdout


def test_a_generator_closed_by_an_error_is_not_an_interrupt_and_one_closed_by_an_interrupt_is() -> None:
    # A worker terminated while writing its result leaves part of a message in the pool's
    # pipe; so only an interrupt ends the workers at once, an error lets the work in hand finish.
    from contextlib import closing

    from streamrag.base.system.processes import _interrupted

    seen: list[bool] = []

    def items():
        try:
            yield 1
            yield 2
        except BaseException as exc:
            seen.append(_interrupted(exc))
            raise

    def consume(raised: type[BaseException]) -> None:
        gen = items()
        with closing(gen):
            for _ in gen:
                raise raised()

    for raised, interrupt in ((ValueError, False), (KeyboardInterrupt, True)):
        with pytest.raises(raised):
            consume(raised)
        assert seen.pop() is interrupt
    gen = items()
    next(gen)
    gen.close()  # a plain early close
    assert seen.pop() is False
    assert _interrupted(KeyboardInterrupt()) and _interrupted(SystemExit()) and not _interrupted(OSError())
