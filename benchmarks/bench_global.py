"""Global-scope prefix retrieval at 10⁴–10⁶ chunks: streamrag vs bm25s (and rank_bm25).

Task: the top-k (k = 3) of *every* word prefix q[1:t] of 1,000 queries over one corpus.

Data (generated, seeded; identical for every arm, saved once and loaded by each arm):
- chunks: 90% of 100–160 tokens, 10% of 10–99 (page tails), mean ≈ 122 like the paper's
  120-word windows; tokens drawn from a Zipf–Mandelbrot law p(r) ∝ 1/(r + 2.7) over
  2²⁰ ranks. Token *ids* are generated directly (no text): both arms index the same ids.
- queries: CRAG's length histogram (mean ≈ 12 words, one token per word); the first
  word among the 30 most frequent tokens (what/how/which…), then each word with
  probability ½ a uniformly random corpus token (so function words come at corpus
  frequency and always occur) or a content token (rank ≥ 300) of one target chunk.
- Ids are relabelled in first-occurrence order, the order rank_bm25 sums okapi's
  average idf in, so the okapi arms agree bit for bit.

Arms (each in its own process; peak RSS = ``VmHWM`` after a reset once the data is
loaded, so it covers index building and querying; the shared data is in every arm):
- ``streamrag``: ``GlobalIndex.from_token_ids`` + ``PrefixScorer`` (paper idf), with its
  compiled kernel (numba, the ``fast`` extra) as installed by ``make setup``; on 1 thread
  and on all threads (one scorer per thread, as ``analyze --scope global --jobs N``;
  on 1 thread one scorer, as ``--jobs 1``), interleaved 1, all, all, 1;
- ``streamrag-pool``: the same with ``blocks=False``: the compiled pool kernel alone,
  every posting added (the design before block-max ranking); rankings must be equal;
- ``streamrag-numpy``: the same with ``kernel="numpy"`` (``pip install streamrag``
  without ``fast``); its rankings must equal the compiled kernel's exactly;
- ``bm25s``: ``bm25s.BM25(method="atire", idf_method="lucene", k1=1.5, b=0.75,
  dtype="float64", backend="numba")`` (its documented fast path; JIT compiled before
  timing; queried on 1 thread and on all threads) — lucene's idf is the paper's ``ln(1 + (N − df + .5)/(df + .5))``
  and atire's term weight is ``tf·(k1+1)/(tf + k1·(1 − b + b·dl/avgdl))``, so the product
  is the paper's BM25, computed with the same float64 operations; every prefix is its own
  query in one ``retrieve`` call;
- ``streamrag-okapi`` and ``rank_bm25``: okapi idf, on a subset of queries (rank_bm25
  rescores every prefix in Python).

Checks: streamrag's top-k equals a from-scratch dense computation (every prefix of the
first ``--verify`` queries); its top-k *scores* equal bm25s's exactly at every prefix
(bm25s's argpartition orders ties arbitrarily, so ids are compared as sets and may only
differ inside a tie at the k-th score); rank_bm25's ids equal streamrag-okapi's exactly.

Run: ``.venv/bin/python benchmarks/bench_global.py`` (sizes 10⁴ 10⁵ 10⁶; writes
``benchmarks/out/bench_global.json``). ``--sizes 10000`` for a quick run.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import OUT_DIR, machine, record

V = 1 << 20
DATA_DIR = OUT_DIR / "bench_global_data"


# ---------------------------------------------------------------------------- data


def generate(n_chunks: int, n_queries: int, seed: int, folder: Path) -> None:
    """Write tokens.npy, lens.npy and queries.json (lists of word token ids) into ``folder``."""
    from streamrag.data.generated import crag_shape as crag_profile

    rng = np.random.default_rng(np.random.SeedSequence([seed, n_chunks]))
    weights = 1.0 / (np.arange(V) + 2.7)
    cdf = np.cumsum(weights)
    cdf /= cdf[-1]
    lens = np.where(rng.random(n_chunks) < 0.1, rng.integers(10, 100, n_chunks), rng.integers(100, 161, n_chunks))
    n_tokens = int(lens.sum())
    tokens = np.empty(n_tokens, dtype=np.int32)
    block = 1 << 24
    for lo in range(0, n_tokens, block):
        hi = min(n_tokens, lo + block)
        tokens[lo:hi] = np.searchsorted(cdf, rng.random(hi - lo), side="right")
    offsets = np.concatenate([[0], np.cumsum(lens)])
    queries = []
    for _ in range(n_queries):
        n = crag_profile.draw_n_words(rng)
        words = [int(rng.integers(30))]
        target = int(rng.integers(n_chunks))
        chunk = tokens[offsets[target] : offsets[target + 1]]
        content = chunk[chunk >= 300]
        for _ in range(n - 1):
            if content.size and rng.random() < 0.5:
                words.append(int(rng.choice(content)))
            else:
                words.append(int(tokens[rng.integers(n_tokens)]))
        queries.append(words)
    # Relabel in first-occurrence order (see the module docstring); absent ids go last.
    uniq, first = np.unique(tokens, return_index=True)
    order = uniq[np.argsort(first, kind="stable")]
    relabel = np.full(V, -1, dtype=np.int64)
    relabel[order] = np.arange(order.shape[0])
    tokens = relabel[tokens].astype(np.int32)
    queries = [[int(relabel[w]) for w in q] for q in queries]
    folder.mkdir(parents=True, exist_ok=True)
    np.save(folder / "tokens.npy", tokens)
    np.save(folder / "lens.npy", lens.astype(np.int64))
    (folder / "queries.json").write_text(json.dumps({"n_terms": int(order.shape[0]), "queries": queries}))


def load(folder: Path) -> tuple[np.ndarray, np.ndarray, int, list[list[int]]]:
    meta = json.loads((folder / "queries.json").read_text())
    return np.load(folder / "tokens.npy"), np.load(folder / "lens.npy"), meta["n_terms"], meta["queries"]


# ---------------------------------------------------------------------------- memory


def _rss_kb(field: str) -> int | None:
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except OSError:
        return None
    return None


def reset_peak() -> bool:
    """Reset the peak-RSS counter (Linux ≥ 4.0: write 5 to clear_refs); False if unsupported."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def peak_mb() -> float:
    hwm = _rss_kb("VmHWM")
    return (hwm if hwm is not None else resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) / 1024


# ---------------------------------------------------------------------------- arms


def _threads_label(n: int) -> str:
    return f"{n} thread{'s' if n != 1 else ''}"


def arm_streamrag(tokens, lens, n_terms, queries, k, idf, verify, kernel="auto", blocks=True):  # type: ignore[no-untyped-def]
    """streamrag on 1 thread and, with the compiled kernel (which releases the GIL), on all
    threads with one scorer each (what ``analyze --scope global --jobs N`` does), interleaved
    1, all, all, 1; best of the two runs each; the threaded rankings must equal the serial ones."""
    import queue
    from concurrent.futures import ThreadPoolExecutor

    from streamrag.retrieval import BM25Params
    from streamrag.retrieval.global_pool.index import GlobalIndex
    from streamrag.retrieval.global_pool.scorer import PrefixScorer
    from streamrag.retrieval.ranking import rank_topk

    t0 = time.perf_counter()
    index = GlobalIndex.from_token_ids(tokens, lens, [str(i) for i in range(n_terms)], params=BM25Params(idf=idf))
    build_s = time.perf_counter() - t0
    n_all = os.cpu_count() or 1
    scorers = [PrefixScorer(index, kernel=kernel, blocks=blocks) for _ in range(n_all if kernel != "numpy" else 1)]
    free: queue.SimpleQueue = queue.SimpleQueue()
    for scorer in scorers:
        free.put(scorer)
    words = [[np.array([w]) for w in q] for q in queries]

    def rank(q):  # type: ignore[no-untyped-def]
        scorer = free.get()
        try:
            return scorer.rank_words(q, k)
        finally:
            scorer.clear()
            free.put(scorer)

    def rank_alone(q):  # type: ignore[no-untyped-def]
        # One thread ranks with one scorer, as `analyze --jobs 1` does (taking turns between
        # the threads' scorers would ask the caches to hold all of their buffers).
        try:
            return scorers[0].rank_words(q, k)
        finally:
            scorers[0].clear()

    settings = (1, n_all, n_all, 1) if len(scorers) > 1 else (1, 1)
    best: dict[int, tuple[float, float]] = {}
    results = None
    for n_threads in settings:
        t0, c0 = time.perf_counter(), time.process_time()
        if n_threads == 1:
            got = [rank_alone(q) for q in words]
        else:
            with ThreadPoolExecutor(n_threads) as pool:
                got = list(pool.map(rank, words))
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        if n_threads not in best or wall < best[n_threads][0]:
            best[n_threads] = (wall, cpu)
        if results is None:
            results = got
        elif not all(np.array_equal(a[0], b[0]) and np.array_equal(a[1], b[1]) for a, b in zip(results, got, strict=True)):
            raise SystemExit(f"streamrag: rankings on {n_threads} threads differ from those on 1 thread")
    variants = {_threads_label(n): best[n] for n in sorted(best)}
    # From scratch: every prefix re-scored over all N chunks, fully ranked by (score desc, id asc).
    for (topk, _), q in zip(results[:verify], queries[:verify], strict=True):
        scores = np.zeros(index.n_docs)
        for t, term in enumerate(q):
            lo, hi = int(index.indptr[term]), int(index.indptr[term + 1])
            scores[index.chunk_idx[lo:hi]] += index.impact[lo:hi]
            if not np.array_equal(topk[t], rank_topk(scores, k)):
                raise SystemExit(f"streamrag differs from the from-scratch ranking at query {q}, prefix {t + 1}")
    return build_s, best[1][0], best[1][1], results, variants


class _Docs:
    """bm25s's corpus ``ids``: documents as lists of ints, made on access (not all held at once)."""

    def __init__(self, tokens: np.ndarray, lens: np.ndarray) -> None:
        self.tokens, self.offsets = tokens, np.concatenate([[0], np.cumsum(lens)])

    def __len__(self) -> int:
        return self.offsets.shape[0] - 1

    def __getitem__(self, i: int) -> list[int]:
        return self.tokens[self.offsets[i] : self.offsets[i + 1]].tolist()

    def __iter__(self):  # type: ignore[no-untyped-def]
        return (self[i] for i in range(len(self)))


def arm_bm25s(tokens, lens, n_terms, queries, k, idf, verify):  # type: ignore[no-untyped-def]
    """bm25s at its documented fast path, ``backend="numba"``: JIT compiled on a warm-up
    query first (not timed), then every prefix queried on 1 thread and on all threads,
    interleaved 1, all, all, 1; best of the two runs each (wall and CPU)."""
    import bm25s
    from bm25s.tokenization import Tokenized

    t0 = time.perf_counter()
    retriever = bm25s.BM25(method="atire", idf_method="lucene", k1=1.5, b=0.75, dtype="float64", backend="numba")
    retriever.index(Tokenized(ids=_Docs(tokens, lens), vocab={str(i): i for i in range(n_terms)}), show_progress=False)
    build_s = time.perf_counter() - t0
    prefixes = [q[:t] for q in queries for t in range(1, len(q) + 1)]
    for n_threads in (1, -1):  # compile both the serial and the parallel kernels
        retriever.retrieve(prefixes[:2], k=k, show_progress=False, n_threads=n_threads, sorted=True)
    best: dict[int, tuple[float, float]] = {}
    results = None
    for n_threads in (1, -1, -1, 1):
        t0, c0 = time.perf_counter(), time.process_time()
        docs, scores = retriever.retrieve(prefixes, k=k, show_progress=False, n_threads=n_threads, sorted=True)
        wall, cpu = time.perf_counter() - t0, time.process_time() - c0
        if n_threads not in best or wall < best[n_threads][0]:
            best[n_threads] = (wall, cpu)
        if results is None:
            results = (docs, scores)
        elif not (np.array_equal(results[1], scores)):
            raise SystemExit(f"bm25s: scores on {n_threads} threads differ from those on 1 thread")
    docs, scores = results
    split, pos = [], 0
    for q in queries:
        split.append((docs[pos : pos + len(q)], scores[pos : pos + len(q)]))
        pos += len(q)
    variants = {f"numba, {_threads_label(os.cpu_count() or 1 if n == -1 else n)}": best[n] for n in (1, -1)}
    return build_s, best[1][0], best[1][1], split, variants


def arm_rank_bm25(tokens, lens, n_terms, queries, k, idf, verify):  # type: ignore[no-untyped-def]
    from rank_bm25 import BM25Okapi

    from streamrag.retrieval.ranking import rank_topk

    docs = _Docs(tokens, lens)
    t0 = time.perf_counter()
    model = BM25Okapi([docs[i] for i in range(len(docs))])
    build_s = time.perf_counter() - t0
    t0, c0 = time.perf_counter(), time.process_time()
    results = []
    for q in queries:
        rows = [model.get_scores(q[:t]) for t in range(1, len(q) + 1)]
        topk = np.array([rank_topk(s, k) for s in rows])
        results.append((topk, np.array([s[r] for s, r in zip(rows, topk, strict=True)])))
    return build_s, time.perf_counter() - t0, time.process_time() - c0, results


def arm_streamrag_numpy(tokens, lens, n_terms, queries, k, idf, verify):  # type: ignore[no-untyped-def]
    """streamrag without its compiled kernel (what ``pip install streamrag`` without ``fast`` runs)."""
    return arm_streamrag(tokens, lens, n_terms, queries, k, idf, verify, kernel="numpy")


def arm_streamrag_pool(tokens, lens, n_terms, queries, k, idf, verify):  # type: ignore[no-untyped-def]
    """streamrag's compiled pool kernel alone, every posting added (the design before block-max ranking)."""
    return arm_streamrag(tokens, lens, n_terms, queries, k, idf, verify, blocks=False)


ARMS = {"streamrag": (arm_streamrag, "paper"), "streamrag-again": (arm_streamrag, "paper"),
        "streamrag-pool": (arm_streamrag_pool, "paper"),
        "streamrag-numpy": (arm_streamrag_numpy, "paper"), "streamrag-okapi": (arm_streamrag, "okapi"),
        "bm25s": (arm_bm25s, "paper"), "rank_bm25": (arm_rank_bm25, "okapi")}  # fmt: skip


def run_arm(name: str, folder: Path, k: int, n_queries: int, verify: int, out: Path) -> None:
    """Child process: load the data, reset the peak counter, run one arm, save its results."""
    tokens, lens, n_terms, queries = load(folder)
    queries = queries[:n_queries]
    base_mb = (_rss_kb("VmRSS") or 0) / 1024
    exact_peak = reset_peak()
    fn, idf = ARMS[name]
    build_s, query_s, query_cpu_s, results, *extra = fn(tokens, lens, n_terms, queries, k, idf, verify)
    n_prefixes = sum(len(q) for q in queries)
    variants = {
        label: {"query_s": wall, "query_cpu_s": cpu, "us_per_prefix": wall / n_prefixes * 1e6}
        for label, (wall, cpu) in (extra[0] if extra else {}).items()
    }
    peak = peak_mb()
    np.savez(
        out.with_suffix(".npz"),
        **{f"ids{i}": r[0] for i, r in enumerate(results)},
        **{f"sc{i}": r[1] for i, r in enumerate(results)},
    )
    report = {
        "variants": variants,
        "arm": name, "n_queries": len(queries), "n_prefixes": n_prefixes, "build_s": build_s, "query_s": query_s,
        "query_cpu_s": query_cpu_s, "us_per_prefix": query_s / n_prefixes * 1e6, "rss_after_data_mb": base_mb,
        "peak_rss_mb": peak, "peak_is_since_data_loaded": exact_peak,
    }  # fmt: skip
    out.write_text(json.dumps(report))


# ---------------------------------------------------------------------------- parent


def compare(ours: Path, peer: Path, n: int, *, ids_exact: bool) -> dict[str, int]:
    """Prefix by prefix: identical score lists, and ids identical — or, if not ``ids_exact``
    (a peer that orders ties arbitrarily), the same ids above the k-th score, the rest tied at it."""
    a, b = np.load(ours), np.load(peer)
    counts = {"prefixes": 0, "ids_identical": 0, "ids_differ_in_ties": 0}
    for i in range(n):
        ids_a, ids_b, sc_a, sc_b = a[f"ids{i}"], b[f"ids{i}"], a[f"sc{i}"], b[f"sc{i}"]
        for t in range(ids_a.shape[0]):
            counts["prefixes"] += 1
            if not np.array_equal(sc_a[t], sc_b[t]):
                raise SystemExit(
                    f"{peer.name}: query {i} prefix {t + 1}: scores {sc_b[t].tolist()} != streamrag {sc_a[t].tolist()}"
                )
            if np.array_equal(ids_a[t], ids_b[t]):
                counts["ids_identical"] += 1
                continue
            kth = sc_a[t][-1]
            above_a = set(ids_a[t][sc_a[t] > kth].tolist())
            above_b = set(ids_b[t][sc_b[t] > kth].tolist())
            if ids_exact or above_a != above_b:
                raise SystemExit(
                    f"{peer.name}: query {i} prefix {t + 1}: ids {ids_b[t].tolist()} != streamrag {ids_a[t].tolist()}"
                )
            counts["ids_differ_in_ties"] += 1  # same ids above the k-th score; order or choice within ties differ
    return counts


def bench_size(n_chunks: int, args: argparse.Namespace) -> dict:
    folder = DATA_DIR / f"n{n_chunks}_q{args.queries}_s{args.seed}"
    if not (folder / "queries.json").exists():
        t0 = time.perf_counter()
        generate(n_chunks, args.queries, args.seed, folder)
        print(f"[{n_chunks:,} chunks] generated in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    # A B C A: streamrag before and after bm25s (which interleaves its own thread settings)
    # and the numpy kernel, so that neither peer runs apart from streamrag
    plan = [("streamrag", args.queries), ("bm25s", args.queries)]
    plan.append(("streamrag-pool", args.queries))
    if not args.no_numpy_arm:
        plan.append(("streamrag-numpy", args.queries))
    plan.append(("streamrag-again", args.queries))
    n_okapi = args.rank_bm25_queries.get(n_chunks, 0)
    if n_okapi:
        plan += [("streamrag-okapi", n_okapi), ("rank_bm25", n_okapi)]
    arms = {}
    for name, n_queries in plan:
        out = folder / f"{name}.json"
        if args.reuse_arms and out.exists() and json.loads(out.read_text())["n_queries"] == n_queries:
            arms[name] = json.loads(out.read_text())  # measured by an earlier run on the same data
            continue
        cmd = [sys.executable, __file__, "--arm", name, "--data", str(folder), "--k", str(args.k),
               "--queries", str(n_queries), "--verify", str(args.verify), "--arm-out", str(out)]  # fmt: skip
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True)
        arms[name] = json.loads(out.read_text())
        print(f"[{n_chunks:,} chunks] {name}: {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    again = arms.pop("streamrag-again")
    compare(folder / "streamrag.npz", folder / "streamrag-again.npz", args.queries, ids_exact=True)
    ours = arms["streamrag"]  # the best of the runs before and after bm25s, per thread count
    for label, v in again["variants"].items():
        if v["query_s"] < ours["variants"][label]["query_s"]:
            ours["variants"][label] = v
    ours.update(ours["variants"][_threads_label(1)])
    checks = {"bm25s": compare(folder / "streamrag.npz", folder / "bm25s.npz", args.queries, ids_exact=False)}
    checks["streamrag-pool"] = compare(folder / "streamrag.npz", folder / "streamrag-pool.npz", args.queries, ids_exact=True)
    if "streamrag-numpy" in arms:
        checks["streamrag-numpy"] = compare(
            folder / "streamrag.npz", folder / "streamrag-numpy.npz", args.queries, ids_exact=True
        )
    if n_okapi:
        checks["rank_bm25"] = compare(folder / "streamrag-okapi.npz", folder / "rank_bm25.npz", n_okapi, ids_exact=True)
    _, lens, n_terms, queries = load(folder)
    return {
        "n_chunks": n_chunks, "n_tokens": int(lens.sum()), "n_terms": n_terms, "n_queries": args.queries,
        "mean_query_words": float(np.mean([len(q) for q in queries])), "k": args.k, "arms": arms, "checks": checks,
        "speedup_query_vs_bm25s": {  # bm25s on n threads against streamrag on n threads
            label: v["query_s"] / ours["variants"][label.removeprefix("numba, ")]["query_s"]
            for label, v in arms["bm25s"]["variants"].items()
        },
        "speedup_query_vs_rank_bm25_per_prefix": (arms["rank_bm25"]["us_per_prefix"] / arms["streamrag-okapi"]["us_per_prefix"]) if n_okapi else None,
    }  # fmt: skip


def print_table(rows: list[dict]) -> None:
    head = f"{'chunks':>9} {'arm':<24}{'queries':>8}{'prefixes':>9}{'build s':>9}{'query s':>9}{'CPU s':>8}{'µs/prefix':>10}{'peak MB':>9}{'×':>7}"
    print(head)
    print("-" * len(head))
    for r in rows:
        for name, a in r["arms"].items():
            ref = r["arms"]["streamrag-okapi" if name in ("streamrag-okapi", "rank_bm25") else "streamrag"]
            for label, v in (a.get("variants") or {"": a}).items():
                same_threads = ref.get("variants", {}).get(label.removeprefix("numba, "), ref)
                ratio = v["us_per_prefix"] / same_threads["us_per_prefix"]
                arm = f"{name} {label}" if label else name
                print(f"{r['n_chunks']:>9,} {arm:<24}{a['n_queries']:>8}{a['n_prefixes']:>9}{a['build_s']:>9.1f}{v['query_s']:>9.2f}"
                      f"{v['query_cpu_s']:>8.2f}{v['us_per_prefix']:>10.0f}{a['peak_rss_mb']:>9.0f}{ratio:>7.1f}")  # fmt: skip
        for peer, c in r["checks"].items():
            print(f"{'':>9} check vs {peer}: {c['prefixes']} prefixes, top-k scores identical; ids identical "
                  f"{c['ids_identical']}, differing only inside a tie at the k-th score {c['ids_differ_in_ties']}")  # fmt: skip
    print("× = µs per prefix relative to streamrag with the same idf on as many threads (higher = slower than streamrag);")
    print("best of 2 runs per arm and thread count; streamrag run before and after bm25s and the numpy kernel; each arm's thread")
    print("settings interleaved 1, all, all, 1 in one process")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000, 1_000_000])
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--k", type=int, default=3)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--verify", type=int, default=20, help="queries checked against a from-scratch ranking")
    ap.add_argument("--rank-bm25", default="10000:200,100000:20", help="size:queries pairs for the rank_bm25 arm")
    ap.add_argument("--no-numpy-arm", action="store_true", help="skip streamrag without its compiled kernel")
    ap.add_argument("--keep-data", action="store_true", help="keep the generated corpora in benchmarks/out/")
    ap.add_argument("--reuse-arms", action="store_true", help="reuse arm results kept (--keep-data) by an earlier run")
    ap.add_argument("--arm", choices=list(ARMS), help=argparse.SUPPRESS)
    ap.add_argument("--data", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--arm-out", type=Path, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.arm:
        run_arm(args.arm, args.data, args.k, args.queries, args.verify, args.arm_out)
        return 0
    import importlib.util

    missing = [m for m in ("bm25s", "numba") if importlib.util.find_spec(m) is None]
    if missing:
        raise SystemExit(
            f"bench_global: the peer needs {' and '.join(missing)}: pip install -e '.[bench]' (make setup installs it)"
        )
    args.rank_bm25_queries = {int(s): int(q) for s, q in (p.split(":") for p in args.rank_bm25.split(",") if p)}
    rows = [bench_size(n, args) for n in args.sizes]
    print_table(rows)
    from importlib.metadata import version

    report = {
        "benchmark": "bench_global", "args": {k: v for k, v in vars(args).items() if k not in ("arm", "data", "arm_out")},
        "machine": {**machine(), "numpy": version("numpy"), "bm25s": version("bm25s"), "rank_bm25": version("rank_bm25")},
        "results": rows,
    }  # fmt: skip
    path = OUT_DIR / "bench_global.json"
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(report, indent=2) + "\n")
    os.replace(tmp, path)
    record("bench_global", report)
    print(f"wrote {path}")
    if not args.keep_data:
        import shutil

        shutil.rmtree(DATA_DIR, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
