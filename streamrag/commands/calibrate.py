"""``streamrag calibrate MEASUREMENTS --out PROFILE.toml``: fit a latency profile to your
own measured durations (standard-library imports only at top level)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from streamrag.calibration.calibrate import Calibration

HELP = "fit a latency profile (G, L, F or any stage) to measured durations"

EPILOG = """\
examples:
  streamrag calibrate timings.csv --out profiles/mine.toml
  streamrag calibrate traces.json --span retrieve=L --span llm.generate=G --out mine.toml
  streamrag calibrate livekit.json --turn span:agent_turn --span llm_request:last=F \
      --span llm_request:first=G --span 'function_tool=L.{lk.function_tool.name}' --out agent.toml
  streamrag calibrate jaeger.json --turn span:turn --span llm:last=F --span llm:first=G \
      --span 'execute_tool search_docs=L' --out pipecat.toml
  streamrag simulate --table t.csv --scenario my.toml --set latency.profile=profiles/mine.toml --out runs/x

MEASUREMENTS is a CSV or JSON lines of `stage, duration_ms` (an optional `timestamp` is
kept for provenance), or a trace export — OpenTelemetry's OTLP JSON or Jaeger's JSON
download — with spans mapped to stages by --span rules NAME[KEY=VALUE,...][:ORDER]=STAGE:
the span name, attribute filters, the position within a turn (first, last, N, -N; the
turn given by --turn span:NAME, attr:KEY or trace), and the stage, where {KEY} is
replaced by the span's attribute (one stage per tool). Rules apply in the order given
and a span counts once; a span exported twice counts once; failed and timed-out spans
(and stages cut by a cancellation) are counted per stage and not fitted; the calls of a
Speculator's spans (speculate.tool_call) are counted by outcome. Each stage gets a log-normal, a gamma and a Weibull fit
(maximum likelihood) and its empirical quantiles up to P90 with a generalized-Pareto
tail above; the parametric fit with the smallest AIC is chosen if the 5% KS test does
not reject it, else the quantiles. A stage with fewer than --min-n durations is an
error; one whose durations are all equal becomes a constant; one too small to measure
its P99 (fewer than 1,000 durations) gets a warning. The profile records the input's
sha256, n per stage and every candidate's KS distance and AIC; PROFILE.png (next to it)
plots the fits.
"""

# calibration.fit.ModelChoice, not imported: --help stays instant (a test ties the two)
MODELS = ("auto", "lognormal", "gamma", "weibull", "quantiles")


def span_rule(text: str) -> str:
    """A ``--span`` rule, checked (:func:`streamrag.calibration.spans.parse_rule`)."""
    from streamrag.calibration.spans import parse_rule

    try:
        parse_rule(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


def turn_key(text: str) -> str:
    from streamrag.calibration.spans import parse_turn

    try:
        parse_turn(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return text


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
        "--span",
        dest="spans",
        action="append",
        default=[],
        type=span_rule,
        metavar="RULE",
        help="trace exports: NAME[KEY=VALUE,...][:first|last|N]=STAGE, e.g. llm_request:first=G (repeatable)",
    )
    p.add_argument(
        "--turn",
        type=turn_key,
        metavar="SPEC",
        help="trace exports: what a turn is, for :first/:last — span:NAME (an ancestor span), attr:KEY or trace",
    )
    p.add_argument("--name", help="the profile's name (default: the file name without .toml)")
    p.add_argument("--description", help="the profile's description (default: what was fitted to what)")
    p.add_argument("--model", choices=MODELS, default="auto", help="force one model for every stage (default: auto)")
    p.add_argument(
        "--min-n",
        dest="min_n",
        type=min_n_value,
        default=20,
        metavar="N",
        help="fewest durations a stage needs (default 20; lower it knowingly: the profile then records a warning)",
    )
    figure = p.add_mutually_exclusive_group()
    figure.add_argument(
        "--figure",
        metavar="PATH",
        help="where to write the CDF/QQ figure, .png, .pdf or .svg by its extension (default: PROFILE.png, or --figure-format's suffix)",
    )
    figure.add_argument("--no-figure", action="store_true", help="write no figure")
    p.set_defaults(run=run)


def _rules(texts: list[str]) -> list[str]:
    """The rules, each selector (what is left of its last ``=``) given one stage only."""
    from streamrag.base.errors import ConfigError

    stage_of: dict[str, str] = {}
    for text in texts:
        selector, _, stage = text.rpartition("=")
        if stage_of.get(selector, stage) != stage:
            raise ConfigError(f"--span {text}: spans {selector!r} are already mapped to stage {stage_of[selector]!r}")
        stage_of[selector] = stage
    return list(dict.fromkeys(texts))


def run(args: argparse.Namespace) -> int:
    from streamrag.base.errors import ConfigError, InputError
    from streamrag.base.figures import figure_format, figure_name
    from streamrag.base.system.outputs import check_out_file
    from streamrag.calibration.calibrate import calibrate
    from streamrag.calibration.fit import MIN_N
    from streamrag.commands._logging import say

    out = Path(args.out)
    if out.suffix != ".toml":
        raise ConfigError(
            f"--out {args.out}: a profile file name ends in .toml (that is how latency.profile tells a file from a built-in name)"
        )
    default_figure = out.with_suffix(Path(figure_name(out.stem)).suffix)  # PROFILE.png, or --figure-format's
    figure = None if args.no_figure else Path(args.figure) if args.figure else default_figure
    check_out_file(out, option="--out")
    if figure is not None:
        figure_format(figure)  # .png, .pdf or .svg, refused before the fit otherwise
        check_out_file(figure, option="--figure")
    try:
        result = calibrate(
            args.measurements,
            out,
            spans=_rules(args.spans),
            turn=args.turn,
            name=args.name,
            description=args.description,
            min_n=args.min_n,
            choice=args.model,
            figure=figure,
        )
    except OSError as exc:
        raise InputError(f"{exc.filename or out}: {exc.strerror or exc}") from None
    for fit in result.fits:
        if fit.n < MIN_N:
            say(
                f"streamrag: warning: stage {fit.stage!r} fitted to only {fit.n} durations (--min-n {args.min_n})",
                level="warning",
                event="few durations",
                stage=fit.stage,
                n=fit.n,
                min_n=args.min_n,
            )
        if fit.warning:
            say(f"streamrag: warning: {fit.warning}", level="warning", event="small sample", stage=fit.stage)
        if fit.unit_warning:
            say(f"streamrag: warning: {fit.unit_warning}", level="warning", event="mixed units", stage=fit.stage)
    print("\n".join(_table(result)))
    meas = result.measurements
    ignored = meas.ignored_spans
    if ignored:
        print(f"ignored {sum(ignored.values())} spans of {len(ignored)} unmapped names: {', '.join(sorted(ignored))}")
    for line in _selection_lines(meas.selection):
        print(line)
    wrote = f"wrote {result.profile_path}" + (f" and {result.figure_path}" if result.figure_path else "")
    print(f"{wrote}; use it with --set latency.profile={result.profile_path}")
    return 0


def _selection_lines(selection: dict[str, Any]) -> list[str]:
    """What the span rules left out: duplicates, failed spans per stage, spans outside turns."""
    lines = []
    if selection.get("n_turns") is not None:
        lines.append(f"turns: {selection['n_turns']}")
    if selection.get("duplicate_spans"):
        lines.append(f"dropped {selection['duplicate_spans']} spans exported twice (same trace and span id)")
    for stage, counts in selection.get("excluded", {}).items():
        cut = f", {counts['cancelled']} cancelled" if counts.get("cancelled") else ""
        lines.append(f"stage {stage}: not fitted {counts['error']} failed, {counts['timeout']} timed-out{cut} spans")
    outcomes = selection.get("call_outcomes")
    if outcomes:
        lines.append("speculative calls by outcome: " + ", ".join(f"{k} {n}" for k, n in outcomes.items()))
    if selection.get("outside_turns"):
        lines.append(f"skipped {selection['outside_turns']} spans outside any turn")
    for rule, n in selection.get("missing_attribute", {}).items():
        lines.append(f"--span {rule}: skipped {n} spans without the attribute its stage names")
    return lines


def _table(result: Calibration) -> list[str]:
    """One line per stage: n, chosen model, AIC and KS distances, the chosen model's P50/P90."""
    from streamrag.calibration.fit import PARAMETRIC

    header = (
        "stage",
        "n",
        "chosen",
        *(f"AIC {k}" for k in PARAMETRIC),
        *(f"KS {k}" for k in (*PARAMETRIC, "quantiles")),
        "P50 ms",
        "P90 ms",
    )
    rows = [header]
    for fit in result.fits:
        ks = {c.kind: f"{c.ks:.4f}" for c in fit.candidates}
        aic = {c.kind: f"{c.aic:.1f}" for c in fit.candidates if c.aic is not None}
        p50, p90 = fit.model.quantile_ms(0.5), fit.model.quantile_ms(0.9)
        rows.append(
            (
                fit.stage,
                str(fit.n),
                fit.chosen,
                *(aic.get(k, "-") for k in PARAMETRIC),
                *(ks.get(k, "-") for k in (*PARAMETRIC, "quantiles")),
                f"{p50:.1f}",
                f"{p90:.1f}",
            )
        )
    widths = [max(len(r[i]) for r in rows) for i in range(len(header))]
    return ["  ".join(cell.ljust(w) for cell, w in zip(row, widths, strict=True)).rstrip() for row in rows]
