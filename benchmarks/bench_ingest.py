"""Ingestion throughput versus raw decompression (`bzip2 -dc FILE > /dev/null`).

Generates (once, then reuses) a CRAG-shaped ``.jsonl.bz2`` of at least ``--min-mb`` MB on
disk, then measures in one run, in MB/s of *decompressed* input:

- the peer: ``bzip2 -dc FILE > /dev/null``;
- read + validate only (no HTML): stdlib bz2, and indexed_bzip2 decoding blocks on all cores;
- cold ingestion (HTML → text → chunks, filling an empty cache), paper preset
  (html.parser) and the fast parser (lexbor), on 1 and 2 processes, and on 2 processes
  with indexed_bzip2 decoding;
- cached ingestion (the same file again, chunks read from the cache), with and without the
  file's manifest (without it, every record is read and its chunk key looked up);
- the same data as ``.jsonl.zst`` (``ingest --convert``, made once, untimed): ``zstd -dc``,
  read + validate, cold ingestion and cached ingestion without a manifest.

Every figure is also given as a ratio to the bzip2 peer (decompressing the same data).
The load average before and after is printed: the machine is shared.

This machine is shared and noisy, so the arms run in ``--rounds`` rounds, interleaved: the
arm order of each round is the previous one reversed (A B C … C B A …), and each cold arm
starts from an empty cache every round. Reported per arm: the best and the median wall
time and the CPU time of the best round (this process and its worker processes, or the
``bzip2`` child). Every arm's output is checked identical: a digest of each question's id,
chunks and chunk-cap counts (the read-only arms: of the records' ids and answers), taken as
the questions stream in.

    .venv/bin/python benchmarks/bench_ingest.py [--min-mb 200] [--rounds 2] [--quick]
"""

from __future__ import annotations

import argparse
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _common import OUT_DIR, save

from streamrag.base.lines import convert_to_zstd
from streamrag.data.chunk_cache import ChunkCache
from streamrag.data.chunking import ChunkSettings
from streamrag.data.crag import read_records
from streamrag.data.generated.records import GeneratorSettings, write_crag_file
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


def _cpu_s() -> float:
    """CPU seconds of this process and its waited-for children (worker processes, bzip2)."""
    own, kids = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def _digest(items) -> int:
    """What an arm produced: each question's id, chunks and chunk-cap counts, in order.

    Python's own string hash (cheap next to the ingestion, so it hardly weighs on the
    arm's time); comparable within one run of this script, which is all it is used for."""
    h = 0
    for q in items:
        h = hash((h, q.interaction_id, tuple(q.chunks), q.n_pages_unread, q.n_chunks_cut))
    return h


def _records_digest(records) -> int:
    h = 0
    for r in records:
        h = hash((h, r.interaction_id, r.answer))
    return h


def _bzip2(path: Path) -> int:
    subprocess.run(f"bzip2 -dc '{path}' > /dev/null", shell=True, check=True)
    return 0


def _zstd(path: Path) -> int:
    subprocess.run(f"zstd -qdc '{path}' > /dev/null", shell=True, check=True)
    return 0


def _zst_copy(path: Path) -> Path:
    zst = path.with_name(path.name.removesuffix(".bz2") + ".zst")
    if not zst.exists() or zst.stat().st_mtime < path.stat().st_mtime:
        convert_to_zstd(path, zst)
    return zst


def _loadavg() -> str:
    return Path("/proc/loadavg").read_text().split(" ")[0] if Path("/proc/loadavg").exists() else "?"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--min-mb", type=float, default=200.0, help="size of the generated .bz2 on disk")
    parser.add_argument("--rounds", type=int, default=2, help="interleaved rounds (best and median reported)")
    parser.add_argument("--quick", action="store_true", help="skip the one-process and html.parser cold arms")
    args = parser.parse_args()
    if shutil.which("bzip2") is None:
        print("bzip2 is not installed; the peer cannot run")
        return 1
    path = _ensure_file(args.min_mb)
    zst = _zst_copy(path)
    disk_mb = path.stat().st_size / 1e6
    mb = _decompressed_mb(path)
    print(
        f"file: {path.name}, {disk_mb:.0f} MB on disk ({zst.stat().st_size / 1e6:.0f} MB as .zst), {mb:.0f} MB decompressed; "
        f"{args.rounds} interleaved rounds; load average {_loadavg()}"
    )

    peer_name = "bzip2 -dc > /dev/null (peer)"
    with tempfile.TemporaryDirectory() as tmp:
        cold_root = Path(tmp) / "cold"  # emptied before every arm, outside its timing

        def cold(parser_name: str, jobs: int, parallel: bool = False, source: Path = path):
            def run() -> int:
                return _digest(ingest(source, settings=ChunkSettings(parser=parser_name), cache=ChunkCache(cold_root),
                                      jobs=jobs, parallel_decompression=parallel))  # fmt: skip

            return run

        warm_cache = ChunkCache(Path(tmp) / "warm")

        bare_cache = ChunkCache(Path(tmp) / "bare")  # the same chunks; its file manifests removed before each arm

        def cached(parallel: bool, source: Path = path, cache: ChunkCache = warm_cache):
            def run() -> int:
                return _digest(ingest(source, settings=ChunkSettings(parser="lexbor"), cache=cache, jobs=2,
                                      parallel_decompression=parallel))  # fmt: skip

            return run

        # Fill the cache the cached arms read (not timed); the .zst copy has the same chunk keys.
        cached(False)()
        shutil.copytree(warm_cache.root, bare_cache.root, dirs_exist_ok=True)
        arms = {
            peer_name: lambda: _bzip2(path),
            "read+validate, stdlib bz2": lambda: _records_digest(read_records(path)),
            "read+validate, indexed_bzip2 (all cores)": lambda: _records_digest(read_records(path, parallel_decompression=True)),
            "cold ingest, lexbor, 2 processes": cold("lexbor", 2),
            "cold ingest, lexbor, 2 processes, indexed_bzip2": cold("lexbor", 2, parallel=True),
            "cached ingest, lexbor": cached(False),
            "cached ingest, lexbor, indexed_bzip2": cached(True),
            "cached ingest, lexbor, no manifest": cached(False, cache=bare_cache),
            "zstd -dc > /dev/null (.zst decoder alone)": lambda: _zstd(zst),
            "read+validate, .jsonl.zst": lambda: _records_digest(read_records(zst)),
            "cold ingest, lexbor, 2 processes, .jsonl.zst": cold("lexbor", 2, source=zst),
            "cached ingest, lexbor, .jsonl.zst, no manifest": cached(False, source=zst, cache=bare_cache),
        }
        if not args.quick:
            arms["cold ingest, lexbor, 1 process"] = cold("lexbor", 1)
            arms["cold ingest, html.parser, 2 processes"] = cold("html.parser", 2)
            arms["cold ingest, html.parser, 1 process"] = cold("html.parser", 1)
        runs: dict[str, list[tuple[float, float]]] = {name: [] for name in arms}
        digests: dict[str, set[int]] = {}
        order = list(arms)
        for r in range(args.rounds):
            for name in order if r % 2 == 0 else order[::-1]:
                shutil.rmtree(cold_root, ignore_errors=True)
                if "no manifest" in name:  # every chunk cached, but the file's manifest gone
                    shutil.rmtree(bare_cache.root / "files", ignore_errors=True)
                cpu0, t0 = _cpu_s(), time.perf_counter()
                digest = arms[name]()
                runs[name].append((time.perf_counter() - t0, _cpu_s() - cpu0))
                kind = "-" if "dev/null" in name else "records" if name.startswith("read") else "questions"
                digests.setdefault(kind, set()).add(digest)
                print(f"  round {r + 1}: {name}: {runs[name][-1][0]:.1f} s", flush=True)
    if len(digests.get("questions", ())) > 1 or len(digests.get("records", ())) > 1:
        print("outputs differ between arms: the comparison is void")
        return 1
    peer = min(w for w, _ in runs[peer_name])
    rows = {}
    for name, measured in runs.items():
        best_wall, best_cpu = min(measured)
        rows[name] = {
            "best_s": round(best_wall, 2),
            "median_s": round(statistics.median(w for w, _ in measured), 2),
            "cpu_s": round(best_cpu, 2),
            "mb_per_s": round(mb / best_wall, 1),
            "ratio_to_bzip2": round(peer / best_wall, 3),
        }
    width = max(map(len, rows))
    print(
        f"{'arm (best of ' + str(args.rounds) + ')':<{width}}  {'best s':>7}  {'median':>7}  {'CPU s':>7}  {'MB/s':>7}  {'× bzip2':>8}"
    )
    for name, row in rows.items():
        print(
            f"{name:<{width}}  {row['best_s']:>7.1f}  {row['median_s']:>7.1f}  {row['cpu_s']:>7.1f}  {row['mb_per_s']:>7.1f}"
            f"  {row['ratio_to_bzip2']:>8.3f}"
        )
    print(f"outputs identical across arms; load average {_loadavg()}")
    result = {"file_mb_on_disk": round(disk_mb, 1), "decompressed_mb": round(mb, 1), "rounds": args.rounds, "arms": rows}
    print(f"saved {save('ingest', result)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
