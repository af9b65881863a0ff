"""Zstandard input: read wherever bzip2 is, refused when cut short or damaged, written by
``generate`` and ``ingest --convert`` with the same lines (so the same records and chunk keys)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import zstandard

from streamrag.base.errors import DataFileError
from streamrag.base.lines import convert_to_zstd, iter_lines
from streamrag.cli import main
from streamrag.data.crag import read_records
from streamrag.data.generated.records import GeneratorSettings, write_crag_file

SMALL = {"page_words": 120}


def _lines(n: int) -> bytes:
    return b"".join(json.dumps({"i": i, "text": "x" * (i % 97)}).encode() + b"\n" for i in range(n))


def test_lines_of_one_or_several_frames_and_a_last_line_without_newline(tmp_path: Path) -> None:
    data = _lines(50_000) + b'{"last": true}'
    one = tmp_path / "one.jsonl.zst"
    one.write_bytes(zstandard.ZstdCompressor().compress(data))
    assert b"".join(line for _, line in iter_lines(one)) == data
    # Two frames back to back (what `cat a.zst b.zst` makes) read as one file.
    two = tmp_path / "two.jsonl.zst"
    two.write_bytes(zstandard.ZstdCompressor().compress(data[:1000]) + zstandard.ZstdCompressor().compress(data[1000:]))
    assert [n for n, _ in iter_lines(two)] == list(range(1, data.count(b"\n") + 2))
    assert b"".join(line for _, line in iter_lines(two)) == data


def test_a_cut_or_damaged_file_is_a_data_file_error(tmp_path: Path) -> None:
    full = zstandard.ZstdCompressor(write_checksum=True).compress(_lines(100_000))
    cut = tmp_path / "cut.jsonl.zst"
    cut.write_bytes(full[: len(full) // 2])
    with pytest.raises(
        DataFileError,
        match=r"cut.jsonl.zst: compressed data is truncated or corrupt after line \d+ \(Zstandard frame is cut short\)",
    ):
        list(iter_lines(cut))
    damaged = tmp_path / "damaged.jsonl.zst"
    damaged.write_bytes(full[:200] + bytes(300) + full[500:])
    with pytest.raises(DataFileError, match=r"damaged.jsonl.zst: compressed data is truncated or corrupt"):
        list(iter_lines(damaged))
    fake = tmp_path / "fake.jsonl.zst"
    fake.write_text("{}\n")
    with pytest.raises(DataFileError, match=r"fake.jsonl.zst: not a Zstandard file \(its name ends in .zst\)"):
        list(iter_lines(fake))


def test_generated_zstd_holds_the_plain_file_and_reads_as_the_same_records(tmp_path: Path) -> None:
    settings = GeneratorSettings(n_questions=6, seed=4, **SMALL)
    plain = write_crag_file(tmp_path / "d.jsonl", settings)
    packed = write_crag_file(tmp_path / "d.jsonl.zst", settings)
    assert packed.compressed and not plain.compressed and packed.n_json_bytes == plain.n_json_bytes
    with (tmp_path / "d.jsonl.zst").open("rb") as fh:
        assert zstandard.ZstdDecompressor().stream_reader(fh).read() == (tmp_path / "d.jsonl").read_bytes()
    assert list(read_records(tmp_path / "d.jsonl.zst")) == list(read_records(tmp_path / "d.jsonl"))
    # Same seed, same bytes.
    write_crag_file(tmp_path / "e.jsonl.zst", settings)
    assert (tmp_path / "e.jsonl.zst").read_bytes() == (tmp_path / "d.jsonl.zst").read_bytes()


def test_the_system_zstd_reads_our_files(tmp_path: Path) -> None:
    pytest.importorskip("shutil").which("zstd") or pytest.skip("no zstd command on this machine")
    settings = GeneratorSettings(n_questions=3, seed=1, **SMALL)
    write_crag_file(tmp_path / "d.jsonl", settings)
    write_crag_file(tmp_path / "d.jsonl.zst", settings)
    out = subprocess.run(["zstd", "-dc", str(tmp_path / "d.jsonl.zst")], capture_output=True, check=True).stdout
    assert out == (tmp_path / "d.jsonl").read_bytes()


def test_ingest_convert_writes_the_copy_then_ingests_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    write_crag_file(tmp_path / "d.jsonl.bz2", GeneratorSettings(n_questions=4, seed=2, **SMALL))
    cache, copy = tmp_path / "cache", tmp_path / "new" / "d.jsonl.zst"
    assert main(["ingest", str(tmp_path / "d.jsonl.bz2"), "--convert", str(copy), "--cache", str(cache)]) == 0
    out = capsys.readouterr().out
    assert f"wrote {copy}: 4 lines" in out and "4 records" in out and "0 hits, 4 built" in out
    assert list(read_records(copy)) == list(read_records(tmp_path / "d.jsonl.bz2"))
    # The copy's chunks are the source's: ingesting the source now only hits the cache.
    assert main(["ingest", str(tmp_path / "d.jsonl.bz2"), "--cache", str(cache)]) == 0
    assert "4 hits, 0 built" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("name", "problem"), [("d.jsonl.gz", "name the copy *.jsonl.zst"), ("d.jsonl.bz2", "name the copy *.jsonl.zst")]
)
def test_ingest_convert_refuses_other_names(tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, problem: str) -> None:
    write_crag_file(tmp_path / "d.jsonl.bz2", GeneratorSettings(n_questions=1, seed=2, **SMALL))
    assert main(["ingest", str(tmp_path / "d.jsonl.bz2"), "--convert", str(tmp_path / name), "--no-cache"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and problem in err


def test_convert_refuses_to_overwrite_its_source(tmp_path: Path) -> None:
    from streamrag.base.errors import ConfigError

    src = tmp_path / "d.jsonl.zst"
    write_crag_file(src, GeneratorSettings(n_questions=1, seed=2, **SMALL))
    with pytest.raises(ConfigError, match="would overwrite its source"):
        convert_to_zstd(src, src)
