"""``streamrag calibrate MEASUREMENTS --out PROFILE.toml``: fit a latency profile to your
own measured durations (standard-library imports only at top level)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from streamrag.calibration.calibrate import Calibration

HELP = "fit a latency profile (G, L, F or any stage) to measured durations"

EPILOG = """\
examples:
  streamrag calibrate timings.csv --out profiles/mine.toml
  streamrag calibrate traces.json --span retrieve=L --span llm.generate=G --out mine.toml
  streamrag simulate --table t.csv --scenario my.toml --set latency.profile=profiles/mine.toml --out runs/x

MEASUREMENTS is a CSV or JSON lines of `stage, duration_ms` (an optional `timestamp` is
kept for provenance), or an OpenTelemetry span export (OTLP JSON) with span names
mapped to stages by --span. Each stage gets a log-normal and a gamma fit (maximum
likelihood) and its empirical quantiles (101 points); the parametric fit with the
smaller KS distance is chosen if the 5% KS test does not reject it, else the quantiles.
A stage with fewer than --min-n durations is an error; one whose durations are all equal
becomes a constant. The profile records the input's sha256, n per stage and every
candidate's KS distance and AIC; PROFILE.png (next to it) plots the fits.
"""

MODELS = ("auto", "lognormal", "gamma", "quantiles")


def span_mapping(text: str) -> tuple[str, str]:
    """``NAME=STAGE`` (the span name may itself hold ``=``: the last one splits)."""
    name, sep, stage = text.rpartition("=")
    if not sep or not name or not stage.strip():
        raise argparse.ArgumentTypeError(f"expected NAME=STAGE, e.g. retrieve=L, got {text!r}")
    return name, stage.strip()


def min_n_value(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
    if value < 3:
        raise argparse.ArgumentTypeError(f"{text!r}: at least 3 durations are needed to fit two parameters and test them")
    return value


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "calibrate", help=HELP, description=HELP, epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    p.add_argument(
        "measurements", metavar="MEASUREMENTS", help="CSV / JSON lines of stage,duration_ms, or an OTLP JSON span export"
    )
    p.add_argument("--out", required=True, metavar="PROFILE.toml", help="profile file to write (a path ending in .toml)")
    p.add_argument(
        "--span", dest="spans", action="append", default=[], type=span_mapping, metavar="NAME=STAGE",
        help="OpenTelemetry exports: fit spans named NAME as stage STAGE (repeatable)",
    )  # fmt: skip
    p.add_argument("--name", help="the profile's name (default: the file name without .toml)")
    p.add_argument("--description", help="the profile's description (default: what was fitted to what)")
    p.add_argument("--model", choices=MODELS, default="auto", help="force one model for every stage (default: auto)")
    p.add_argument(
        "--min-n", dest="min_n", type=min_n_value, default=20, metavar="N",
        help="fewest durations a stage needs (default 20; lower it knowingly: the profile then records a warning)",
    )  # fmt: skip
    figure = p.add_mutually_exclusive_group()
    figure.add_argument("--figure", metavar="PATH",
                        help="where to write the CDF/QQ figure, .png, .pdf or .svg by its extension (default: PROFILE.png)")  # fmt: skip
    figure.add_argument("--no-figure", action="store_true", help="write no figure")
    p.set_defaults(run=run)


def _mapping(pairs: list[tuple[str, str]]) -> dict[str, str]:
    from streamrag.base.errors import ConfigError

    out: dict[str, str] = {}
    for name, stage in pairs:
        if out.get(name, stage) != stage:
            raise ConfigError(f"--span {name}={stage}: span {name!r} is already mapped to stage {out[name]!r}")
        out[name] = stage
    return out


def run(args: argparse.Namespace) -> int:
    from streamrag.base.errors import ConfigError, InputError
    from streamrag.base.figures import figure_format
    from streamrag.base.outputs import check_out_file
    from streamrag.calibration.calibrate import calibrate
    from streamrag.calibration.fit import MIN_N
    from streamrag.commands._logging import say

    out = Path(args.out)
    if out.suffix != ".toml":
        raise ConfigError(
            f"--out {args.out}: a profile file name ends in .toml (that is how latency.profile tells a file from a built-in name)"
        )
    figure = None if args.no_figure else Path(args.figure) if args.figure else out.with_suffix(".png")
    check_out_file(out, option="--out")
    if figure is not None:
        figure_format(figure)  # .png, .pdf or .svg, refused before the fit otherwise
        check_out_file(figure, option="--figure")
    try:
        result = calibrate(
            args.measurements, out, spans=_mapping(args.spans), name=args.name, description=args.description,
            min_n=args.min_n, choice=args.model, figure=figure,
        )  # fmt: skip
    except OSError as exc:
        raise InputError(f"{exc.filename or out}: {exc.strerror or exc}") from None
    for fit in result.fits:
        if fit.n < MIN_N:
            say(f"streamrag: warning: stage {fit.stage!r} fitted to only {fit.n} durations (--min-n {args.min_n})",
                level="warning", event="few durations", stage=fit.stage, n=fit.n, min_n=args.min_n)  # fmt: skip
    print("\n".join(_table(result)))
    ignored = result.measurements.ignored_spans
    if ignored:
        print(f"ignored {sum(ignored.values())} spans of {len(ignored)} unmapped names: {', '.join(sorted(ignored))}")
    wrote = f"wrote {result.profile_path}" + (f" and {result.figure_path}" if result.figure_path else "")
    print(f"{wrote}; use it with --set latency.profile={result.profile_path}")
    return 0


def _table(result: Calibration) -> list[str]:
    """One line per stage: n, chosen model, KS distances, AIC, the chosen model's P50/P90."""
    header = (
        "stage",
        "n",
        "chosen",
        "KS lognormal",
        "KS gamma",
        "KS quantiles",
        "AIC lognormal",
        "AIC gamma",
        "P50 ms",
        "P90 ms",
    )
    rows = [header]
    for fit in result.fits:
        ks = {c.kind: f"{c.ks:.4f}" for c in fit.candidates}
        aic = {c.kind: f"{c.aic:.1f}" for c in fit.candidates if c.aic is not None}
        p50, p90 = fit.model.quantile_ms(0.5), fit.model.quantile_ms(0.9)
        rows.append((
            fit.stage, str(fit.n), fit.chosen,
            ks.get("lognormal", "-"), ks.get("gamma", "-"), ks.get("quantiles", "-"),
            aic.get("lognormal", "-"), aic.get("gamma", "-"), f"{p50:.1f}", f"{p90:.1f}",
        ))  # fmt: skip
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    return ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows]
