"""Pages → passages: word windows over each page's text (design §3).

Paper preset: pages in order; windows of 120 words with 20 words of overlap (stride 100,
window starts 0, 100, 200, … while the start is inside the page); at most 400 chunks per
question, stopping when reached. Chunk ids are 0-based in that order. A page whose HTML
has no text contributes its ``page_snippet`` instead.

The cap keeps the paper's numbers, but what it drops is counted, never silent
(:class:`PageChunks`): the windows cut from the page where the cap was reached, and the
pages after it, which are not even parsed (one 20 MB page can fill all 400 chunks, and the
page holding the answer is then never read). Both land in the stabilization table.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import NamedTuple

from pydantic import Field, model_validator

from streamrag.base.validation import SettingsModel
from streamrag.data.crag import SearchResult
from streamrag.data.text import HtmlParserName, html_words

# Bump when the text or chunk output for the same settings changes, so caches rebuild.
CHUNKER_VERSION = 1


class ChunkSettings(SettingsModel):
    """How pages become chunks. The defaults are the paper preset."""

    parser: HtmlParserName = "html.parser"
    window_words: int = Field(120, ge=1)
    overlap_words: int = Field(20, ge=0)
    max_chunks: int = Field(400, ge=1)

    @model_validator(mode="after")
    def _overlap_below_window(self) -> ChunkSettings:
        if self.overlap_words >= self.window_words:
            raise ValueError(f"overlap_words ({self.overlap_words}) must be smaller than window_words ({self.window_words})")
        return self

    @property
    def stride_words(self) -> int:
        return self.window_words - self.overlap_words


PAPER_CHUNKS = ChunkSettings()


def page_text(page: SearchResult, parser: HtmlParserName = "html.parser") -> str:
    """The page's visible text, or its snippet when the HTML holds no text."""
    return " ".join(page_words(page, parser))


def page_words(page: SearchResult, parser: HtmlParserName = "html.parser") -> list[str]:
    """The words of :func:`page_text` (the snippet's when the HTML holds no text)."""
    return html_words(page.page_result, parser) or page.page_snippet.split()


def window_words(words: Sequence[str], settings: ChunkSettings, limit: int) -> list[str]:
    """At most ``limit`` windows of ``settings.window_words`` words, stride ``stride_words``."""
    out: list[str] = []
    size, stride = settings.window_words, settings.stride_words
    for start in range(0, len(words), stride):
        if len(out) >= limit:
            break
        out.append(" ".join(words[start : start + size]))
    return out


class PageChunks(NamedTuple):
    """A question's chunks and what the chunk cap dropped (0 and 0 below the cap)."""

    chunks: list[str]
    n_pages_unread: int = 0
    """Pages after the one where the cap was reached: not parsed, none of their text ranked."""
    n_chunks_cut: int = 0
    """Windows of the page where the cap was reached that were not taken."""


def chunk_pages_counted(pages: Sequence[SearchResult], settings: ChunkSettings = PAPER_CHUNKS) -> PageChunks:
    """Chunks of a question's pages in order, at most ``settings.max_chunks``, with what
    the cap dropped."""
    chunks: list[str] = []
    for page_idx, page in enumerate(pages):
        remaining = settings.max_chunks - len(chunks)
        if remaining <= 0:
            return PageChunks(chunks, n_pages_unread=len(pages) - page_idx)  # later pages are not even parsed
        words = page_words(page, settings.parser)
        taken = window_words(words, settings, remaining)
        chunks.extend(taken)
        n_windows = len(range(0, len(words), settings.stride_words))
        if n_windows > len(taken):
            return PageChunks(chunks, n_pages_unread=len(pages) - page_idx - 1, n_chunks_cut=n_windows - len(taken))
    return PageChunks(chunks)


def chunk_pages(pages: Sequence[SearchResult], settings: ChunkSettings = PAPER_CHUNKS) -> list[str]:
    """Chunks of a question's pages in order, at most ``settings.max_chunks``."""
    return chunk_pages_counted(pages, settings).chunks


def chunk_key(pages: Sequence[SearchResult], settings: ChunkSettings) -> str:
    """Content key of a question's chunks: the pages' text fields and the settings."""
    digest = hashlib.sha256()
    digest.update(f"chunker-v{CHUNKER_VERSION}|{settings.model_dump_json()}|{len(pages)}".encode())
    for page in pages:
        for field in (page.page_result, page.page_snippet):
            data = field.encode("utf-8", "surrogatepass")
            digest.update(len(data).to_bytes(8, "little"))
            digest.update(data)
    return digest.hexdigest()
