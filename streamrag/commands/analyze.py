"""``streamrag analyze``: stabilization of every question of a CRAG file."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from streamrag.commands._common import (
    add_data_options,
    non_negative_int,
    open_cache,
    positive_int,
    probability,
    require_inputs,
)
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
                   help="prefix ranking by kind: bm25 (paper preset), dense (all-MiniLM-L6-v2 cosine; "
                   "needs pip install 'streamrag[dense]') or rank_bm25 (the reference: every prefix "
                   "re-scored from scratch by rank_bm25's BM25Okapi; the same tables as --idf okapi)")  # fmt: skip
    p.add_argument(
        "--asr-revisions",
        type=probability,
        default=None,
        metavar="P",
        help="rank ASR partial hypotheses from the seeded revision model: each word's arrival "
        "rewrites the trailing words with probability P (0: word prefixes, today's results)",
    )
    p.add_argument(
        "--asr-hypotheses",
        type=Path,
        default=None,
        metavar="FILE",
        help="rank recorded ASR partial hypotheses instead: JSON lines of {interaction_id, hypotheses: [{t_ms, text}, ...]}",
    )
    p.add_argument("--asr-window", type=positive_int, default=2, metavar="R", help="words a revision rewrites (default 2)")
    p.add_argument(
        "--asr-final-words",
        type=positive_int,
        default=3,
        metavar="F",
        help="a word is final once F later words arrived (default 3)",
    )
    p.add_argument("--asr-seed", type=non_negative_int, default=0, help="seed of the revision model (default 0)")
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


def asr_setting(args: argparse.Namespace) -> dict[str, Any] | None:
    """``AnalysisSettings.asr`` from the command line (None: word prefixes)."""
    from streamrag.base.errors import ConfigError

    if args.asr_revisions is not None and args.asr_hypotheses is not None:
        raise ConfigError("give --asr-revisions (the revision model) or --asr-hypotheses (a file), not both")
    if args.asr_hypotheses is not None:
        return {"kind": "file", "path": str(args.asr_hypotheses)}
    if args.asr_revisions is not None:
        return {"p": args.asr_revisions, "r": args.asr_window, "final_words": args.asr_final_words, "seed": args.asr_seed}
    return None


def run(args: argparse.Namespace) -> int:
    from streamrag.base.errors import ConfigError

    if (args.data is None) == (args.corpus is None):
        raise ConfigError("give DATA (a CRAG file) or --corpus DIR, one of the two")
    require_inputs(args.data, args.corpus)  # before the imports below: a typo costs milliseconds

    from streamrag.analysis.stabilize import AnalysisSettings
    from streamrag.analysis.study import run_study
    from streamrag.base.outputs import check_out_dir
    from streamrag.base.progress import file_progress
    from streamrag.data.chunking import ChunkSettings
    from streamrag.data.selection import Selection, read_ids
    from streamrag.retrieval.bm25 import BM25Params

    check_out_dir(args.out)
    settings = AnalysisSettings(
        chunks=ChunkSettings(parser=args.parser), bm25=BM25Params(idf=args.idf), k=args.k, grounding=args.grounding,
        retriever=args.retriever, compare_retrievers=args.compare_retrievers, entity_predictor=args.entity_predictor,
        asr=asr_setting(args),
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
    from streamrag.analysis.console import format_study  # (its statistics' imports ran during the analysis)

    print(format_study(result.summary, args.out))
    return 0
