"""Run every case of the hostile catalogue (``pytest -m hostile``) and count the outcomes.

    PYTHONPATH=. python scripts/hostile_counts.py [--timeout-s 300] [--json counts.json] [--list]

Each case is one collected test. What each command run inside it did is recorded as it
happens — ``streamrag.cli.main`` called in process (its exit code and everything it
wrote on stderr) and every ``python -m streamrag`` subprocess a case waits for (its
exit code and stderr) — and a case's outcome is then, first match wins:

- **hang** — the case ran past ``--timeout-s`` (a SIGALRM stops it) or a subprocess it
  waited for did not end in time;
- **traceback** — a command's stderr held a Python traceback, or ``main`` raised
  instead of returning an exit code, or a process wrote one to the real stderr (a
  worker: pytest's capture of the case) — found on every run, whether or not the case
  checks it;
- **lost work** — the case failed and it checks that finished work survives (marked
  ``lost_work``: interrupted runs, full disks, resumes);
- **silent wrong** — any other failing case (a check of what a result says failed), or
  a command whose exit code nothing on stderr explains;
- **interrupted** — passed, and a command ended on a signal with its one line;
- **clean error** — passed, and a command ended with exit 1 and its one line (or, in a
  case that calls the library instead of the CLI, it raised streamrag's one-line error);
- **warning** — passed, and a command ran with a ``streamrag: warning:`` line;
- **ok** — passed otherwise (the legitimate run, or a case without a command);
- **skipped** — not run here (e.g. a permission case when running as root).

The closing note of issue 33 is the first four counts.
"""

from __future__ import annotations

import argparse
import json
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[1]

ORDER = ("hang", "traceback", "lost work", "silent wrong", "interrupted", "clean error", "warning", "ok", "skipped")


class Hang(BaseException):
    """Raised by the alarm in a case that ran too long (a BaseException: no ``except
    Exception`` in the code under test swallows it)."""


class _Tee:
    """A text stream writing to ``inner`` and keeping a copy."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.parts: list[str] = []

    def write(self, text: str) -> int:
        self.parts.append(text)
        return self.inner.write(text)

    def flush(self) -> None:
        self.inner.flush()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.inner, name)


def _command_outcome(code: int | None, err: str) -> str:
    """What one command did: ``traceback``, ``ok``, ``warning``, ``clean error`` (exit 1,
    or 2 for usage), ``interrupted`` (a signal's exit code with its line, or killed by the
    case itself), else ``unsaid exit`` (an exit code nothing on stderr explains)."""
    if "Traceback (most recent call last)" in err:
        return "traceback"
    if code == 0:
        return "warning" if "streamrag: warning: " in err or '"level": "warning"' in err else "ok"
    if code in (1, 2):
        return "clean error"
    if code is not None and (code < 0 or (code >= 128 and "interrupted" in err)):
        return "interrupted"
    return "unsaid exit"


class Tally:
    """The pytest plugin: records each case's commands and outcome."""

    def __init__(self, timeout_s: float) -> None:
        self.timeout_s = timeout_s
        self.commands: list[str] = []
        self.library_errors = 0
        self.cases: dict[str, dict[str, Any]] = {}
        self.reports: list[pytest.TestReport] = []

    # --- recording what commands did -------------------------------------------------

    def pytest_collection_finish(self, session: pytest.Session) -> None:
        import streamrag.cli

        real_main = streamrag.cli.main

        def main(argv: list[str] | None = None) -> int:
            tee = _Tee(sys.stderr)
            saved, sys.stderr = sys.stderr, tee
            try:
                code = real_main(argv)
            except SystemExit:
                raise
            except BaseException as exc:
                if not isinstance(exc, Hang | KeyboardInterrupt):
                    self.commands.append("traceback")
                raise
            finally:
                sys.stderr = saved
            self.commands.append(_command_outcome(code, "".join(tee.parts)))
            return code

        for module in list(sys.modules.values()):  # the tests' helpers imported main by name
            if getattr(module, "main", None) is real_main:
                module.main = main  # type: ignore[attr-defined]
        real_communicate = subprocess.Popen.communicate

        def communicate(proc: subprocess.Popen, *args: Any, **kwargs: Any) -> Any:
            out, err = real_communicate(proc, *args, **kwargs)
            argv = proc.args if isinstance(proc.args, list | tuple) else [proc.args]
            if "streamrag" in " ".join(str(a) for a in argv) and err is not None:
                text = err.decode("utf-8", "replace") if isinstance(err, bytes) else err
                self.commands.append(_command_outcome(proc.returncode, text))
            return out, err

        subprocess.Popen.communicate = communicate  # type: ignore[method-assign]
        from streamrag.base.errors import StreamragError

        real_init = StreamragError.__init__

        def init(exc: StreamragError, *args: Any, **kwargs: Any) -> None:
            self.library_errors += 1  # a case calling the library, not the CLI: its one-line error
            real_init(exc, *args, **kwargs)

        StreamragError.__init__ = init  # type: ignore[method-assign]

    # --- one case ----------------------------------------------------------------------

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item: pytest.Item, nextitem: pytest.Item | None) -> Any:
        def alarm(_number: int, _frame: Any) -> None:
            raise Hang(f"{item.nodeid}: still running after {self.timeout_s:g} s")

        self.commands, self.library_errors = [], 0
        case = self.cases.setdefault(item.nodeid, {"failed": False, "skipped": False, "hang": False, "longrepr": ""})
        case["lost_work"] = item.get_closest_marker("lost_work") is not None
        previous = signal.signal(signal.SIGALRM, alarm)
        signal.setitimer(signal.ITIMER_REAL, self.timeout_s)
        started = time.monotonic()
        try:
            yield
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
            signal.signal(signal.SIGALRM, previous)
        case["wall_s"] = round(time.monotonic() - started, 2)
        case["commands"] = list(self.commands)
        case["library_errors"] = self.library_errors
        case["outcome"] = self._outcome(case)

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.reports.append(report)
        case = self.cases.setdefault(report.nodeid, {"failed": False, "skipped": False, "hang": False, "longrepr": ""})
        if report.skipped:
            case["skipped"] = True
        if "Traceback (most recent call last)" in report.capstderr:  # a process writing to the real stderr (a worker)
            case["stderr_traceback"] = True
        if report.failed:
            case["failed"] = True
            text = str(report.longrepr)
            case["longrepr"] += text[-2000:]
            if "Hang: " in text or "TimeoutExpired" in text or "timed out" in text:
                case["hang"] = True

    @staticmethod
    def _outcome(case: dict[str, Any]) -> str:
        commands = case["commands"]
        if case["hang"]:
            return "hang"
        if "traceback" in commands or case.get("stderr_traceback"):
            return "traceback"
        if case["failed"]:
            return "lost work" if case["lost_work"] else "silent wrong"
        if "unsaid exit" in commands:  # an exit code with no line saying why: misleading, even if the case passed
            return "silent wrong"
        if case["skipped"]:
            return "skipped"
        for outcome in ("interrupted", "clean error", "warning"):
            if outcome in commands:
                return outcome
        return "clean error" if not commands and case["library_errors"] else "ok"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timeout-s", type=float, default=300.0, help="a case running longer is a hang (default 300)")
    parser.add_argument("--json", type=Path, help="write every case's outcome and the counts here")
    parser.add_argument("--list", action="store_true", help="print every case with its outcome")
    parser.add_argument("pytest_args", nargs="*", help="more pytest arguments (e.g. a file to run only its cases)")
    args = parser.parse_args(argv)
    tally = Tally(args.timeout_s)
    started = time.monotonic()
    code = pytest.main(
        ["-m", "hostile", "-q", "-p", "no:cacheprovider", "--rootdir", str(ROOT), *args.pytest_args], plugins=[tally]
    )
    counts = Counter(case.get("outcome", "silent wrong") for case in tally.cases.values())
    if args.list:
        for nodeid, case in tally.cases.items():
            print(f"{case.get('outcome', '?'):12} {case.get('wall_s', 0):7.2f} s  {nodeid}")
    wall_s = time.monotonic() - started
    print(f"\nhostile catalogue: {len(tally.cases)} cases in {wall_s:.0f} s (pytest exit {int(code)})")
    for outcome in ORDER:
        print(f"  {outcome:12} {counts.get(outcome, 0)}")
    bad = sum(counts.get(o, 0) for o in ORDER[:4])
    print(
        f"  → {counts.get('traceback', 0)} tracebacks, {counts.get('silent wrong', 0)} silent wrong results, "
        f"{counts.get('lost work', 0)} lost work, {counts.get('hang', 0)} hangs"
    )
    sys.path.insert(0, str(ROOT / "tests"))  # after the run: hypothesis imported first would escape its rewriting
    from fuzz_surfaces import harness_counts  # the harness's counts, as the test run's summary sums them

    harness = harness_counts(tally.reports)
    if harness is not None:
        print(
            f"hostile harness (its cases above, one per surface): {harness['surfaces']} surfaces, "
            f"{harness.get('inputs', 0)} damaged inputs, {harness.get('refused', 0)} refused in one line, "
            f"{harness.get('read', 0)} read, {harness.get('tracebacks', 0)} tracebacks, {harness.get('silent', 0)} silent runs"
        )
    if args.json:
        data = {
            "counts": {o: counts.get(o, 0) for o in ORDER},
            "harness": harness,
            "wall_s": round(wall_s, 1),
            "cases": tally.cases,
        }
        args.json.write_text(json.dumps(data, indent=1, default=str) + "\n", encoding="utf-8")
    return 1 if bad or int(code) not in (0, 5) else 0


if __name__ == "__main__":
    sys.exit(main())
