"""CRAG-shaped data at any scale, generated from a seed.

:func:`generate_records` yields records in the CRAG tasks 1&2 v4 format (design §3):
metadata drawn with CRAG's proportions (:mod:`streamrag.data.generated.crag_shape`), a query
whose length follows CRAG's word-count histogram, and five HTML pages whose visible text
is Zipf-distributed made-up words (:mod:`streamrag.data.generated._lexicon`) wrapped in markup of
realistic weight (:mod:`streamrag.data.generated._markup`).

So that prefix retrieval has something to find, the query's content words (rank ≥
``CONTENT_RANK``) are planted into the pages: most of them near one "gold" spot, some
around a distractor spot on another page, a few scattered everywhere. For the
``groundable_fraction`` share of questions the answer is planted at the gold spot (and
sometimes elsewhere); other answers are made of names and numbers that never occur in
page text by chance, so they are not groundable. Content words appear at random
positions of the query, so stabilization comes early for some questions and late for
others.

Determinism: question ``i`` draws from ``SeedSequence(seed, spawn_key=(i,))`` only —
the i-th child of ``SeedSequence(seed).spawn`` — split into one stream per component
(metadata, query and answer, page text, page details, markup; with ``relaxed_share`` > 0
a sixth stream decides whether the planted answer is reworded for relaxed grounding,
:func:`~streamrag.data.generated._questions.relaxed_form`, so the default data are unchanged). Question ``i`` is the same whatever
``n_questions`` is, and changing ``html_overhead`` changes no word of any page.

:func:`write_crag_file` writes them as ``.jsonl`` or ``.jsonl.bz2``, atomically.
The stabilization-table model lives in :mod:`streamrag.data.generated.synthetic_table` and is
re-exported here as :func:`generate_stabilization_table`.
"""

from __future__ import annotations

import bz2
import json
import os
import uuid
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from functools import lru_cache
from itertools import pairwise
from pathlib import Path

import numpy as np
from pydantic import Field

from streamrag.base.atomic import atomic_path
from streamrag.base.errors import ConfigError
from streamrag.base.lines import zstd_writer
from streamrag.base.validation import SettingsModel
from streamrag.data.generated import crag_shape as profile
from streamrag.data.generated._lexicon import (
    CONTENT_RANK,
    VARIANT_CAP,
    VARIANT_CAP_PERIOD,
    VARIANT_COMMA,
    VARIANT_PERIOD,
    Lexicon,
    build_lexicon,
)
from streamrag.data.generated._markup import MarkupPool, build_markup_pool, render_page
from streamrag.data.generated._questions import MONTHS, draw_answer, draw_query, relaxed_form
from streamrag.data.generated.synthetic_table import generate_stabilization_table

__all__ = [
    "GeneratorSettings",
    "WriteStats",
    "generate_record",
    "generate_records",
    "generate_stabilization_table",
    "write_crag_file",
]

_WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")
_BATCH_BYTES = 8 << 20  # JSON bytes handed to the compressor at once (one bz2 stream each)


class GeneratorSettings(SettingsModel):
    """What to generate. Defaults give CRAG-sized questions (≈ 150 chunks each)."""

    n_questions: int = Field(ge=0, description="number of records")
    pages_per_question: int = Field(5, ge=1, le=100)
    page_words: int = Field(
        3000,
        ge=20,
        description="mean visible words per page; 5 × 3000 words ≈ 150 chunks of stride 100 per question",
    )
    html_overhead: float = Field(
        0.85, ge=0.0, le=0.98, description="share of a page's bytes that is markup (real CRAG pages: ≈ 0.8–0.97)"
    )
    vocabulary_size: int = Field(50_000, ge=1_000, le=1_000_000)
    zipf_exponent: float = Field(1.1, gt=0.5, le=3.0)
    groundable_fraction: float = Field(0.35, ge=0.0, le=1.0, description="share of questions whose answer is planted")
    split_fraction_validation: float = Field(0.5, ge=0.0, le=1.0, description="share of records with split 0")
    relaxed_share: float = Field(
        0.0, ge=0.0, le=1.0,
        description="share of groundable questions whose answer the pages word only as relaxed grounding finds it "
        "(content words reordered, stopwords between them; answers with fewer than two content words stay exact)",
    )  # fmt: skip
    seed: int = Field(0, ge=0)


@dataclass(frozen=True, slots=True)
class WriteStats:
    """What :func:`write_crag_file` wrote: records, JSON bytes before and file bytes after compression."""

    path: Path
    n_records: int
    n_json_bytes: int
    n_file_bytes: int
    compressed: bool


@lru_cache(maxsize=4)
def _markup_pool(vocabulary_size: int, zipf_exponent: float) -> MarkupPool:
    lexicon = build_lexicon(vocabulary_size, zipf_exponent)
    rng = np.random.default_rng(np.random.SeedSequence(0x3A4C0, spawn_key=(vocabulary_size,)))
    return build_markup_pool(list(lexicon.words), rng)


def _page_lengths(rng: np.random.Generator, settings: GeneratorSettings) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Visible words per page, and which pages are empty (snippet only) or duplicates of the previous one."""
    n_pages = settings.pages_per_question
    sigma = 0.6  # log-normal spread; keeps the mean at page_words
    lengths = rng.lognormal(np.log(settings.page_words) - sigma**2 / 2, sigma, size=n_pages)
    lengths = np.maximum(lengths.astype(np.int64), 20)
    empty = rng.random(n_pages) < 0.05
    duplicate = rng.random(n_pages) < 0.08
    empty[0] = duplicate[0] = False
    duplicate &= ~empty
    lengths[empty] = rng.integers(25, 50, size=int(empty.sum()))  # the snippet
    lengths[duplicate] = 0
    return lengths, empty, duplicate


def _surface_variants(rng: np.random.Generator, n: int) -> np.ndarray:
    """Per word: plain, capitalized after a sentence end, or ending a sentence / clause."""
    u = rng.random(n)
    ends = u < 1 / 17
    commas = (u >= 1 / 17) & (u < 1 / 17 + 1 / 14)
    caps = np.roll(ends, 1)
    if n:
        caps[0] = True
    variant = np.zeros(n, dtype=np.int64)
    variant[commas] = VARIANT_COMMA
    variant[caps] = VARIANT_CAP
    variant[ends] = VARIANT_PERIOD
    variant[ends & caps] = VARIANT_CAP_PERIOD
    return variant


def _plant(idx: np.ndarray, words: np.ndarray, lo: int, hi: int, center: int, spread: int, rng: np.random.Generator) -> None:
    if hi <= lo or len(words) == 0:
        return
    pos = np.clip(center + rng.integers(-spread, spread + 1, size=len(words)), lo, hi - 1)
    idx[pos] = words


def generate_record(settings: GeneratorSettings, question_idx: int) -> dict:
    """Question ``question_idx`` (0-based) of the data set ``settings`` describes."""
    lexicon = build_lexicon(settings.vocabulary_size, settings.zipf_exponent)
    pool = _markup_pool(settings.vocabulary_size, settings.zipf_exponent)
    return _make_record(settings, question_idx, lexicon, pool)


def _make_record(settings: GeneratorSettings, question_idx: int, lexicon: Lexicon, pool: MarkupPool) -> dict:
    ss = np.random.SeedSequence(settings.seed, spawn_key=(question_idx,))
    meta_rng, query_rng, text_rng, page_rng, markup_rng = (np.random.default_rng(s) for s in ss.spawn(5))

    interaction_id = str(uuid.UUID(bytes=meta_rng.bytes(16), version=4))
    month, day = int(meta_rng.integers(1, 4)), int(meta_rng.integers(1, 29))
    hour, minute, second = (int(x) for x in meta_rng.integers(0, [24, 60, 60]))
    domain, dynamism = profile.draw_domain_and_dynamism(meta_rng)
    question_type = profile.draw_question_type(meta_rng)
    split = 0 if meta_rng.random() < settings.split_fraction_validation else 1
    n_words = profile.draw_n_words(meta_rng)
    kind = profile.draw_answer_kind(meta_rng, question_type)
    # false-premise answers ("invalid question") can never be grounded: raise the others'
    # chance so that the overall share is groundable_fraction.
    p_ground = min(1.0, settings.groundable_fraction / (1.0 - profile.P_FALSE_PREMISE))
    groundable = kind != "invalid" and meta_rng.random() < p_ground
    lengths, empty, duplicate = _page_lengths(meta_rng, settings)

    query, keys = draw_query(query_rng, n_words, lexicon)
    answer, alt_ans = draw_answer(query_rng, kind, lexicon)
    planted = answer if groundable else None
    if groundable and settings.relaxed_share > 0:
        # its own stream, drawn only when asked: the default data stay byte-identical
        relax_rng = np.random.default_rng(ss.spawn(1)[0])
        if relax_rng.random() < settings.relaxed_share:
            planted = relaxed_form(relax_rng, answer) or answer
    offsets = np.concatenate(([0], np.cumsum(lengths)))
    words, gold_page, gold_at = _page_words(text_rng, offsets, empty | duplicate, keys, planted, lexicon)

    search_results: list[dict] = []
    for page_idx in range(settings.pages_per_question):
        if duplicate[page_idx]:  # search engines return the same page twice now and then
            search_results.append(dict(search_results[-1]))
            continue
        lo, hi = int(offsets[page_idx]), int(offsets[page_idx + 1])
        # the gold page's snippet is taken around the gold spot, as a search engine would
        at = gold_at - lo if page_idx == gold_page else int(page_rng.integers(0, max(1, hi - lo - 30)))
        search_results.append(_page(words[lo:hi], at, bool(empty[page_idx]), keys, settings, lexicon, pool, page_rng, markup_rng))
    return {
        "interaction_id": interaction_id,
        "query_time": f"{month:02d}/{day:02d}/2024, {hour:02d}:{minute:02d}:{second:02d} PT",
        "domain": domain,
        "question_type": question_type,
        "static_or_dynamic": dynamism,
        "query": query,
        "answer": answer,
        "alt_ans": alt_ans,
        "split": split,
        "search_results": search_results,
    }


def _page_words(
    rng: np.random.Generator,
    offsets: np.ndarray,
    no_text: np.ndarray,
    keys: np.ndarray,
    answer: str | None,
    lexicon: Lexicon,
) -> tuple[list[str], int, int]:
    """The visible words of all pages (one list, page i is ``offsets[i]:offsets[i+1]``).

    Returns the words, the gold page and the gold position. Most of the query's content
    words ``keys`` go near the gold position, some near a decoy position on another
    page, a few everywhere; ``answer`` (if given) at the gold position and sometimes
    elsewhere.
    """
    idx = lexicon.draw(rng, int(offsets[-1]))
    full = np.flatnonzero(~no_text)
    gold_page = int(full[rng.integers(len(full))])
    g_lo, g_hi = int(offsets[gold_page]), int(offsets[gold_page + 1])
    gold_at = int(rng.integers(g_lo, g_hi))
    _plant(idx, keys[rng.random(len(keys)) < 0.8], g_lo, g_hi, gold_at, 40, rng)
    if len(full) > 1 and rng.random() < 0.7:  # pages share vocabulary: a decoy spot
        other = int(full[rng.integers(len(full))])
        o_lo, o_hi = int(offsets[other]), int(offsets[other + 1])
        _plant(idx, keys[rng.random(len(keys)) < 0.5], o_lo, o_hi, int(rng.integers(o_lo, o_hi)), 40, rng)
    scatter = np.repeat(keys, rng.poisson(3.0, size=len(keys)))
    idx[rng.integers(0, len(idx), size=len(scatter))] = scatter
    variant = _surface_variants(rng, len(idx))
    words = lexicon.surface[idx + lexicon.size * variant].tolist()
    if answer is not None:
        words[gold_at] = answer
        for pos in rng.integers(0, len(words), size=int(rng.poisson(0.7))).tolist():
            words[pos] = answer
    return words, gold_page, gold_at


def _page(
    words: list[str],
    snippet_at: int,
    empty: bool,
    keys: np.ndarray,
    settings: GeneratorSettings,
    lexicon: Lexicon,
    pool: MarkupPool,
    rng: np.random.Generator,
    markup_rng: np.random.Generator,
) -> dict:
    """One search result: name, URL, snippet, HTML (``""`` when ``empty``), last-modified."""
    snippet = " ".join(words[max(0, snippet_at - 15) : snippet_at + 25])
    title_words = [lexicon.words[i] for i in lexicon.draw(rng, int(rng.integers(4, 10))).tolist()]
    if len(keys):  # titles usually name what the page is about
        title_words[int(rng.integers(len(title_words)))] = lexicon.words[int(keys[rng.integers(len(keys))])]
    title = " ".join(w.capitalize() for w in title_words)
    site = lexicon.words[int(lexicon.draw(rng, 1, low_rank=CONTENT_RANK)[0])]
    url = f"https://www.{site}.example/{'-'.join(title_words).lower()}"
    html = ""
    if not empty:
        ends = np.cumsum(rng.integers(40, 140, size=len(words) // 40 + 2))
        cuts = [0, *ends[ends < len(words)].tolist(), len(words)]
        paragraphs = [" ".join(words[a:b]) for a, b in pairwise(cuts)]
        text_bytes = sum(len(p) + 1 for p in paragraphs)
        nav = [lexicon.words[i].capitalize() for i in rng.integers(60, 2000, size=int(rng.integers(4, 9))).tolist()]
        html = render_page(
            title=title,
            url=url,
            description=snippet[:160],
            paragraphs=paragraphs,
            nav=nav,
            markup_bytes=int(text_bytes * settings.html_overhead / (1.0 - settings.html_overhead)),
            pool=pool,
            rng=markup_rng,
        )
    last_modified = ""
    if rng.random() < 0.5:  # CRAG's format, leading space included
        d = rng.integers([0, 1, 0, 0, 0, 0], [7, 29, 12, 24, 60, 60]).tolist()
        month = MONTHS[d[2]][:3].capitalize()
        last_modified = f" {_WEEKDAYS[d[0]]}, {d[1]:02d} {month} 2024 {d[3]:02d}:{d[4]:02d}:{d[5]:02d} GMT"
    return {
        "page_name": title,
        "page_url": url,
        "page_snippet": snippet,
        "page_result": html,
        "page_last_modified": last_modified,
    }


def generate_records(settings: GeneratorSettings) -> Iterator[dict]:
    """Yield ``settings.n_questions`` CRAG-v4-shaped records, deterministic for ``settings``."""
    lexicon = build_lexicon(settings.vocabulary_size, settings.zipf_exponent)
    pool = _markup_pool(settings.vocabulary_size, settings.zipf_exponent)
    for question_idx in range(settings.n_questions):
        yield _make_record(settings, question_idx, lexicon, pool)


def _json_batches(records: Iterator[dict], on_record: Callable[[int], None] | None) -> Iterator[tuple[bytes, int]]:
    """JSON lines joined into batches of about ``_BATCH_BYTES``, with their record counts."""
    lines: list[str] = []
    size = n = 0
    dumps = json.JSONEncoder(ensure_ascii=False).encode
    for record in records:
        line = dumps(record)
        lines.append(line)
        size += len(line) + 1
        n += 1
        if on_record is not None:
            on_record(1)
        if size >= _BATCH_BYTES:
            yield ("\n".join(lines) + "\n").encode(), n
            lines, size, n = [], 0, 0
    if lines:
        yield ("\n".join(lines) + "\n").encode(), n


def write_crag_file(
    path: str | os.PathLike[str],
    settings: GeneratorSettings,
    *,
    compress: bool | None = None,
    compress_workers: int = 2,
    on_record: Callable[[int], None] | None = None,
) -> WriteStats:
    """Write :func:`generate_records` to ``path`` as JSON lines; compressed when ``compress``.

    ``compress=None`` compresses iff the name ends in ``.bz2`` or ``.zst``; the name's suffix
    picks the format (Zstandard for ``.zst``, bzip2 otherwise). Zstandard is one frame with a
    content checksum (:func:`~streamrag.base.lines.zstd_writer`). For bzip2, with ``compress_workers``
    ≥ 1, batches of ~8 MB are compressed as independent bzip2 streams by that many
    threads (bz2 releases the GIL), which overlaps compression with generation; the
    concatenation is a valid multi-stream ``.bz2`` file that ``bzip2 -dc``, Python's
    ``bz2`` and ``indexed_bzip2`` read. ``compress_workers=0`` compresses inline as one
    stream. The file appears only when complete: data goes to a temporary file in the
    same folder that replaces ``path`` at the end and is removed on any error.
    ``on_record(1)`` is called after each record (for progress bars).
    """
    target = Path(path)
    if compress is None:
        compress = target.suffix in (".bz2", ".zst")
    if compress_workers < 0:
        raise ConfigError(f"compress_workers must be ≥ 0, got {compress_workers}")
    if not target.parent.is_dir():
        raise ConfigError(f"cannot write {target}: folder {target.parent} does not exist")
    n_records = n_json = 0
    with atomic_path(target) as tmp, open(tmp, "wb") as raw:
        batches = _json_batches(generate_records(settings), on_record)
        if not compress:
            for data, n in batches:
                raw.write(data)
                n_records, n_json = n_records + n, n_json + len(data)
        elif target.suffix == ".zst":
            with zstd_writer(raw) as out:
                for data, n in batches:
                    out.write(data)
                    n_records, n_json = n_records + n, n_json + len(data)
        elif compress_workers == 0:
            compressor = bz2.BZ2Compressor(9)
            for data, n in batches:
                raw.write(compressor.compress(data))
                n_records, n_json = n_records + n, n_json + len(data)
            raw.write(compressor.flush())
        else:
            with ThreadPoolExecutor(max_workers=compress_workers, thread_name_prefix="bz2") as pool:
                pending: deque[Future[bytes]] = deque()
                for data, n in batches:
                    pending.append(pool.submit(bz2.compress, data, 9))
                    n_records, n_json = n_records + n, n_json + len(data)
                    while len(pending) > compress_workers:  # bounded memory, output in order
                        raw.write(pending.popleft().result())
                while pending:
                    raw.write(pending.popleft().result())
            if n_json == 0:  # an empty but valid bzip2 file
                raw.write(bz2.compress(b""))
        raw.flush()
        os.fsync(raw.fileno())
    return WriteStats(
        path=target, n_records=n_records, n_json_bytes=n_json, n_file_bytes=target.stat().st_size, compressed=compress
    )
