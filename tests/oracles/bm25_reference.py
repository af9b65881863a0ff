"""Test oracles written from the formulas, sharing no code with streamrag.retrieval.

Plain Python loops over Counter dicts: slow and obviously right.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence


def naive_tokens(text: str) -> list[str]:
    """lowercase, then [a-z0-9]+ (design §3)."""
    return re.findall(r"[a-z0-9]+", text.lower())


def naive_prefix_tokens(query: str) -> list[list[str]]:
    """Tokens of q[1:t] for t = 1..n, each tokenized from scratch from the joined prefix."""
    words = query.split()
    return [naive_tokens(" ".join(words[:t])) for t in range(1, len(words) + 1)]


def naive_paper_scores(docs: Sequence[Sequence[str]], query: Sequence[str], k1: float = 1.5, b: float = 0.75) -> list[float]:
    """score(Q, d) = Σ_{q ∈ Q} idf(q)·tf·(k1+1)/(tf + k1·(1 − b + b·dl/avgdl)),
    idf(q) = ln(1 + (N − df + 0.5)/(df + 0.5)); repeated query tokens count again.

    The float operations follow the order streamrag documents (rank_bm25's): each term
    is ``idf · (tf·(k1+1) / (tf + k1·(1 − b + b·dl/avgdl)))`` and terms are added in
    query order. Addition is not associative, so mathematically tied sums — e.g.
    s(c, tf=1) + s(x, tf=3) against s(c, tf=3) + s(x, tf=1) with df(c) = df(x) — can
    differ in the last ulp, and then the ranking follows the rounding, not the chunk id.
    Rankings are only comparable between implementations that round alike.
    """
    n_docs = len(docs)
    tfs = [Counter(d) for d in docs]
    avgdl = sum(len(d) for d in docs) / n_docs
    df: Counter[str] = Counter()
    for c in tfs:
        df.update(c.keys())
    scores = []
    for doc, c in zip(docs, tfs, strict=True):
        total = 0.0
        for q in query:
            f = c.get(q, 0)
            if f == 0:
                continue
            idf = math.log(1 + (n_docs - df[q] + 0.5) / (df[q] + 0.5))
            total += idf * (f * (k1 + 1) / (f + k1 * (1 - b + b * len(doc) / avgdl)))
        scores.append(total)
    return scores


def naive_topk(scores: Sequence[float], k: int) -> list[int]:
    """Score descending, ties by id ascending; zero scores eligible."""
    return sorted(range(len(scores)), key=lambda i: (-scores[i], i))[:k]
