"""``streamrag stats TABLE --out DIR``: recompute summary.json and figures from a table.

The table is a stabilization table (design §7) — written by ``streamrag analyze`` or
published by another study. Standard-library imports only at top level.
"""

from __future__ import annotations

import argparse

from streamrag.commands._common import add_entity_context

JOINED_TABLE = "table.joined.csv"
"""The table with the --join columns, written into the output folder."""


def add_parser(sub: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = sub.add_parser(
        "stats",
        help="statistics (RQ1, RQ2, RQ4) and figures from a stabilization table",
        description=(
            "Read a stabilization table (one row per question, columns of design §7; as the anchor "
            "study publishes them, gold_density may be absent and phi rounded to 4 decimals), write "
            "summary.json (RQ1 phi statistics, RQ2 streamable fractions over the L x delta x "
            "theta grid, RQ4 group tests, gold-density robustness) and three figures (PNG, or --figure-format)."
        ),
    )
    p.add_argument("table", metavar="TABLE", help="stabilization table (CSV)")
    p.add_argument("--out", metavar="DIR", required=True, help="output folder (created if absent)")
    from streamrag.analysis.stats.params import add_arguments  # the parameters' one declaration

    add_arguments(p)
    p.add_argument(
        "--join",
        action="append",
        default=[],
        metavar="SOURCE",
        help="join columns by interaction_id first (repeatable): a question file (.jsonl[.bz2|.zst]: its "
        "query-side columns) or a CSV with interaction_id (e.g. the anchor's grounding_precision.split0.csv); "
        "writes DIR/table.joined.csv; unmatched ids are reported",
    )
    p.add_argument(
        "--entity-predictor",
        action="store_true",
        help="with --join QUESTIONS.jsonl: also compute the first entity's position (spaCy; needs pip install "
        "'streamrag[ner]'): t_entity, or t_entity_full with --entity-context full",
    )
    add_entity_context(p)
    p.set_defaults(run=run)
    return p


def run(args: argparse.Namespace) -> int:
    from streamrag.analysis.console import summary_lines
    from streamrag.analysis.stats.report import write_analysis_summary, write_figures
    from streamrag.analysis.stats.rq import summarize
    from streamrag.analysis.table import read_table
    from streamrag.base.errors import InputError
    from streamrag.base.system.outputs import check_out_dir

    out = check_out_dir(args.out)
    reports: list[dict] = []
    if args.join:
        from streamrag.analysis.join import join_table

        out.mkdir(parents=True, exist_ok=True)
        df, reports = join_table(
            args.table, args.join, out / JOINED_TABLE, entity=args.entity_context if args.entity_predictor else None
        )
    else:
        df = read_table(args.table)
    params = {
        "table": args.table,
        "L_ms": args.L_ms,
        "delta_wps": args.delta_wps,
        "theta": args.theta,
        "G_ms": args.G_ms,
        "density_cap": args.density_cap,
        "n_resamples": args.n_resamples,
        "seed": args.seed,
        "bootstrap_streams": args.bootstrap_streams,
    }
    summary = summarize(df, params=params)
    if reports:
        summary["join"] = reports
    try:
        out.mkdir(parents=True, exist_ok=True)
        write_analysis_summary(summary, out / "summary.json")
        figures = write_figures(df, summary, out)
    except OSError as exc:
        raise InputError(f"{exc.filename or out}: cannot write: {exc.strerror or exc}") from None
    from streamrag.analysis.join import report_lines

    print(
        "\n".join(
            [
                *summary_lines(summary, args.table),
                *report_lines(reports),
                f"wrote {out / 'summary.json'} and {len(figures)} figures",
            ]
        )
    )
    return 0
