"""An independent oracle of the text, chunk and grounding conventions (design §3).

Written from the specification for tests, sharing no code with streamrag: BeautifulSoup
text, 120-word windows at stride 100 (≤ 400), normalized exact grounding.
"""

from __future__ import annotations

import re

from bs4 import BeautifulSoup

DROPPED = {"", "i don t know", "i dont know", "invalid question", "unknown"}


def visible_text(page: dict) -> str:
    text = ""
    if page["page_result"]:
        soup = BeautifulSoup(page["page_result"], "html.parser")
        for tag in soup(["script", "style", "noscript", "head", "template"]):
            tag.decompose()
        text = " ".join(soup.get_text(" ").split())
    return text or " ".join(page["page_snippet"].split())


def chunk_texts(record: dict) -> list[str]:
    chunks: list[str] = []
    for page in record["search_results"]:
        words = visible_text(page).split()
        chunks += [" ".join(words[start : start + 120]) for start in range(0, len(words), 100)]
    return chunks[:400]


def normalize(text: str) -> str:
    return " ".join(re.sub(r"[^a-z0-9 ]", " ", str(text).lower()).split())


def gold_chunks(record: dict) -> list[int]:
    """Ids of the chunks holding the answer or an alt answer (exact rule)."""
    candidates = {normalize(a) for a in [record["answer"], *record["alt_ans"]]} - DROPPED
    gold = []
    for chunk_idx, chunk in enumerate(map(normalize, chunk_texts(record))):
        padded = f" {chunk} "
        if any((a in chunk) if " " in a else (f" {a} " in padded) for a in candidates):
            gold.append(chunk_idx)
    return gold
