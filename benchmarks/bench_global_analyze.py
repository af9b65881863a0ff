"""``analyze --scope global`` on a large BEIR-style pool: the compiled kernel and threads vs the numpy kernel.

What a user runs first: ``streamrag analyze --corpus DIR --scope global --index-dir IDX
--cache C --jobs J`` from a shell: a first run from nothing (it builds the index in IDX
and the chunked corpus in C), then reruns (the index memory-mapped, the pool loaded):
without numba (as without the ``fast`` extra: the import fails, the numpy kernel
ranks) with J = 1, with numba with J = 1 and 2; interleaved, best of ``--rounds``. Then
the analysis phase alone, in one process (the pool read once), interleaved likewise:

- ``numpy, 1 thread``: the scorer's numpy kernel (what ``pip install streamrag``
  without the ``fast`` extra runs; selected here by hiding the compiled kernel);
- ``numba, 1 thread`` and ``numba, 2 threads`` (``--jobs 2``: a second thread ranks the
  next questions).

Every arm's rows must equal the first arm's, and every shell run's ``stabilization.csv``
must be byte-identical.

Data (generated, seeded, kept in ``benchmarks/out/``): ``--docs`` documents of 60–139
words drawn from a Zipf–Mandelbrot law over 200,000 words (``w0`` the most frequent),
and 1,000 queries of 6–17 words: a frequent first word, then each word with probability
½ a word of one target document (its qrels gold) or a word drawn from the corpus.

Run: ``.venv/bin/python benchmarks/bench_global_analyze.py`` (300,000 documents;
``--docs 30000`` for a quick run). Writes ``benchmarks/out/bench_global_analyze.json``.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import OUT_DIR, save


def generate(folder: Path, n_docs: int, n_queries: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    n_words = 200_000
    words = np.array([f"w{i}" for i in range(n_words)])
    cdf = np.cumsum(1.0 / (np.arange(n_words) + 2.7))
    cdf /= cdf[-1]
    lens = rng.integers(60, 140, n_docs)
    tokens = np.searchsorted(cdf, rng.random(int(lens.sum())), side="right")
    offsets = np.concatenate([[0], np.cumsum(lens)])
    (folder / "qrels").mkdir(parents=True, exist_ok=True)
    with open(folder / "corpus.jsonl", "w") as f:
        for i in range(n_docs):
            text = " ".join(words[tokens[offsets[i] : offsets[i + 1]]])
            f.write(json.dumps({"_id": f"d{i}", "title": "", "text": text}) + "\n")
    queries, qrels = [], ["query-id\tcorpus-id\tscore"]
    for j in range(n_queries):
        target = int(rng.integers(n_docs))
        doc = tokens[offsets[target] : offsets[target + 1]]
        picks = [int(rng.integers(30))]
        for _ in range(int(rng.integers(6, 18)) - 1):
            picks.append(int(rng.choice(doc)) if rng.random() < 0.5 else int(tokens[rng.integers(tokens.shape[0])]))
        queries.append(json.dumps({"_id": f"q{j}", "text": " ".join(words[picks])}))
        qrels.append(f"q{j}\td{target}\t1")
    (folder / "queries.jsonl").write_text("\n".join(queries) + "\n")
    (folder / "qrels" / "test.tsv").write_text("\n".join(qrels) + "\n")


# `streamrag analyze` as a user without numba runs it: importing numba fails, so the
# scorer falls back to its numpy kernel (exactly what happens without the fast extra).
_WITHOUT_NUMBA = "import sys; sys.modules['numba'] = None; from streamrag.cli import main; raise SystemExit(main(sys.argv[1:]))"


def shell_runs(folder: Path, index_dir: Path, rounds: int) -> dict:
    cache = OUT_DIR / "bga_cache"
    shutil.rmtree(cache, ignore_errors=True)
    shutil.rmtree(index_dir, ignore_errors=True)
    args = ["analyze", "--corpus", str(folder), "--scope", "global", "--index-dir", str(index_dir), "--cache", str(cache),
            "--no-figures", "--quiet"]  # fmt: skip
    with_numba = [sys.executable, "-m", "streamrag", *args]
    without_numba = [sys.executable, "-c", _WITHOUT_NUMBA, *args]
    shutil.rmtree(OUT_DIR / "bga_first", ignore_errors=True)  # analyze refuses a non-empty --out (without --force)
    t0 = time.perf_counter()  # the first run builds the index and the pool cache
    subprocess.run([*with_numba, "--out", str(OUT_DIR / "bga_first"), "--jobs", "2"], check=True, capture_output=True)
    first_s = time.perf_counter() - t0
    arms = [("numpy, jobs 1", without_numba, 1), ("numba, jobs 1", with_numba, 1), ("numba, jobs 2", with_numba, 2)]
    best: dict[str, float] = {}
    for r in range(rounds):
        for label, cmd, jobs in arms if r % 2 == 0 else arms[::-1]:
            out = OUT_DIR / f"bga_{label.replace(', ', '_').replace(' ', '')}"
            shutil.rmtree(out, ignore_errors=True)  # each round writes a fresh run folder, untimed
            t0 = time.perf_counter()
            subprocess.run([*cmd, "--out", str(out), "--jobs", str(jobs)], check=True, capture_output=True)
            best[label] = min(best.get(label, float("inf")), time.perf_counter() - t0)
    tables = {
        (OUT_DIR / f"bga_{label.replace(', ', '_').replace(' ', '')}" / "stabilization.csv").read_bytes() for label, _, _ in arms
    }
    if len(tables) != 1:
        raise SystemExit("shell runs: stabilization.csv differs between the arms")
    return {"first run, numba, jobs 2": first_s, **{label: best[label] for label, _, _ in arms}}


def in_process(folder: Path, index_dir: Path, rounds: int) -> dict:
    from streamrag.analysis.entry import default_gold, open_source
    from streamrag.analysis.global_scope.analyze import analyze_pool, pool_index
    from streamrag.analysis.stabilize import AnalysisSettings
    from streamrag.data.selection import Selection
    from streamrag.retrieval.global_pool import scorer as global_prefix

    settings = AnalysisSettings()
    t0 = time.perf_counter()
    source = open_source(folder, settings, Selection(split=None, scope="global"))
    index = pool_index(source, settings, index_dir=index_dir)
    read_s = time.perf_counter() - t0
    gold = default_gold(folder, None)
    compiled = global_prefix._compiled_kernel

    def run(kernel: str, jobs: int) -> tuple[float, list[dict]]:
        global_prefix._compiled_kernel = compiled if kernel == "numba" else (lambda *, required: None)  # type: ignore[assignment]
        try:
            t = time.perf_counter()
            rows = [a.row for a in analyze_pool(source, settings, gold=gold, index=index, jobs=jobs)]
            return time.perf_counter() - t, rows
        finally:
            global_prefix._compiled_kernel = compiled

    arms = [("numpy", 1), ("numba", 1), ("numba", 2)]
    best: dict[str, float] = {}
    reference = None
    for r in range(rounds):
        for kernel, jobs in arms if r % 2 == 0 else arms[::-1]:
            wall, rows = run(kernel, jobs)
            label = f"{kernel}, {jobs} thread{'s' if jobs > 1 else ''}"
            best[label] = min(best.get(label, float("inf")), wall)
            if reference is None:
                reference = rows
            elif rows != reference:
                raise SystemExit(f"{label}: rows differ from the first arm's")
    return {"read_and_index_s": read_s, "n_chunks": index.n_docs, "n_questions": len(reference or []), "analysis_s": best}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--docs", type=int, default=300_000)
    ap.add_argument("--queries", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=5)
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    folder = OUT_DIR / f"beir_d{args.docs}_q{args.queries}_s{args.seed}"
    if not (folder / "qrels" / "test.tsv").exists():
        t0 = time.perf_counter()
        generate(folder, args.docs, args.queries, args.seed)
        print(f"generated {folder.name} in {time.perf_counter() - t0:.1f} s", file=sys.stderr)
    index_dir = folder.with_name(folder.name + "_index")
    shell = shell_runs(folder, index_dir, args.rounds)
    phase = in_process(folder, index_dir, args.rounds)
    print(f"{phase['n_chunks']:,} chunks, {phase['n_questions']} questions; best of {args.rounds}, arms interleaved")
    print("from a shell (streamrag analyze --scope global; reruns: index memory-mapped, pool cached): "
          + ", ".join(f"{k} {v:.2f} s" for k, v in shell.items()))  # fmt: skip
    print(f"in process: reading the pool and mapping the index {phase['read_and_index_s']:.2f} s; the analysis:")
    base = phase["analysis_s"]["numpy, 1 thread"]
    for label, wall in phase["analysis_s"].items():
        print(f"  {label:<18} {wall:7.2f} s  {base / wall:5.2f}× the numpy kernel")
    print(f"wrote {save('bench_global_analyze', {'args': vars(args), 'shell_s': shell, **phase})}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
