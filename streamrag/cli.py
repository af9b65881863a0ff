"""The ``streamrag`` command.

Each subcommand lives in ``streamrag/commands/<name>.py`` (``-`` in a name is ``_`` there) and exposes
``add_parser(subparsers)`` and ``run(args) -> int``. Command modules import only the
standard library at top level; heavy imports happen inside ``run`` so that ``--help``
is instant.

Exit codes: 0 ok, 1 a known error (one line on stderr), 2 usage.

Logging options (``--log-level``, ``--quiet``, ``--log-json``, ``-v``) are accepted before
or after the subcommand: each subcommand's parser repeats them with suppressed defaults,
so a value given after the subcommand wins and one given before is kept. The library logs
on stdlib loggers; structlog renders them, configured here only
(:mod:`streamrag.commands._logging`).
"""

from __future__ import annotations

import argparse
import importlib
import sys

from streamrag.base.version import __version__

COMMANDS = (
    "demo",
    "analyze",
    "stats",
    "simulate",
    "predict",
    "compare",
    "sweep",
    "trace",
    "report",
    "calibrate",
    "ingest",
    "generate",
    "serve",
    "live",
    "list",
    "schema",
    "frontier",
    "advise",
    "speak",
    "fit-input",
    "train-trigger",
)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="streamrag",
        description="Measure tool-intent stabilization in streaming RAG and simulate speculative tool calls.",
    )
    parser.add_argument("--version", action="version", version=f"streamrag {__version__}")
    _add_logging_options(parser, defaults=True)
    _add_figure_options(parser, defaults=True)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in COMMANDS:
        importlib.import_module(f"streamrag.commands.{name.replace('-', '_')}").add_parser(sub)
    for subparser in sub.choices.values():
        _add_logging_options(subparser, defaults=False)
        _add_figure_options(subparser, defaults=False)
    return parser


def _add_figure_options(parser: argparse.ArgumentParser, *, defaults: bool) -> None:
    """``--figure-format`` and ``--dpi`` for every figure a command writes, before or after
    the subcommand."""
    from streamrag.base.figures import FORMATS

    group = parser.add_argument_group("figures")
    group.add_argument(
        "--figure-format",
        choices=tuple(FORMATS.values()),
        type=str.lower,
        default=None if defaults else argparse.SUPPRESS,
        help="format of the figures a command names itself (default png; frontier: pdf and svg); "
        "a figure path given explicitly keeps its extension",
    )
    group.add_argument(
        "--dpi",
        type=float,
        default=120.0 if defaults else argparse.SUPPRESS,
        metavar="N",
        help="resolution of PNG figures (default 120; PDF and SVG are vector)",
    )


LOG_LEVELS = ("debug", "info", "warning", "error")


def _add_logging_options(parser: argparse.ArgumentParser, *, defaults: bool) -> None:
    """The logging options; ``defaults=False`` (a subcommand) leaves unset ones out of the
    namespace, so they do not overwrite what was given before the subcommand."""

    def default(value: object) -> object:
        return value if defaults else argparse.SUPPRESS

    group = parser.add_argument_group("logging")
    group.add_argument(
        "--log-level",
        choices=LOG_LEVELS,
        type=str.lower,
        default=default("warning"),
        help="least severe log events shown on stderr (default: warning)",
    )
    group.add_argument("-v", "--verbose", action="store_true", default=default(False), help="the same as --log-level info")
    group.add_argument("-q", "--quiet", action="store_true", default=default(False), help="errors only: no progress, no warnings")
    group.add_argument(
        "--log-json",
        action="store_true",
        default=default(False),
        help="log events and progress as JSON lines on stderr (for log collectors)",
    )


def _configure_logging(args: argparse.Namespace) -> None:
    """The stderr handler and progress as the logging options say.

    Progress: a bar on a terminal, plain periodic lines otherwise (nohup, SLURM,
    ``2> log``), JSON lines with ``--log-json``, none with ``--quiet``.
    """
    from streamrag.base import progress
    from streamrag.commands import _logging

    level_name = "error" if args.quiet else "info" if args.verbose and args.log_level == "warning" else args.log_level
    _logging.configure(level_name, json=args.log_json, progress_on=not args.quiet)
    from streamrag.engine.clock import RealClock

    clock = RealClock()
    progress.configure("off" if args.quiet else "json" if args.log_json else "lines", clock=lambda: clock.now_us() / 1e6)


def _configure_figures(dpi: float, figure_format: str | None) -> None:
    from streamrag.base import figures
    from streamrag.base.errors import ConfigError

    if not 10 <= dpi <= 2400:
        raise ConfigError(f"--dpi: {dpi:g} is outside 10..2400")
    figures.DPI = dpi
    figures.FORMAT = figure_format


def main(argv: list[str] | None = None, *, process: bool = False) -> int:
    """The command line; ``process``: this call is the whole process (the console script
    and ``python -m streamrag``), so a command ending on a signal drops later ones."""
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on usage errors, 0 on --help
        return int(exc.code or 0)
    _configure_logging(args)
    from streamrag.base.errors import StreamragError
    from streamrag.base.system.signals import Interrupted, interrupt_exit_code, interrupt_name, terminations_interrupt
    from streamrag.base.system.terminal import printable
    from streamrag.commands._logging import say

    try:
        _configure_figures(args.dpi, args.figure_format)
        with terminations_interrupt(process=process):
            code = int(args.run(args) or 0)
        sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's exit
        return code
    except BaseException as raised:  # every known kind is reported below, the rest re-raised
        error = _unwrapped(raised)
        if isinstance(error, BrokenPipeError):
            return _reader_gone()
        if isinstance(error, StreamragError):
            message = printable(str(error))
            say(f"streamrag: error: {message}", level="error", event=message)
            return 1
        if isinstance(error, OSError) and error.filename is not None:  # the file system refused: not a bug
            message = f"{printable(str(error.filename))}: {error.strerror or error}"
            say(f"streamrag: error: {message}", level="error", event=message)
            return 1
        if isinstance(error, KeyboardInterrupt):  # Ctrl-C, SIGTERM or SIGHUP (streamrag.base.system.signals)
            name = interrupt_name()
            left = error.left if isinstance(error, Interrupted) else ""
            text = f"streamrag: interrupted ({name})" + (f": {printable(left)}" if left else "")
            say(text, level="error", event="interrupted", signal=name, **({"left": left} if left else {}))
            return interrupt_exit_code()
        raise


def _unwrapped(exc: BaseException) -> BaseException:
    """The one exception an exception group holds (task groups wrap what a task raised),
    however deeply nested; ``exc`` itself otherwise, or when the group holds more."""
    while isinstance(exc, BaseExceptionGroup) and len(exc.exceptions) == 1:
        exc = exc.exceptions[0]
    return exc


def _reader_gone() -> int:
    """stdout's reader closed the pipe (``streamrag trace … | head``): it has what it
    wanted, files are written, so exit 0 without a message; later writes go nowhere."""
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return 0


def entry() -> None:  # pragma: no cover - console script shim
    sys.exit(main(process=True))


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main(process=True))
