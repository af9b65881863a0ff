"""HTML → text (design §3).

The reference (``html.parser``, the paper preset) parses with BeautifulSoup's
``html.parser``, removes ``script, style, noscript, head, template`` elements, joins the
text nodes with spaces and collapses whitespace. ``lexbor`` (selectolax) is a faster
option whose output differs slightly; ``benchmarks/bench_parsers.py`` measures how much.
"""

from __future__ import annotations

import re
from typing import Literal

HtmlParserName = Literal["html.parser", "lexbor"]

REMOVED_TAGS: tuple[str, ...] = ("script", "style", "noscript", "head", "template")

# lexbor's tree builder is quadratic in nesting depth (40,000 levels ≈ 4 s, 100,000 ≈ 25 s),
# so pages that nest deeper than this go to the reference parser, which is linear.
_LEXBOR_MAX_DEPTH = 5_000
_LEXBOR_TAG_CHECK = 10_000  # below this many '<', nesting cannot be deep enough to matter
_TAG = re.compile(r"<(/?)([a-zA-Z][a-zA-Z0-9-]*)[^>]*?(/?)>")
_VOID = frozenset(["area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "param", "source", "track", "wbr"])


def _html_parser_words(html: str) -> list[str]:
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html, "html.parser")
    for element in soup(list(REMOVED_TAGS)):
        element.decompose()
    return soup.get_text(" ").split()


def _max_depth(html: str) -> int:
    depth = deepest = 0
    for match in _TAG.finditer(html):
        closing, name, self_closing = match.groups()
        if closing:
            depth = max(0, depth - 1)
        elif not self_closing and name.lower() not in _VOID:
            depth += 1
            deepest = max(deepest, depth)
    return deepest


def _lexbor_words(html: str) -> list[str]:
    if html.count("<") > _LEXBOR_TAG_CHECK and _max_depth(html) > _LEXBOR_MAX_DEPTH:
        return _html_parser_words(html)
    from selectolax.lexbor import LexborHTMLParser

    tree = LexborHTMLParser(html)
    for node in tree.css(", ".join(REMOVED_TAGS)):
        node.decompose()
    root = tree.root
    return root.text(separator=" ").split() if root is not None else []


def html_words(html: str, parser: HtmlParserName = "html.parser") -> list[str]:
    """The words (whitespace-separated) of an HTML page's visible text ([] for an empty
    page): what chunking windows over, without joining them into one string first."""
    if not html or html.isspace():
        return []
    if parser == "html.parser":
        return _html_parser_words(html)
    if parser == "lexbor":
        return _lexbor_words(html)
    raise ValueError(f"unknown HTML parser {parser!r}; use 'html.parser' or 'lexbor'")


def html_to_text(html: str, parser: HtmlParserName = "html.parser") -> str:
    """Visible text of an HTML page, whitespace-collapsed ('' for an empty page)."""
    return " ".join(html_words(html, parser))
