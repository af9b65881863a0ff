"""``streamrag ingest``: read, validate and chunk a CRAG file into the chunk cache."""

from __future__ import annotations

import argparse
from pathlib import Path

from streamrag.commands._common import add_data_options, open_cache


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "ingest",
        help="validate a CRAG file and fill the chunk cache (later runs read it)",
        description="Stream a CRAG file, validate every record, turn pages into chunks and store "
        "them in the chunk cache. Prints counts and throughput.",
    )
    p.add_argument("data", type=Path, metavar="DATA", help="CRAG file (.jsonl, .jsonl.bz2 or .jsonl.zst)")
    p.add_argument(
        "--convert",
        type=Path,
        metavar="OUT.jsonl.zst",
        help="first write a Zstandard copy of DATA (every line, byte for byte; decodes ~50x faster than "
        "bzip2), then ingest the copy: later runs take OUT and find its chunks cached",
    )
    add_data_options(p, default_split="all")
    p.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from streamrag.base.progress import file_progress
    from streamrag.base.system.terminal import printable
    from streamrag.data.chunking import ChunkSettings
    from streamrag.data.crag import SkippedRecord
    from streamrag.data.ingest import ingest
    from streamrag.data.selection import check_ids_found, read_ids
    from streamrag.engine.clock import RealClock

    cache = open_cache(args)
    ids = read_ids(args.ids) if args.ids else None
    if args.convert is not None:
        args.data = _convert(args)
    found: set[str] = set()
    n_records = n_skipped = n_chunks = 0
    clock = RealClock()
    with file_progress(args.data, "ingesting") as progress:
        for item in ingest(
            args.data,
            settings=ChunkSettings(parser=args.parser),
            cache=cache,
            jobs=args.jobs,
            split=args.split,
            limit=args.limit,
            ids=ids,
            on_error="skip" if args.skip_bad else "raise",
            parallel_decompression=args.parallel_bz2,
            progress=progress,
        ):
            found.add(item.interaction_id or "")
            if isinstance(item, SkippedRecord):
                n_skipped += 1
                print(f"skipped: {printable(item.interaction_id or '?')}: {printable(item.reason)}")
            else:
                n_records += 1
                n_chunks += len(item.chunks)
    check_ids_found(ids, found, args.data)
    elapsed = clock.now_us() / 1e6
    size_mb = args.data.stat().st_size / 1e6
    line = f"{args.data}: {n_records} records, {n_chunks} chunks, {n_skipped} skipped in {elapsed:.1f} s ({size_mb / max(elapsed, 1e-9):.1f} MB/s on disk)"
    if cache is not None:
        line += f"; cache {cache.root}: {cache.hits} hits, {cache.misses + cache.rebuilt} built"
    print(line)
    return 0


def _convert(args: argparse.Namespace) -> Path:
    """Write the Zstandard copy (atomically; an existing copy is replaced) and say so."""
    from streamrag.base.lines import convert_to_zstd
    from streamrag.base.progress import file_progress
    from streamrag.base.system.outputs import check_out_file
    from streamrag.engine.clock import RealClock

    check_out_file(args.convert, option="--convert").parent.mkdir(parents=True, exist_ok=True)
    clock = RealClock()
    with file_progress(args.data, "converting") as progress:
        n_lines = convert_to_zstd(args.data, args.convert, parallel=args.parallel_bz2, progress=progress)
    elapsed = clock.now_us() / 1e6
    size_in, size_out = args.data.stat().st_size / 1e6, args.convert.stat().st_size / 1e6
    print(f"wrote {args.convert}: {n_lines} lines, {size_in:.1f} MB -> {size_out:.1f} MB in {elapsed:.1f} s")
    return Path(args.convert)
