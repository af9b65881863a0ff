"""HTML → text → chunks (paper preset), hostile pages, and the chunk cache."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import zstandard

from streamrag.data.chunk_cache import ENTRY_SUFFIX, ChunkCache, entry_of
from streamrag.data.chunking import ChunkSettings, chunk_key, chunk_pages, window_words
from streamrag.data.crag import SearchResult, read_records
from streamrag.data.ingest import ingest
from streamrag.data.text import html_to_text

PARSERS = ("html.parser", "lexbor")


@pytest.mark.parametrize("parser", PARSERS)
def test_removed_elements_and_whitespace(parser: str) -> None:
    html = (
        "<html><head><title>T</title><style>p{}</style></head><body>"
        "<p>alpha\n\n  beta</p><script>var x=1</script><noscript>ns</noscript>"
        "<template>tpl</template><div>gamma<b>delta</b></div></body></html>"
    )
    assert html_to_text(html, parser) == "alpha beta gamma delta"


def test_windows_start_every_stride_while_inside_the_page() -> None:
    words = [f"w{i}" for i in range(210)]
    chunks = window_words(words, ChunkSettings(), limit=400)
    # starts 0, 100, 200: the last window holds the 10-word tail
    assert [c.split()[0] for c in chunks] == ["w0", "w100", "w200"]
    assert [len(c.split()) for c in chunks] == [120, 110, 10]


def test_snippet_replaces_a_page_without_text_and_cap_stops_early() -> None:
    pages = [
        SearchResult(page_result="<html><script>x</script></html>", page_snippet="the  snippet text"),
        SearchResult(page_result="<p>" + " ".join(["w"] * 1000) + "</p>"),
        SearchResult(page_result="<p>never parsed</p>"),
    ]
    chunks = chunk_pages(pages, ChunkSettings(max_chunks=4))
    assert chunks[0] == "the snippet text"
    assert len(chunks) == 4
    assert chunk_pages([SearchResult()], ChunkSettings()) == []


def test_settings_reject_overlap_not_below_window() -> None:
    with pytest.raises(ValueError, match="overlap_words"):
        ChunkSettings(window_words=20, overlap_words=20)


def test_real_sample_chunk_counts_under_the_paper_preset(crag_sample: Path) -> None:
    counts = {q.interaction_id: len(q.chunks) for q in ingest(crag_sample, jobs=1)}
    assert len(counts) == 10
    assert counts["55b219e5-ba31-4318-a73d-551f0fb9c546"] == 110
    assert counts["db078969-dcfd-4bd3-8d07-ee8ceceebafd"] == 80


def test_html_nested_100000_levels_deep(tmp_path: Path) -> None:
    html = "<div>" * 100_000 + "deep words here" + "</div>" * 100_000
    for parser in PARSERS:  # lexbor is quadratic in depth; such a page goes to html.parser
        assert html_to_text(html, parser) == "deep words here"


def test_a_20_mb_page_is_chunked_and_capped() -> None:
    body = "<p>alpha beta gamma delta epsilon</p>\n" * 540_000
    page = SearchResult(page_result=f"<html><body>{body}</body></html>")
    assert len(page.page_result) > 20_000_000
    chunks = chunk_pages([page], ChunkSettings(parser="lexbor"))
    assert len(chunks) == 400 and chunks[0].split()[:5] == ["alpha", "beta", "gamma", "delta", "epsilon"]


@pytest.mark.slow
def test_a_20_mb_page_with_the_reference_parser() -> None:
    body = "<p>alpha beta gamma delta epsilon</p>\n" * 540_000
    chunks = chunk_pages([SearchResult(page_result=f"<html><body>{body}</body></html>")])
    assert len(chunks) == 400


def test_empty_pages_give_an_empty_corpus_row(tmp_path: Path) -> None:
    rec = {"interaction_id": "e", "query": "what is it", "answer": "x", "split": 0, "search_results": [{"page_result": ""}, {}]}
    path = tmp_path / "e.jsonl"
    path.write_text(json.dumps(rec) + "\n")
    (q,) = ingest(path)
    assert q.chunks == []


def test_cache_hit_corrupt_and_stale_entries(tmp_path: Path, crag_sample: Path) -> None:
    cache = ChunkCache(tmp_path / "cache")
    first = [q.chunks for q in ingest(crag_sample, cache=cache, limit=3)]
    assert (cache.hits, cache.misses) == (0, 3)
    again = [q.chunks for q in ingest(crag_sample, cache=cache, limit=3, jobs=2)]
    assert again == first and cache.hits == 3

    entries = sorted(p for p in (tmp_path / "cache").rglob(f"*{ENTRY_SUFFIX}") if p.parent.name != "files")
    assert len(entries) == 3
    entries[0].write_bytes(entries[0].read_bytes()[:-20])  # corrupt: a truncated zstd frame
    stale = entry_of(entries[1].read_bytes())
    stale["format"] = 0  # written by an older streamrag
    entries[1].write_bytes(zstandard.ZstdCompressor().compress(json.dumps(stale).encode()))
    third = [q.chunks for q in ingest(crag_sample, cache=cache, limit=3)]
    # the manifest's replay meets the corrupt entry first (1), then the file is read (2 more)
    assert third == first and cache.rebuilt == 3
    assert not list((tmp_path / "cache").rglob("*.tmp"))
    fourth = ChunkCache(tmp_path / "cache")
    list(ingest(crag_sample, cache=fourth, limit=3))
    assert fourth.hits == 3  # rebuilt entries were rewritten


def test_cache_key_depends_on_content_and_settings() -> None:
    pages = [SearchResult(page_result="<p>a b c</p>")]
    key = chunk_key(pages, ChunkSettings())
    assert key == chunk_key([SearchResult(page_result="<p>a b c</p>")], ChunkSettings())
    assert key != chunk_key([SearchResult(page_result="<p>a b d</p>")], ChunkSettings())
    assert key != chunk_key(pages, ChunkSettings(window_words=100))
    assert key != chunk_key(pages, ChunkSettings(parser="lexbor"))


def test_parallel_ingest_matches_sequential(crag_sample: Path) -> None:
    one = [(q.interaction_id, q.chunks) for q in ingest(crag_sample, jobs=1, limit=4)]
    two = [(q.interaction_id, q.chunks) for q in ingest(crag_sample, jobs=2, limit=4)]
    assert one == two


def test_records_keep_their_metadata_but_not_their_pages(crag_sample: Path) -> None:
    (q,) = ingest(crag_sample, ids={"db078969-dcfd-4bd3-8d07-ee8ceceebafd"})
    assert q.record.query == "what is the shortest highway in the us in feet?"
    assert q.record.search_results == ()
    assert len(next(iter(read_records(crag_sample, ids={q.interaction_id}))).search_results) == 5


def test_a_rerun_replays_the_files_manifest_without_reading_the_file(tmp_path: Path, crag_sample: Path, monkeypatch) -> None:
    import streamrag.data.ingest as ingest_module

    cache = ChunkCache(tmp_path / "cache")
    first = list(ingest(crag_sample, cache=cache, split=None))
    assert list((tmp_path / "cache" / "files").glob(f"*{ENTRY_SUFFIX}"))  # read to the end: a manifest

    def no_reading(*args, **kwargs):
        raise AssertionError("the file was read again")

    monkeypatch.setattr(ingest_module, "iter_lines", no_reading)
    again = list(ingest(crag_sample, cache=cache, split=None, jobs=2))
    assert [(q.record, q.chunks) for q in again] == [(q.record, q.chunks) for q in first]
    with pytest.raises(AssertionError, match="read again"):  # another selection: another manifest
        list(ingest(crag_sample, cache=cache, split=None, limit=2))


def test_a_changed_file_or_a_lost_entry_is_read_again(tmp_path: Path, crag_sample: Path) -> None:
    cache = ChunkCache(tmp_path / "cache")
    data = tmp_path / "d.jsonl"
    lines = [json.dumps({"interaction_id": f"q{i}", "query": "what is it", "answer": "x", "split": 0,
                         "search_results": [{"page_result": f"<p>page {i} words</p>"}]}) for i in range(3)]  # fmt: skip
    data.write_text("\n".join(lines) + "\n")
    first = [q.chunks for q in ingest(data, cache=cache)]
    data.write_text("\n".join(lines[:2]) + "\n")  # changed content: a new key, the file is read
    assert [q.chunks for q in ingest(data, cache=cache)] == first[:2]
    for entry in (tmp_path / "cache").rglob(f"*{ENTRY_SUFFIX}"):
        if entry.parent.name != "files":
            entry.unlink()  # every chunk entry lost: the manifest cannot be replayed
    assert [q.chunks for q in ingest(data, cache=cache)] == first[:2]


def test_a_partly_consumed_pass_writes_no_manifest(tmp_path: Path, crag_sample: Path) -> None:
    cache = ChunkCache(tmp_path / "cache")
    stream = ingest(crag_sample, cache=cache, split=None)
    next(stream)
    stream.close()
    assert not list((tmp_path / "cache").glob(f"files/*{ENTRY_SUFFIX}"))
