"""``analyze`` options for global scope and external corpora (standard library only: imported for --help)."""

from __future__ import annotations

import argparse
from pathlib import Path

from streamrag.commands._common import non_negative_int


def add_global_options(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("scope and corpus")
    group.add_argument(
        "--scope",
        choices=("per-question", "global"),
        default="per-question",
        help="per-question: each question ranks its own pages (the paper); "
        "global: one index over every question's pages, or over --corpus",
    )
    group.add_argument(
        "--corpus",
        type=Path,
        metavar="DIR",
        help="a BEIR folder (corpus.jsonl, queries.jsonl, qrels/SPLIT.tsv) or the CRAG data "
        "folder (crag_v4_questions.jsonl + the pages there), instead of DATA",
    )
    group.add_argument(
        "--gold",
        choices=("answer", "own", "labeled"),
        default=None,
        help="global scope: gold = chunks holding the answer anywhere in the pool (default), "
        "only in the question's own pages, or the documents labeled as evidence "
        "(BEIR qrels: the only choice there)",
    )
    group.add_argument("--qrels", default="test", metavar="SPLIT", help="BEIR qrels split (default test)")
    group.add_argument(
        "--distractors",
        type=non_negative_int,
        metavar="N",
        help="BEIR: relevant documents + N sampled others instead of the whole corpus",
    )
    group.add_argument("--seed", type=int, default=0, help="seed of the distractor sample (default 0)")
    group.add_argument(
        "--index-dir",
        type=Path,
        metavar="DIR",
        help="keep the global index here (.npy + JSON); reused, memory-mapped, when the corpus and settings match",
    )
