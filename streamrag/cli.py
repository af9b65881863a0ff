"""The ``streamrag`` command.

Each subcommand lives in ``streamrag/commands/<name>.py`` and exposes
``add_parser(subparsers)`` and ``run(args) -> int``. Command modules import only the
standard library at top level; heavy imports happen inside ``run`` so that ``--help``
is instant.

Exit codes: 0 ok, 1 a known error (one line on stderr), 2 usage.
"""

from __future__ import annotations

import argparse
import importlib
import sys

from streamrag import __version__

COMMANDS = (
    "demo", "analyze", "stats", "simulate", "compare", "sweep", "trace", "calibrate", "ingest", "generate", "list",
)  # fmt: skip


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="streamrag",
        description="Measure tool-intent stabilization in streaming RAG and simulate speculative tool calls.",
    )
    parser.add_argument("--version", action="version", version=f"streamrag {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress details to stderr")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for name in COMMANDS:
        importlib.import_module(f"streamrag.commands.{name}").add_parser(sub)
    return parser


def _configure_logging(verbose: bool) -> None:
    import logging

    import structlog

    level = logging.INFO if verbose else logging.WARNING
    structlog.configure(
        wrapper_class=structlog.make_filtering_bound_logger(level),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        processors=[structlog.processors.add_log_level, structlog.dev.ConsoleRenderer(colors=False)],
    )


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse exits 2 on usage errors, 0 on --help
        return int(exc.code or 0)
    _configure_logging(args.verbose)
    from streamrag.errors import StreamragError
    from streamrag.terminal import printable

    try:
        code = int(args.run(args) or 0)
        sys.stdout.flush()  # a closed pipe shows here, not in the interpreter's exit
        return code
    except BrokenPipeError:
        return _reader_gone()
    except StreamragError as exc:
        print(f"streamrag: error: {printable(str(exc))}", file=sys.stderr)
        return 1
    except OSError as exc:  # the file system refused (disk full, permissions changed): not a bug
        if exc.filename is None:
            raise
        print(f"streamrag: error: {printable(str(exc.filename))}: {exc.strerror or exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("streamrag: interrupted", file=sys.stderr)
        return 130


def _reader_gone() -> int:
    """stdout's reader closed the pipe (``streamrag trace … | head``): it has what it
    wanted, files are written, so exit 0 without a message; later writes go nowhere."""
    import os

    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    os.close(devnull)
    return 0


def entry() -> None:  # pragma: no cover - console script shim
    sys.exit(main())


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
