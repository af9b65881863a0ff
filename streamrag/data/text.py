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


def collapse_whitespace(text: str) -> str:
    """Runs of whitespace → one space, stripped."""
    return " ".join(text.split())


def _html_parser_text(html: str) -> str:
    from bs4 import BeautifulSoup

    soup = BeautifulSoup(html, "html.parser")
    for element in soup(list(REMOVED_TAGS)):
        element.decompose()
    return collapse_whitespace(soup.get_text(" "))


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


def _lexbor_text(html: str) -> str:
    if html.count("<") > _LEXBOR_TAG_CHECK and _max_depth(html) > _LEXBOR_MAX_DEPTH:
        return _html_parser_text(html)
    from selectolax.lexbor import LexborHTMLParser

    tree = LexborHTMLParser(html)
    for node in tree.css(", ".join(REMOVED_TAGS)):
        node.decompose()
    root = tree.root
    return collapse_whitespace(root.text(separator=" ")) if root is not None else ""


def html_to_text(html: str, parser: HtmlParserName = "html.parser") -> str:
    """Visible text of an HTML page, whitespace-collapsed ('' for an empty page)."""
    if not html or not html.strip():
        return ""
    if parser == "html.parser":
        return _html_parser_text(html)
    if parser == "lexbor":
        return _lexbor_text(html)
    raise ValueError(f"unknown HTML parser {parser!r}; use 'html.parser' or 'lexbor'")
