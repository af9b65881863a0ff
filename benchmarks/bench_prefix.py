"""Prefix retrieval: streamrag's incremental prefix rankings vs rank_bm25 from scratch.

For every question (per-question scope: its own chunks are the corpus) both arms produce
the top-k of every word prefix q[1:t], t = 1 … n, with the okapi idf so that scores are
comparable, and the benchmark asserts that the top-k are identical.

- streamrag: ``BM25Index.from_tokens`` once, then ``prefix_rankings`` (one O(new word)
  update per prefix);
- rank_bm25: ``BM25Okapi(tokenized chunks)`` once, then for each prefix: tokenize
  ``q[1:t]`` and ``get_scores`` from scratch.

Both arms rank with the same ``rank_topk`` (score desc, id asc) so the comparison
isolates index build and scoring. Chunk tokenization is shared and timed on its own.
Each phase is timed over all questions, best of ``--repeats`` runs, the arms in the
order A B B A A B …; the best CPU time of a whole arm is reported too.

Data: ~200 generated CRAG-shaped questions (``streamrag.data.generated.records``, ≈ 150 chunks of
120 words) and, when present, CRAG's real 10-record sample.

Run: ``.venv/bin/python benchmarks/bench_prefix.py`` (writes ``benchmarks/out/bench_prefix.json``).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import sys
import time
from importlib.metadata import version
from pathlib import Path

import numpy as np
from _common import record
from rank_bm25 import BM25Okapi

from streamrag.data.chunking import ChunkSettings, chunk_pages
from streamrag.data.crag import SearchResult
from streamrag.retrieval import BM25Index, BM25Params, RegexTokenizer, prefix_rankings, rank_topk

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "out"
CRAG_SAMPLE = Path(os.environ.get("STREAMRAG_CRAG_DIR", ROOT.parent / "shared" / "data" / "crag")) / "dev_data.jsonl.bz2"
OKAPI = BM25Params(idf="okapi")

Question = tuple[str, list[str]]  # (query, chunks)


def synthetic_questions(n_questions: int, seed: int) -> list[Question]:
    from streamrag.data.generated.records import GeneratorSettings, generate_records

    # Markup does not change the visible words; without it, chunking is fast.
    settings = GeneratorSettings(n_questions=n_questions, seed=seed, html_overhead=0.0)
    chunking = ChunkSettings(parser="lexbor")
    return [
        (r["query"], chunk_pages([SearchResult(**p) for p in r["search_results"]], chunking)) for r in generate_records(settings)
    ]


def real_questions(path: Path) -> list[Question]:
    import bz2

    out = []
    with bz2.open(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            r = json.loads(line)
            out.append((r["query"], chunk_pages([SearchResult(**p) for p in r["search_results"]])))
    return out


def run_streamrag(tokenized: list[list[list[str]]], queries: list[str], k: int) -> tuple[float, float, list]:
    tokenizer = RegexTokenizer()
    t0 = time.perf_counter()
    indexes = [BM25Index.from_tokens(docs, tokenizer=tokenizer, params=OKAPI) for docs in tokenized]
    t1 = time.perf_counter()
    topks = [prefix_rankings(index, q, k=k).topk for index, q in zip(indexes, queries, strict=True)]
    t2 = time.perf_counter()
    return t1 - t0, t2 - t1, topks


def run_rank_bm25(tokenized: list[list[list[str]]], queries: list[str], k: int) -> tuple[float, float, list]:
    tokenizer = RegexTokenizer()
    t0 = time.perf_counter()
    models = [BM25Okapi(docs) for docs in tokenized]
    t1 = time.perf_counter()
    topks = []
    for model, q in zip(models, queries, strict=True):
        words = q.split()
        k_eff = min(k, model.corpus_size)
        rows = [rank_topk(model.get_scores(tokenizer(" ".join(words[:t]))), k_eff) for t in range(1, len(words) + 1)]
        topks.append(np.array(rows, dtype=np.int32).reshape(len(words), k_eff))
    t2 = time.perf_counter()
    return t1 - t0, t2 - t1, topks


def bench(name: str, questions: list[Question], k: int, repeats: int) -> dict:
    questions = [(q, c) for q, c in questions if c and q.split()]  # N = 0 / n = 0 are skipped
    queries = [q for q, _ in questions]
    tokenizer = RegexTokenizer()
    t0 = time.perf_counter()
    tokenized = [[tokenizer(c) for c in chunks] for _, chunks in questions]
    tokenize_s = time.perf_counter() - t0

    best = {"streamrag": [float("inf")] * 2, "rank_bm25": [float("inf")] * 2}
    cpu = {"streamrag": float("inf"), "rank_bm25": float("inf")}
    arms = (("streamrag", run_streamrag), ("rank_bm25", run_rank_bm25))
    results: dict[str, list] = {}
    for r in range(repeats):
        for arm, fn in arms if r % 2 == 0 else arms[::-1]:  # A B B A …: drift hits both arms alike
            c0 = time.process_time()
            build_s, prefix_s, topks = fn(tokenized, queries, k)
            cpu[arm] = min(cpu[arm], time.process_time() - c0)
            best[arm] = [min(best[arm][0], build_s), min(best[arm][1], prefix_s)]
            results[arm] = topks
        for i, (a, b) in enumerate(zip(results["streamrag"], results["rank_bm25"], strict=True)):
            if not np.array_equal(a, b):
                raise SystemExit(f"{name}: top-{k} differ for question {i}: {a.tolist()} vs {b.tolist()}")

    n_prefixes = sum(len(q.split()) for q in queries)
    sr, rb = best["streamrag"], best["rank_bm25"]
    return {
        "dataset": name,
        "n_questions": len(questions),
        "n_prefixes": n_prefixes,
        "mean_chunks": float(np.mean([len(c) for _, c in questions])),
        "mean_words": n_prefixes / len(questions),
        "k": k,
        "identical_topk": True,
        "tokenize_chunks_s": tokenize_s,
        "streamrag": {"build_s": sr[0], "prefix_s": sr[1], "total_s": sr[0] + sr[1], "cpu_s": cpu["streamrag"]},
        "rank_bm25": {"build_s": rb[0], "prefix_s": rb[1], "total_s": rb[0] + rb[1], "cpu_s": cpu["rank_bm25"]},
        "speedup": {
            "build": rb[0] / sr[0],
            "prefix": rb[1] / sr[1],
            "total": (rb[0] + rb[1]) / (sr[0] + sr[1]),
            "total_with_tokenize": (tokenize_s + rb[0] + rb[1]) / (tokenize_s + sr[0] + sr[1]),
        },
        "us_per_prefix": {"streamrag": sr[1] / n_prefixes * 1e6, "rank_bm25": rb[1] / n_prefixes * 1e6},
    }


def print_table(rows: list[dict]) -> None:
    head = f"{'dataset':<10}{'q':>5}{'prefixes':>9}{'chunks':>7} | {'phase':<7}{'streamrag':>11}{'rank_bm25':>11}{'ratio':>8}"
    print(head)
    print("-" * len(head))
    for r in rows:
        lead = f"{r['dataset']:<10}{r['n_questions']:>5}{r['n_prefixes']:>9}{r['mean_chunks']:>7.0f} | "
        blank = " " * (len(lead) - 2) + "| "
        for i, phase in enumerate(("build", "prefix", "total")):
            a, b = r["streamrag"][f"{phase}_s"], r["rank_bm25"][f"{phase}_s"]
            print(f"{lead if i == 0 else blank}{phase:<7}{a * 1e3:>9.1f}ms{b * 1e3:>9.1f}ms{b / a:>7.1f}×")
        print(
            f"{blank}{'(CPU, whole arm: ' + format(r['streamrag']['cpu_s'] * 1e3, '.1f') + ' / ' + format(r['rank_bm25']['cpu_s'] * 1e3, '.1f') + ' ms)':<37}"
        )
        print(f"{blank}{'(tokenize chunks, shared: ' + format(r['tokenize_chunks_s'] * 1e3, '.1f') + ' ms)':<37}")
    print("top-k identical in every prefix of every question, every run: yes")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--questions", type=int, default=200, help="generated questions")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--k", type=int, default=3)
    ap.add_argument("--repeats", type=int, default=5, help="best of this many runs per arm")
    args = ap.parse_args(argv)

    datasets = [("synthetic", synthetic_questions(args.questions, args.seed))]
    if CRAG_SAMPLE.exists():
        datasets.append(("crag-10", real_questions(CRAG_SAMPLE)))
    else:
        print(f"(real sample not found at {CRAG_SAMPLE}; skipped)", file=sys.stderr)
    rows = [bench(name, qs, args.k, args.repeats) for name, qs in datasets]
    print_table(rows)

    OUT.mkdir(parents=True, exist_ok=True)
    report = {
        "benchmark": "bench_prefix",
        "args": vars(args),
        "machine": {
            "python": platform.python_version(),
            "platform": platform.platform(),
            "cpu_count": os.cpu_count(),
            "numpy": version("numpy"),
            "scipy": version("scipy"),
            "rank_bm25": version("rank_bm25"),
        },
        "results": rows,
    }
    path = OUT / "bench_prefix.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(report, indent=2) + "\n")
    tmp.replace(path)
    record("bench_prefix", report)
    print(f"wrote {path.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
