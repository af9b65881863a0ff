"""Dense retrieval cost: all-MiniLM-L6-v2 on 2 CPU threads, against BM25 on the same data.

Arms (torch intra-op threads = 2, the chunks of CRAG's real 10-record sample, parsed once
and held in memory):

- **chunks embedded per second**: ``MiniLMEmbedder.embed`` over the first ``--chunks``
  chunks (real web text: ~180 word pieces per 120-word chunk, truncated at 256);
- **prefixes embedded per second**: every word prefix of the first real v4 questions
  (``crag_v4_questions.jsonl``) until ``--prefixes`` prefixes;
- **analysis, BM25 vs dense**: ``analyze_question`` over the sample's questions with
  BM25 (the peer), dense with an empty embedding cache (cold: every chunk and prefix
  embedded) and dense again (warm: every vector read from the cache);
- **embedding cache size**: ``--cache-entries`` vectors (d = 384) written to a fresh
  SQLite cache, bytes per entry scaled to 10⁵ chunks (measured on the smaller count, then
  multiplied: the b-tree grows linearly), next to the in-memory float32 matrix
  (N × 384 × 4 B) and the read speed;
- **global exact top-k**: ``exact_topk`` of ``--global-queries`` prefix vectors over
  ``--global-n`` random unit vectors (float32 grid values): the brute-force cost per
  prefix at global scale, no approximation.

    .venv/bin/python benchmarks/bench_dense.py [--chunks 400] [--prefixes 2000]

Needs the ``dense`` extra. Writes ``benchmarks/out/dense.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from _common import CRAG_DIR, save

from streamrag.analysis.stabilize import AnalysisSettings, analyze_question
from streamrag.data.ingest import ingest
from streamrag.retrieval.dense.embed_cache import CachedEmbedder, EmbeddingCache
from streamrag.retrieval.dense.minilm import MiniLMEmbedder, dense_unavailable_reason
from streamrag.retrieval.dense.retriever import exact_topk, to_grid
from streamrag.retrieval.kinds import RetrieverEnv


def _timed(fn):  # type: ignore[no-untyped-def]
    started = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - started


def _real_prefixes(limit: int) -> list[str]:
    prefixes: list[str] = []
    with open(CRAG_DIR / "crag_v4_questions.jsonl", encoding="utf-8") as fh:
        for line in fh:
            words = json.loads(line)["query"].split()
            prefixes += [" ".join(words[:t]) for t in range(1, len(words) + 1)]
            if len(prefixes) >= limit:
                break
    return prefixes[:limit]


def _cache_size(n_entries: int, vectors: np.ndarray) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        cache = EmbeddingCache(tmp, "bench/d=384", 384)
        rng = np.random.default_rng(0)
        items = [(cache.key(f"chunk {i}"), vectors[i % len(vectors)] if i < len(vectors) else rng.standard_normal(384).astype(np.float32))
                 for i in range(n_entries)]  # fmt: skip
        _, write_s = _timed(lambda: [cache.put_many(items[s : s + 1000]) for s in range(0, n_entries, 1000)])
        cache.close()  # checkpoints the WAL into the main file
        size = sum(p.stat().st_size for p in Path(tmp).iterdir())
        reader = EmbeddingCache(tmp, "bench/d=384", 384)
        keys = [k for k, _ in items]
        found, read_s = _timed(lambda: reader.get_many(keys))
        reader.close()
    per_entry = size / n_entries
    return {
        "entries_measured": n_entries,
        "bytes_per_entry": round(per_entry, 1),
        "disk_MB_per_1e5_chunks": round(per_entry * 1e5 / 1e6, 1),
        "ram_MB_per_1e5_chunks_float32_matrix": round(1e5 * 384 * 4 / 1e6, 1),
        "write_vectors_per_s": round(n_entries / write_s),
        "read_vectors_per_s": round(len(found) / read_s),
    }


def _global_topk(n: int, n_queries: int) -> dict[str, float]:
    rng = np.random.default_rng(1)
    corpus = np.empty((n, 384), dtype=np.float32)
    for s in range(0, n, 100_000):  # generate in slices: bounded float64 temporaries
        block = rng.standard_normal((min(100_000, n - s), 384))
        corpus[s : s + block.shape[0]] = to_grid(block / np.linalg.norm(block, axis=1, keepdims=True))
    queries = to_grid(rng.standard_normal((n_queries, 384)) / np.sqrt(384))
    _, seconds = _timed(lambda: exact_topk(queries, corpus, 3))
    return {"n_chunks": n, "n_prefixes": n_queries, "seconds": round(seconds, 2), "ms_per_prefix": round(1000 * seconds / n_queries, 2),
            "corpus_ram_MB": round(corpus.nbytes / 1e6)}  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--chunks", type=int, default=400)
    parser.add_argument("--prefixes", type=int, default=2000)
    parser.add_argument("--questions", type=int, default=10, help="questions of the real sample for the analysis arms")
    parser.add_argument("--cache-entries", type=int, default=20_000)
    parser.add_argument("--global-n", type=int, default=1_000_000)
    parser.add_argument("--global-queries", type=int, default=200)
    args = parser.parse_args()
    if (reason := dense_unavailable_reason()) is not None:
        print(reason, file=sys.stderr)
        return 1
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    sample = CRAG_DIR / "dev_data.jsonl.bz2"
    questions = list(ingest(sample, split=None))[: args.questions]
    chunks = [c for q in questions for c in q.chunks]
    model = MiniLMEmbedder(threads=2)
    _, load_s = _timed(lambda: model.embed(["warm-up: load the weights"]))
    print(f"model load {load_s:.1f} s (torch threads = 2, {os.cpu_count()} cores)")

    texts = chunks[: args.chunks]
    # Wall time on a shared machine includes waiting for the cores; process CPU time does
    # not, so chunks per CPU-second × 2 threads estimates the uncontended rate.
    cpu0 = time.process_time()
    vectors, chunk_s = _timed(lambda: model.embed(texts))
    chunk_cpu = time.process_time() - cpu0
    prefixes = _real_prefixes(args.prefixes)
    cpu0 = time.process_time()
    _, prefix_s = _timed(lambda: model.embed(prefixes))
    prefix_cpu = time.process_time() - cpu0
    speed = {
        "chunks": len(texts), "chunks_per_s": round(len(texts) / chunk_s, 1),
        "chunks_per_cpu_s": round(len(texts) / chunk_cpu, 1),
        "prefixes": len(prefixes), "prefixes_per_s": round(len(prefixes) / prefix_s, 1),
        "prefixes_per_cpu_s": round(len(prefixes) / prefix_cpu, 1),
        "mean_words_per_prefix": round(float(np.mean([len(p.split()) for p in prefixes])), 1),
        "load_average_1min": round(os.getloadavg()[0], 2),
    }  # fmt: skip
    print(f"embedding: {speed['chunks_per_s']} chunks/s ({speed['chunks_per_cpu_s']} per CPU-second; {len(texts)} real chunks), "
          f"{speed['prefixes_per_s']} prefixes/s ({speed['prefixes_per_cpu_s']} per CPU-second; {len(prefixes)} prefixes "
          f"of real v4 questions); load average {speed['load_average_1min']}")  # fmt: skip

    bm25 = AnalysisSettings()
    dense = AnalysisSettings(retriever="dense")
    analysis: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as tmp:
        embedder = CachedEmbedder(model, EmbeddingCache(tmp, model.model_id, model.dim))
        for name, settings, emb in (
            ("bm25 (peer)", bm25, None),
            ("dense, cold cache", dense, embedder),
            ("dense, warm cache", dense, embedder),
        ):
            rows, seconds = _timed(
                lambda s=settings, e=emb: [analyze_question(q, s, env=RetrieverEnv(embedder=e)).row for q in questions]
            )
            analysis[name] = {"seconds": round(seconds, 2), "questions_per_s": round(len(rows) / seconds, 2)}
    n_chunks, n_prefixes = len(chunks), sum(len(q.record.query.split()) for q in questions)
    ratio = analysis["dense, cold cache"]["seconds"] / analysis["bm25 (peer)"]["seconds"]
    print(f"analysis of {len(questions)} real questions ({n_chunks} chunks, {n_prefixes} prefixes):")
    for name, r in analysis.items():
        print(f"  {name:<18} {r['seconds']:>8.2f} s  {r['questions_per_s']:>8.2f} q/s")
    print(f"  dense cold / bm25: {ratio:.0f}x")

    cache = _cache_size(args.cache_entries, vectors)
    print(f"embedding cache: {cache['bytes_per_entry']} B/entry on disk (measured on {cache['entries_measured']} entries) "
          f"-> {cache['disk_MB_per_1e5_chunks']} MB per 1e5 chunks; {cache['ram_MB_per_1e5_chunks_float32_matrix']} MB "
          f"in RAM as float32; reads {cache['read_vectors_per_s']} vectors/s")  # fmt: skip

    glob = _global_topk(args.global_n, args.global_queries)
    print(f"global exact top-3: {glob['n_prefixes']} prefixes x {glob['n_chunks']} chunks in {glob['seconds']} s "
          f"({glob['ms_per_prefix']} ms per prefix; corpus {glob['corpus_ram_MB']} MB float32)")  # fmt: skip
    result = {"torch_threads": 2, "model_load_s": round(load_s, 2), "embedding": speed,
              "analysis": {"questions": len(questions), "chunks": n_chunks, "prefixes": n_prefixes, "arms": analysis,
                           "dense_cold_over_bm25": round(ratio, 1)},
              "cache": cache, "global_exact_topk": glob}  # fmt: skip
    print(f"saved {save('dense', result)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
