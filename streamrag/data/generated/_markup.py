"""Page markup for generated data: the bytes a real page carries besides its text.

A real CRAG page is ~80–95% markup by bytes: a ``<head>`` full of meta tags, inline
``<style>`` and ``<script>`` blocks, wrappers around every paragraph, navigation and
footers. Generating that byte by byte would dominate the generator's time, so a
:class:`MarkupPool` builds a few megabytes of script- and style-like code once, and each
page cuts its blocks from it at random offsets. Offsets differ per page, so a
compressor sees text of about the same redundancy as fresh code (it does not find whole
repeated pages inside one 900 kB bzip2 block).

Nothing in the pools contains ``<``, so no block can close its element early.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

_JS_KEYWORDS = (
    "var ", "function(", "return ", "if(", "else{", "for(", "new ", "this.", "typeof ",
    "null", "true", "false", "void 0", "window.", "document.", "const ", "let ",
    "async ", "await ", "try{", "}catch(e){", "Object.assign(", "JSON.parse(",
)  # fmt: skip
_JS_PUNCT = ("(", ")", "{", "}", ";", ",", "=", ".", ":", "?", "&&", "||", "!", "+", "[", "]", "=>")
_CSS_PROPS = (
    "margin", "padding", "color", "background", "font-size", "line-height", "display",
    "border", "width", "max-width", "height", "position", "top", "left", "z-index",
    "font-family", "text-align", "opacity", "transition", "box-shadow", "flex",
)  # fmt: skip
_CSS_VALUES = (
    "0", "auto", "none", "block", "flex", "inline-block", "relative", "absolute", "1px",
    "4px 8px", "12px", "16px", "1.5", "100%", "50%", "#fff", "#222", "#3a3a3a",
    "#f4f4f4", "solid 1px #ddd", "opacity .2s ease", "0 1px 2px rgba(0,0,0,.1)",
    "Helvetica,Arial,sans-serif", "center", "hidden",
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class MarkupPool:
    """Long strings of code and identifiers that page markup is cut from."""

    script: str
    style: str
    classes: tuple[str, ...]

    def cut(self, source: str, n_bytes: int, rng: np.random.Generator) -> str:
        """A piece of ``source`` of ``n_bytes`` characters starting at a random offset."""
        if n_bytes <= 0:
            return ""
        parts = []
        while n_bytes > 0:
            take = min(n_bytes, len(source) - 1)
            start = int(rng.integers(0, len(source) - take))
            parts.append(source[start : start + take])
            n_bytes -= take
        return "".join(parts)


def build_markup_pool(words: list[str], rng: np.random.Generator, *, n_script_bytes: int = 4_000_000) -> MarkupPool:
    """Script- and style-like code built from ``words`` (used as identifiers)."""
    n_ident = min(len(words), 6000)
    picks = rng.choice(len(words), size=n_ident, replace=False)
    idents = [words[i] for i in picks]
    camel = [idents[i] + idents[i + 1].capitalize() for i in range(0, n_ident - 1, 2)]
    numbers = [str(x) for x in rng.integers(0, 100_000, size=400)]
    strings = ['"' + w + '"' for w in idents[:800]] + ["'" + w + "'" for w in idents[800:1200]]
    table = list(_JS_PUNCT) * 12 + list(_JS_KEYWORDS) * 3 + camel + idents[:2000] + numbers + strings
    # Zipf-like token frequencies: punctuation and keywords (first in the table) dominate.
    ranks = np.arange(1, len(table) + 1, dtype=float)
    cdf = np.cumsum(ranks**-0.9)
    cdf /= cdf[-1]
    n_tokens = n_script_bytes // 5
    token_idx = np.searchsorted(cdf, rng.random(n_tokens))
    order = rng.permutation(len(table))  # shuffle so that ranks do not follow table order
    table_arr = np.array(table, dtype=object)[order]
    script = "".join(table_arr[token_idx].tolist())[:n_script_bytes]

    classes = tuple(f"{a}-{b}" for a, b in zip(idents[2000:2600], idents[2600:3200], strict=True))
    n_rules = n_script_bytes // 200
    sel = rng.integers(0, len(classes), size=(n_rules, 2))
    prop = rng.integers(0, len(_CSS_PROPS), size=(n_rules, 3))
    val = rng.integers(0, len(_CSS_VALUES), size=(n_rules, 3))
    rules = [
        f".{classes[s[0]]} .{classes[s[1]]}{{{_CSS_PROPS[p[0]]}:{_CSS_VALUES[v[0]]};"
        f"{_CSS_PROPS[p[1]]}:{_CSS_VALUES[v[1]]};{_CSS_PROPS[p[2]]}:{_CSS_VALUES[v[2]]}}}"
        for s, p, v in zip(sel.tolist(), prop.tolist(), val.tolist(), strict=True)
    ]
    style = "".join(rules)
    return MarkupPool(script=script, style=style, classes=classes)


def render_page(
    *,
    title: str,
    url: str,
    description: str,
    paragraphs: list[str],
    nav: list[str],
    markup_bytes: int,
    pool: MarkupPool,
    rng: np.random.Generator,
) -> str:
    """A full HTML page around ``paragraphs`` with about ``markup_bytes`` of markup.

    Visible text: the nav labels, the title (``<h1>``), the paragraphs and a short
    footer. Everything else sits in ``<head>``, ``<script>``, ``<style>``, ``<noscript>``
    or ``<template>``, or is tag and attribute bytes.
    """
    classes = pool.classes
    cls = rng.integers(0, len(classes), size=len(paragraphs) + 8).tolist()
    nav_html = "".join(f'<li class="{classes[cls[0]]}"><a href="/{w.lower()}/">{w}</a></li>' for w in nav)
    head_fixed = (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>{title}</title>'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        f'<meta name="description" content="{description}"><meta property="og:title" content="{title}">'
        f'<meta property="og:url" content="{url}"><link rel="canonical" href="{url}">'
        '<link rel="preconnect" href="https://cdn.example.net">'
    )
    body_open = (
        f'<body class="{classes[cls[1]]}"><header class="site-header"><nav class="{classes[cls[2]]}">'
        f"<ul>{nav_html}</ul></nav></header><main><article><h1>{title}</h1>"
    )
    parts = []
    # Per-paragraph wrappers; now and then an ad slot with its own little script.
    ad_every = int(rng.integers(4, 9))
    for i, text in enumerate(paragraphs):
        parts.append(f'<div class="{classes[cls[i + 8]]}" data-block="{i}"><p>{text}</p></div>')
        if i % ad_every == ad_every - 1:
            parts.append(
                f'<div class="ad-slot" data-slot="{i}"><script>{pool.cut(pool.script, 300, rng)}</script>'
                '<noscript><img src="https://ads.example.net/pixel.gif" alt=""></noscript></div>'
            )
    if rng.random() < 0.3:
        parts.append(
            f'<template id="tpl-{cls[3]}"><div class="{classes[cls[4]]}">{pool.cut(pool.script, 200, rng)}</div></template>'
        )
    body_close = (
        f'</article></main><footer class="{classes[cls[5]]}"><p>Privacy policy · Terms of use · Contact us</p>'
        "<p>All rights reserved.</p></footer>"
    )
    fixed = len(head_fixed) + len(body_open) + len(body_close) + sum(len(p) for p in parts) + 80
    fixed -= sum(len(p) for p in paragraphs)
    rest = max(0, markup_bytes - fixed)
    n_style, n_head_js = int(rest * 0.15), int(rest * 0.3)
    n_tail_js = rest - n_style - n_head_js
    return "".join(
        (
            head_fixed,
            "<style>", pool.cut(pool.style, n_style, rng), "</style>",
            "<script>", pool.cut(pool.script, n_head_js, rng), "</script></head>",
            body_open, "".join(parts), body_close,
            "<script>", pool.cut(pool.script, n_tail_js, rng), "</script></body></html>",
        )
    )  # fmt: skip
