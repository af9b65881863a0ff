"""``streamrag generate``: CRAG-shaped records, or a synthetic stabilization table.

streamrag generate OUT.jsonl[.bz2|.zst] --questions N [--page-words W] [--seed S]
streamrag generate OUT.csv --questions N --table [--seed S]
"""

from __future__ import annotations

import argparse
from pathlib import Path

_RECORD_SUFFIXES = (".jsonl", ".jsonl.bz2", ".jsonl.zst")  # streamrag.base.lines.SUFFIXES (not imported: --help stays instant)


def add_parser(sub: argparse._SubParsersAction) -> None:
    parser = sub.add_parser(
        "generate",
        help="generate CRAG-shaped data (or a stabilization table) of any size",
        description=(
            "Write N generated CRAG tasks 1&2 records (made-up text in realistic HTML, CRAG's "
            "proportions of domains, types and query lengths) as .jsonl, .jsonl.bz2 or .jsonl.zst, "
            "or with --table a synthetic stabilization table (CSV) calibrated to the anchor study."
        ),
    )
    parser.add_argument("out", type=Path, metavar="OUT", help="output file: .jsonl, .jsonl.bz2, .jsonl.zst, or .csv with --table")
    parser.add_argument("--questions", type=int, required=True, metavar="N", help="number of questions")
    parser.add_argument(
        "--page-words",
        type=int,
        default=3000,
        metavar="W",
        help="mean visible words per page, records only (default 3000 ≈ 150 chunks per question)",
    )
    parser.add_argument("--seed", type=int, default=0, metavar="S", help="random seed (default 0)")
    parser.add_argument(
        "--relaxed-share",
        type=float,
        default=0.0,
        metavar="P",
        help="records only: share of groundable questions whose pages word the answer so that only relaxed grounding "
        "finds it (reordered, stopwords between; default 0: today's data, byte for byte)",
    )
    parser.add_argument(
        "--table",
        action="store_true",
        help="write a synthetic stabilization table (CSV) instead of records, and OUT's name with "
        ".prefixes.parquet beside it (synthetic per-prefix evidence consistent with the table, bound to it)",
    )
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from streamrag.base.errors import ConfigError
    from streamrag.base.system.outputs import check_out_file

    out: Path = args.out
    if args.questions < 1:
        raise ConfigError(f"--questions must be ≥ 1, got {args.questions}")
    if args.seed < 0:
        raise ConfigError(f"--seed must be ≥ 0, got {args.seed}")
    check_out_file(out, option="OUT")
    if not out.parent.is_dir():
        raise ConfigError(f"cannot write {out}: folder {out.parent} does not exist")
    if args.table:
        if out.name.endswith(_RECORD_SUFFIXES):
            raise ConfigError(f"--table writes a CSV table; name the output *.csv, not {out.name}")
        return _write_table(out, args.questions, args.seed)
    if not out.name.endswith(_RECORD_SUFFIXES):
        raise ConfigError(f"output must end in .jsonl, .jsonl.bz2 or .jsonl.zst (or use --table for a .csv), got {out.name}")
    return _write_records(out, args)


def _write_table(out: Path, n_questions: int, seed: int) -> int:
    from streamrag.analysis.evidence.prefixes import evidence_frame, evidence_path_for, write_evidence
    from streamrag.analysis.evidence.synthetic import synthetic_evidence
    from streamrag.base.atomic import atomic_path, together
    from streamrag.commands._logging import say
    from streamrag.data.generated.synthetic_table import generate_stabilization_table

    table = generate_stabilization_table(n_questions, seed=seed)
    evidence = synthetic_evidence(table, seed=seed)
    table["t_suf"] = table["t_suf"].astype("Int64")  # "3", not "3.0"; undefined stays empty
    with together():  # the table and its evidence appear together (an interrupt: neither)
        with atomic_path(out) as tmp:
            table.to_csv(tmp, index=False)
        prefixes = write_evidence(evidence_frame(evidence.items()), evidence_path_for(out), table=out)
    say(f"wrote {out}: {len(table)} rows, and its synthetic per-prefix evidence {prefixes}", event="table written",
        out=str(out), rows=len(table), evidence=str(prefixes))  # fmt: skip
    return 0


def _write_records(out: Path, args: argparse.Namespace) -> int:
    from streamrag.base.progress import advancing, task_progress
    from streamrag.base.validation import validated
    from streamrag.commands._logging import say
    from streamrag.data.generated.records import GeneratorSettings, write_crag_file

    given = {"n_questions": args.questions, "page_words": args.page_words, "seed": args.seed, "relaxed_share": args.relaxed_share}
    settings = validated(GeneratorSettings, given, "generator settings")
    from streamrag.engine.clock import RealClock

    clock = RealClock()
    with task_progress(f"generating {out.name}", settings.n_questions) as update:
        stats = write_crag_file(out, settings, on_record=advancing(update))
    elapsed_s = clock.now_us() / 1e6
    mb = stats.n_json_bytes / 1e6
    say(
        f"wrote {out}: {stats.n_records} records, {mb:.1f} MB of JSON"
        + (f", {stats.n_file_bytes / 1e6:.1f} MB {'Zstandard' if out.suffix == '.zst' else 'bzip2'}" if stats.compressed else "")
        + f" in {elapsed_s:.1f} s ({mb / max(elapsed_s, 1e-9):.1f} MB/s of JSON)",
        event="records written", out=str(out), records=stats.n_records, json_bytes=stats.n_json_bytes,
        file_bytes=stats.n_file_bytes, elapsed_s=round(elapsed_s, 3),
    )  # fmt: skip
    return 0
