"""Whole-analysis throughput in questions per second, on generated CRAG-shaped data.

Arms, all over the same generated ``.jsonl.bz2`` (per-question scope, paper preset, k = 3):

- first, what a user runs: ``streamrag analyze FILE --cache C --jobs 2`` from a shell with
  the chunks cached (imports, analysis, statistics, every output), with each question's
  index cached too (``CACHE/index``) and without it (the run then fills it), interleaved;

- cold, html.parser (the paper preset) and lexbor, 2 processes: read → HTML → chunks →
  prefix rankings → metrics, filling an empty chunk cache (and the index cache);
- warm: the same with chunks from the cache, the indexes not (tokenizing and indexing
  again), then with both (retrieval and metrics only); the rows must equal the cold run's;
- reading only: decompressing and validating the file with chunks from the cache;
- analysis only, from chunks in memory: streamrag's analyzer versus a peer that
  re-scores each prefix from scratch with ``rank_bm25.BM25Okapi`` (okapi idf on both
  sides so the rankings are comparable), the way an analysis without the incremental
  identity would run. The benchmark checks that t_sc and t_suf agree on every question.

    .venv/bin/python benchmarks/bench_analysis.py [--questions 300]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import OUT_DIR, save
from rank_bm25 import BM25Okapi

from streamrag.analysis import metrics
from streamrag.analysis.execution import analyze_file
from streamrag.analysis.stabilize import AnalysisSettings, analyze_question
from streamrag.data.chunk_cache import ChunkCache
from streamrag.data.chunking import ChunkSettings
from streamrag.data.generated.records import GeneratorSettings, write_crag_file
from streamrag.data.grounding import gold_chunks
from streamrag.data.ingest import ingest
from streamrag.retrieval import BM25Params, RegexTokenizer, rank_topk


def _peer_row(query: str, chunks: list[str], answers: tuple[str, ...], k: int) -> tuple[int, int | None]:
    tokenize = RegexTokenizer()
    bm25 = BM25Okapi([tokenize(c) for c in chunks])
    words = query.split()
    topk = [rank_topk(bm25.get_scores(tokenize(" ".join(words[:t]))), k) for t in range(1, len(words) + 1)]
    return metrics.t_sc([int(r[0]) for r in topk]), metrics.t_suf(topk, gold_chunks(chunks, answers))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--questions", type=int, default=300)
    args = parser.parse_args()
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    path = OUT_DIR / f"analysis_{args.questions}q.jsonl.bz2"
    if not path.exists():
        write_crag_file(path, GeneratorSettings(n_questions=args.questions, seed=11))
    n = args.questions
    arms: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for parser_name in ("html.parser", "lexbor"):
            cache = ChunkCache(Path(tmp) / parser_name)
            settings = AnalysisSettings(chunks=ChunkSettings(parser=parser_name))
            started = time.perf_counter()
            rows = [a.row for a in analyze_file(path, settings, split=None, cache=cache, jobs=2)]
            arms[f"cold, {parser_name}, 2 processes"] = time.perf_counter() - started
            assert len(rows) == n
            # The workers filled the index cache too; first a run with the chunks alone.
            shutil.rmtree(cache.root / "index")
            started = time.perf_counter()
            rows_chunks = [a.row for a in analyze_file(path, settings, split=None, cache=cache, jobs=2)]
            arms[f"warm (chunks cached, indexes not), {parser_name}"] = time.perf_counter() - started
            started = time.perf_counter()
            rows_warm = [a.row for a in analyze_file(path, settings, split=None, cache=cache, jobs=2)]
            arms[f"warm (chunks and indexes cached), {parser_name}"] = time.perf_counter() - started
            if not rows == rows_chunks == rows_warm:
                raise SystemExit(f"{parser_name}: the rows differ between cold and cached runs")

        # What a user runs, from a shell, chunks cached (the paper preset's html.parser
        # cache filled above): interpreter start, imports, analysis on 2 processes,
        # statistics and every output; without the index cache (the run fills it) and
        # with it, interleaved, best of 3 each; the tables must be byte-identical.
        shell: dict[str, list[float]] = {"indexes not cached": [], "indexes cached": []}
        tables = set()
        for _ in range(3):
            for arm in shell:
                if arm == "indexes not cached":
                    shutil.rmtree(Path(tmp) / "html.parser" / "index")
                out = Path(tmp) / "run"
                shutil.rmtree(out, ignore_errors=True)
                command = [str(Path(sys.executable).with_name("streamrag")), "analyze", str(path), "--split", "all",
                           "--cache", str(Path(tmp) / "html.parser"), "--no-figures", "--jobs", "2", "--out", str(out),
                           "--quiet"]  # fmt: skip
                started = time.perf_counter()
                subprocess.run(command, check=True, stdout=subprocess.DEVNULL)
                shell[arm].append(time.perf_counter() - started)
                tables.add((out / "stabilization.csv").read_bytes())
        if len(tables) != 1:
            raise SystemExit("streamrag analyze wrote different tables with and without the index cache")
        arms = {
            "from a shell: streamrag analyze, chunks and indexes cached, 2 processes (best of 3)": min(shell["indexes cached"]),
            "from a shell: the same, chunks cached, indexes not (best of 3)": min(shell["indexes not cached"]),
            **arms,
        }

        cache = ChunkCache(Path(tmp) / "lexbor")
        okapi = AnalysisSettings(chunks=ChunkSettings(parser="lexbor"), bm25=BM25Params(idf="okapi"))
        started = time.perf_counter()
        questions = list(ingest(path, settings=okapi.chunks, cache=cache))
        arms["reading only (chunks cached)"] = time.perf_counter() - started
        # Analysis proper, from chunks in memory: both arms tokenize, index, rank every
        # prefix and derive t_sc and t_suf; streamrag also computes both groundings, the
        # k = 1/3/5 arms, the anchors and the coverage the simulator needs.
        started = time.perf_counter()
        ours = [(a.row["t_sc"], a.row["t_suf"]) for a in (analyze_question(q, okapi) for q in questions)]
        arms["analysis only, okapi idf (streamrag)"] = time.perf_counter() - started
        started = time.perf_counter()
        peer = [_peer_row(q.record.query, q.chunks, q.record.answers, 3) for q in questions]
        arms["analysis only, okapi idf, rank_bm25 per prefix (peer)"] = time.perf_counter() - started
    agree = sum(a == b for a, b in zip(ours, peer, strict=True))
    rows = {name: {"seconds": round(s, 2), "questions_per_s": round(n / s, 1)} for name, s in arms.items()}
    width = max(map(len, rows))
    print(f"{n} generated questions ({path.stat().st_size / 1e6:.0f} MB .bz2)")
    for name, r in rows.items():
        print(f"{name:<{width}}  {r['seconds']:>7.2f} s  {r['questions_per_s']:>8.1f} q/s")
    ratio = arms["analysis only, okapi idf, rank_bm25 per prefix (peer)"] / arms["analysis only, okapi idf (streamrag)"]
    print(f"analysis only, streamrag vs rank_bm25 per prefix: {ratio:.1f}x; t_sc/t_suf agree on {agree}/{n}")
    print(f"saved {save('analysis', {'questions': n, 'arms': rows, 'ratio_vs_rank_bm25': round(ratio, 2), 'agree': agree})}")
    return 0 if agree == n else 1


if __name__ == "__main__":
    sys.exit(main())
