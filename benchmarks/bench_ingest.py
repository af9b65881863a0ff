"""Ingestion throughput versus raw decompression (`bzip2 -dc FILE > /dev/null`).

Generates (once, then reuses) a CRAG-shaped ``.jsonl.bz2`` of at least ``--min-mb`` MB on
disk, then measures in one run, in MB/s of *decompressed* input:

- the peer: ``bzip2 -dc FILE > /dev/null``;
- read + validate only (no HTML): stdlib bz2, and indexed_bzip2 decoding blocks on all cores;
- cold ingestion (HTML → text → chunks, filling an empty cache), paper preset
  (html.parser) and the fast parser (lexbor), on 1 and 2 processes, and on 2 processes
  with indexed_bzip2 decoding;
- cached ingestion (the same file again, chunks read from the cache).

Every figure is also given as a ratio to the bzip2 peer.

    .venv/bin/python benchmarks/bench_ingest.py [--min-mb 200] [--quick]
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

from streamrag.cache import ChunkCache
from streamrag.chunking import ChunkSettings
from streamrag.data.crag import read_records
from streamrag.data.generate import GeneratorSettings, write_crag_file
from streamrag.data.ingest import ingest


def _ensure_file(min_mb: float) -> Path:
    path = OUT_DIR / f"crag_generated_{int(min_mb)}mb.jsonl.bz2"
    if path.exists() and path.stat().st_size >= min_mb * 1e6:
        return path
    OUT_DIR.mkdir(parents=True, exist_ok=True)
    # Measure the compressed size of a small file, then scale the question count.
    probe = write_crag_file(OUT_DIR / "probe.jsonl.bz2", GeneratorSettings(n_questions=40, seed=7))
    per_question = probe.n_file_bytes / probe.n_records
    probe.path.unlink()
    n_questions = int(min_mb * 1e6 / per_question * 1.05) + 1
    print(f"generating {n_questions} questions (≈{per_question / 1e3:.0f} KB each compressed) → {path.name}")
    started = time.perf_counter()
    stats = write_crag_file(path, GeneratorSettings(n_questions=n_questions, seed=7))
    print(
        f"  {stats.n_file_bytes / 1e6:.0f} MB on disk, {stats.n_json_bytes / 1e6:.0f} MB of JSON in {time.perf_counter() - started:.0f} s"
    )
    return path


def _decompressed_mb(path: Path) -> float:
    with subprocess.Popen(["bzip2", "-dc", str(path)], stdout=subprocess.PIPE) as proc:
        total = 0
        while chunk := proc.stdout.read(1 << 22):  # type: ignore[union-attr]
            total += len(chunk)
    return total / 1e6


def _timed(fn) -> float:
    started = time.perf_counter()
    fn()
    return time.perf_counter() - started


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--min-mb", type=float, default=200.0, help="size of the generated .bz2 on disk")
    parser.add_argument("--quick", action="store_true", help="skip the one-process and html.parser cold arms")
    args = parser.parse_args()
    if shutil.which("bzip2") is None:
        print("bzip2 is not installed; the peer cannot run")
        return 1
    path = _ensure_file(args.min_mb)
    disk_mb = path.stat().st_size / 1e6
    mb = _decompressed_mb(path)
    print(f"file: {path.name}, {disk_mb:.0f} MB on disk, {mb:.0f} MB decompressed")

    arms: dict[str, float] = {}
    arms["bzip2 -dc > /dev/null (peer)"] = _timed(
        lambda: subprocess.run(f"bzip2 -dc '{path}' > /dev/null", shell=True, check=True)
    )
    arms["read+validate, stdlib bz2"] = _timed(lambda: sum(1 for _ in read_records(path)))
    arms["read+validate, indexed_bzip2 (all cores)"] = _timed(
        lambda: sum(1 for _ in read_records(path, parallel_decompression=True))
    )
    with tempfile.TemporaryDirectory() as tmp:
        configs = [("lexbor", 2), ("lexbor", 1)] + ([] if args.quick else [("html.parser", 2), ("html.parser", 1)])
        for parser_name, jobs in configs:
            cache = ChunkCache(Path(tmp) / f"{parser_name}-{jobs}")
            settings = ChunkSettings(parser=parser_name)
            arms[f"cold ingest, {parser_name}, {jobs} process(es)"] = _timed(
                lambda settings=settings, cache=cache, jobs=jobs: sum(
                    1 for _ in ingest(path, settings=settings, cache=cache, jobs=jobs)
                )
            )
            if jobs == 2:
                parallel = ChunkCache(Path(tmp) / f"{parser_name}-{jobs}-parallel-bz2")
                arms[f"cold ingest, {parser_name}, {jobs} processes, indexed_bzip2"] = _timed(
                    lambda settings=settings, cache=parallel, jobs=jobs: sum(
                        1 for _ in ingest(path, settings=settings, cache=cache, jobs=jobs, parallel_decompression=True)
                    )
                )
                arms[f"cached ingest, {parser_name}"] = _timed(
                    lambda settings=settings, cache=cache: sum(1 for _ in ingest(path, settings=settings, cache=cache, jobs=2))
                )
                arms[f"cached ingest, {parser_name}, indexed_bzip2"] = _timed(
                    lambda settings=settings, cache=cache: sum(
                        1 for _ in ingest(path, settings=settings, cache=cache, jobs=2, parallel_decompression=True)
                    )
                )
    peer = arms["bzip2 -dc > /dev/null (peer)"]
    rows = {
        name: {"seconds": round(s, 2), "mb_per_s": round(mb / s, 1), "ratio_to_bzip2": round(peer / s, 3)}
        for name, s in arms.items()
    }
    width = max(map(len, rows))
    print(f"{'arm':<{width}}  {'s':>8}  {'MB/s':>8}  {'× bzip2':>8}")
    for name, r in rows.items():
        print(f"{name:<{width}}  {r['seconds']:>8.1f}  {r['mb_per_s']:>8.1f}  {r['ratio_to_bzip2']:>8.3f}")
    print(f"saved {save('ingest', {'file_mb_on_disk': round(disk_mb, 1), 'decompressed_mb': round(mb, 1), 'arms': rows})}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
