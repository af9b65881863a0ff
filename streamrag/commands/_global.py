"""``analyze`` options for global scope and external corpora (standard library only: imported for --help)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from streamrag.commands._common import non_negative_int, open_cache, read_ids


def add_global_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("scope and corpus")
    group.add_argument("--scope", choices=("per-question", "global"), default="per-question",
                       help="per-question: each question ranks its own pages (the paper); "
                       "global: one index over every question's pages, or over --corpus")
    group.add_argument("--corpus", type=Path, metavar="DIR",
                       help="a BEIR folder (corpus.jsonl, queries.jsonl, qrels/SPLIT.tsv) or the CRAG data "
                       "folder (crag_v4_questions.jsonl + the pages there), instead of DATA")
    group.add_argument("--gold", choices=("answer", "own", "labeled"), default=None,
                       help="global scope: gold = chunks holding the answer anywhere in the pool (default), "
                       "only in the question's own pages, or the documents labeled as evidence "
                       "(BEIR qrels: the only choice there)")
    group.add_argument("--qrels", default="test", metavar="SPLIT", help="BEIR qrels split (default test)")
    group.add_argument("--distractors", type=non_negative_int, metavar="N",
                       help="BEIR: relevant documents + N sampled others instead of the whole corpus")
    group.add_argument("--seed", type=int, default=0, help="seed of the distractor sample (default 0)")
    group.add_argument("--index-dir", type=Path, metavar="DIR",
                       help="keep the global index here (.npy + JSON); reused, memory-mapped, when the "
                       "corpus and settings match")  # fmt: skip


def wants_pool(args: Any) -> bool:
    return args.scope == "global" or args.corpus is not None


def run_pool(args: Any, settings: Any) -> Any:
    """Run ``analyze`` on a pool (global scope, or per-question over a corpus folder)."""
    from streamrag.analysis.global_study import open_source, run_pool_study
    from streamrag.analysis.runner import dense_embedder
    from streamrag.errors import ConfigError

    if (args.data is None) == (args.corpus is None):
        raise ConfigError("give DATA (a CRAG file) or --corpus DIR, not both")
    is_beir = args.corpus is not None and (args.corpus / "corpus.jsonl").exists()
    gold = args.gold or ("labeled" if is_beir else "answer")
    if is_beir and gold != "labeled":
        raise ConfigError(f"--gold {gold}: a BEIR corpus has no answer strings; its gold is the qrels (--gold labeled)")
    if is_beir and args.scope != "global":
        raise ConfigError("a BEIR corpus is analyzed in global scope: add --scope global")
    if args.index_dir is not None and args.scope != "global":
        raise ConfigError("--index-dir applies to --scope global")
    cache = open_cache(args)
    source = open_source(
        args.corpus or args.data, settings, split=args.split, limit=args.limit, ids=read_ids(args.ids),
        cache=cache, jobs=args.jobs, on_error="skip" if args.skip_bad else "raise",
        qrels_split=args.qrels, distractors=args.distractors, seed=args.seed,
    )  # fmt: skip
    return run_pool_study(
        source, args.out, settings, scope=args.scope, gold=gold, index_dir=args.index_dir, figures=not args.no_figures,
        embedder=dense_embedder(settings, cache, None),
    )  # fmt: skip
