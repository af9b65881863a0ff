"""Gold-chunk matching: exact and relaxed rules of design §3."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from streamrag.data.grounding import answer_candidates, chunk_is_gold, gold_by_mode, gold_chunks, gold_in_normalized, normalize
from streamrag.retrieval.tokenize import RegexTokenizer


def test_normalize() -> None:
    assert normalize("I-878, in New York: 3,696 ft!") == "i 878 in new york 3 696 ft"


def test_dropped_candidates_and_numbers() -> None:
    assert answer_candidates(["I don't know", "invalid question", "UNKNOWN", "", "Yes", "3,696"]) == ["yes", "3 696"]


def test_single_token_needs_a_word_boundary() -> None:
    chunks = ["salesforce stock rose", "salesforces rose", "the yes vote", "eyes"]
    assert gold_chunks(chunks, ["Salesforce"]) == {0}
    assert gold_chunks(chunks, ["yes"]) == {2}  # yes/no are kept on purpose


def test_multi_token_is_a_substring_of_the_normalized_chunk() -> None:
    chunks = ["it is 3,696 feet long", "3 696 ft", "13,696 feet"]
    # substring of the normalized chunk: "13 696 feet" contains "3 696 feet" (the reference rule)
    assert gold_chunks(chunks, ["3,696 feet"]) == {0, 2}


def test_relaxed_adds_all_content_tokens_in_any_order() -> None:
    chunks = ["jennifer aniston founded lolavie", "lolavie, a brand by jennifer aniston", "aniston only"]
    answer = ["jennifer aniston (lolavie)"]
    assert gold_chunks(chunks, answer, "exact") == frozenset()
    assert gold_chunks(chunks, answer, "relaxed") == {0, 1}
    # one content token after stopwords: the exact rule applies
    assert not chunk_is_gold("moon the", ["the moon"], "relaxed")
    assert chunk_is_gold("on the moon", ["the moon"], "relaxed")


@given(st.text(max_size=80))
def test_normalize_equals_joined_paper_tokens(text: str) -> None:
    # The analyzer relies on this identity to normalize chunks from their tokens.
    assert normalize(text) == " ".join(RegexTokenizer()(text))


_WORDS = st.sampled_from(["the", "moon", "a", "yes", "3", "696", "new", "york", "on", "of", "eyes", "x"])
_NORMALIZED_CHUNK = st.lists(_WORDS, max_size=12).map(" ".join)


@given(
    st.lists(_NORMALIZED_CHUNK, max_size=8),
    st.lists(st.lists(_WORDS, min_size=1, max_size=4).map(" ".join), min_size=1, max_size=3),
    st.sampled_from(["exact", "relaxed"]),
)
def test_one_search_over_all_chunks_equals_the_per_chunk_rule(chunks: list[str], answers: list[str], mode: str) -> None:
    # gold_in_normalized searches the joined chunks once per candidate; chunk_is_gold is
    # the rule stated chunk by chunk. Matches must neither span chunks nor use the padding.
    candidates = answer_candidates(answers)
    expected = {i for i, c in enumerate(chunks) if chunk_is_gold(c, candidates, mode)} if candidates else set()
    assert gold_in_normalized(chunks, answers, mode) == expected  # type: ignore[arg-type]
    assert gold_by_mode(chunks, answers)[mode] == expected  # both modes in one reading  # type: ignore[index]


def test_a_match_never_spans_two_chunks() -> None:
    assert gold_in_normalized(["new", "york city"], ["New York"]) == frozenset()
    assert gold_in_normalized(["yes", "", "yes no"], ["yes"]) == {0, 2}
