"""The index cache's vocabulary (:class:`SortedTerms`) and entries that are not permutations."""

from __future__ import annotations

import json
import zlib
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamrag.retrieval.bm25 import BM25Index, BM25Params
from streamrag.retrieval.index_cache import (
    INDEX_FORMAT,
    IndexedChunks,
    SortedTerms,
    index_chunks,
    index_path,
    read_indexed,
    write_indexed,
)

TERMS = st.text(st.characters(blacklist_characters="\n", blacklist_categories=("Cs",)), min_size=1, max_size=6)


def _sorted(vocabulary: dict[str, int]) -> SortedTerms:
    return SortedTerms(*SortedTerms.encode(vocabulary))


@settings(max_examples=200, deadline=None)
@given(st.lists(TERMS, unique=True, max_size=40), st.lists(TERMS, max_size=10))
def test_sorted_terms_answer_as_the_dict_does(terms: list[str], probes: list[str]) -> None:
    vocabulary = dict(zip(terms, range(len(terms)), strict=True))
    lookup = _sorted(vocabulary)
    assert len(lookup) == len(vocabulary)
    assert list(lookup) == list(vocabulary)  # term-id order
    assert lookup == vocabulary
    for token in [*terms, *probes]:
        assert lookup.get(token) == vocabulary.get(token)
        assert (token in lookup) == (token in vocabulary)


def test_sorted_terms_byte_order_prefixes_and_misses() -> None:
    # Sorted by UTF-8 bytes, which is code point order: "Z" < "a" < "a b" < "ab" < … < "ß"
    # (U+00DF) < "é" (U+00E9) < "日本"; terms that are prefixes of one another.
    terms = ["b", "ab", "a", "abc", "é", "ß", "日本", "z", "Z", "a b"]
    vocabulary = {t: i for i, t in enumerate(terms)}
    text, ids = SortedTerms.encode(vocabulary)
    assert text.decode().split("\n") == ["Z", "a", "a b", "ab", "abc", "b", "z", "ß", "é", "日本"]
    lookup = SortedTerms(text, ids)
    assert [lookup[t] for t in terms] == list(range(len(terms)))
    for missing in ("", "aa", "abcd", "c", "日", "\n", "a\nb"):
        assert lookup.get(missing) is None and missing not in lookup
        with pytest.raises(KeyError):
            lookup[missing]
    assert lookup.get(3) is None and None not in lookup  # not a str: never a term
    assert lookup.get("zz", -1) == -1


def test_sorted_terms_empty_and_counts_checked() -> None:
    empty = _sorted({})
    assert len(empty) == 0 and list(empty) == [] and empty.get("a") is None
    for text, ids in ((b"a\nb", [0]), (b"a", []), (b"", [0])):
        with pytest.raises(ValueError, match="term ids"):
            SortedTerms(text, np.array(ids, dtype=np.int64))


def test_an_index_read_back_scores_as_built(tmp_path: Path) -> None:
    chunks = ["Der Fluß fließt", "the cat sat on the mat", "café au lait, the café", "日本 の 首都", "mat mat cat"]
    index, normalized = index_chunks(chunks, BM25Params())
    write_indexed(tmp_path, "k" * 64, IndexedChunks(index, normalized, 2, None))
    read = read_indexed(tmp_path, "k" * 64, BM25Params())
    assert read is not None and isinstance(read.index.vocabulary, SortedTerms)
    assert read.normalized == normalized and (read.n_pages_unread, read.n_chunks_cut) == (2, None)
    assert read.index.vocabulary == index.vocabulary
    for query in (["the", "cat"], ["café", "mat", "fluß"], ["nowhere"], ["日本", "the", "the"]):
        np.testing.assert_array_equal(read.index.score(query), index.score(query))
        assert read.index.df(query[0]) == index.df(query[0])


def test_term_ids_that_are_not_a_permutation_are_a_miss(tmp_path: Path) -> None:
    index = BM25Index.from_tokens([["a", "b"], ["b", "c"]])
    write_indexed(tmp_path, "k" * 64, IndexedChunks(index, ["a b", "b c"], None, None))
    path = index_path(tmp_path, "k" * 64)
    blob = path.read_bytes()
    end = blob.index(b"\n", len(INDEX_FORMAT))
    header = json.loads(blob[len(INDEX_FORMAT) : end])
    payload = bytearray(blob[end + 1 :])
    at = sum(header["sizes"][:4])
    ids = np.frombuffer(payload[at : at + header["sizes"][4]], dtype=np.dtype(header["dtypes"][4])).copy()
    ids[1] = ids[0]  # two terms with one id, a valid checksum
    payload[at : at + header["sizes"][4]] = ids.tobytes()
    header["crc32"] = zlib.crc32(payload)
    path.write_bytes(INDEX_FORMAT + json.dumps(header).encode() + b"\n" + bytes(payload))
    assert read_indexed(tmp_path, "k" * 64, BM25Params()) is None
