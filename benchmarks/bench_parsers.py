"""How the fast HTML parser (lexbor) differs from the reference (html.parser) on real pages.

On CRAG's 10-record sample (50 real HTML pages): time per parser, chunk counts, share of
chunks that are identical, word-level agreement of the page texts, and whether the
stabilization results (t_sc, t_suf, groundable) change.

    .venv/bin/python benchmarks/bench_parsers.py
"""

from __future__ import annotations

import difflib
import sys
import time

from _common import CRAG_DIR, save

from streamrag.analysis.stabilize import AnalysisSettings, analyze_question
from streamrag.data.chunking import ChunkSettings, chunk_pages, page_text
from streamrag.data.crag import read_records
from streamrag.data.ingest import Question


def main() -> int:
    sample = CRAG_DIR / "dev_data.jsonl.bz2"
    if not sample.exists():
        print(f"skipped: {sample} not found")
        return 0
    records = list(read_records(sample))
    pages = [p for r in records for p in r.search_results]
    html_mb = sum(len(p.page_result.encode()) for p in pages) / 1e6
    timing: dict[str, float] = {}
    texts: dict[str, list[str]] = {}
    for parser in ("html.parser", "lexbor"):
        started = time.perf_counter()
        texts[parser] = [page_text(p, parser) for p in pages]
        timing[parser] = time.perf_counter() - started

    word_ratio = []
    for ref, fast in zip(texts["html.parser"], texts["lexbor"], strict=True):
        matcher = difflib.SequenceMatcher(None, ref.split(), fast.split(), autojunk=False)
        word_ratio.append(matcher.ratio())
    identical_pages = sum(a == b for a, b in zip(texts["html.parser"], texts["lexbor"], strict=True))

    rows = []
    n_same_chunks = n_chunks_ref = 0
    for record in records:
        chunks = {p: chunk_pages(record.search_results, ChunkSettings(parser=p)) for p in ("html.parser", "lexbor")}
        ref, fast = chunks["html.parser"], chunks["lexbor"]
        n_chunks_ref += len(ref)
        # The parsers may cut a page into different numbers of chunks: compare the common prefix.
        n_same_chunks += sum(a == b for a, b in zip(ref, fast, strict=False))
        results = {
            p: analyze_question(Question(record, c), AnalysisSettings(chunks=ChunkSettings(parser=p))).row
            for p, c in chunks.items()
        }
        keys = ("n_passages", "groundable", "t_sc", "t_suf", "volatility")
        rows.append(
            {
                "interaction_id": record.interaction_id,
                **{f"{k}_ref": results["html.parser"][k] for k in keys},
                **{f"{k}_lexbor": results["lexbor"][k] for k in keys},
                "same_stabilization": all(results["html.parser"][k] == results["lexbor"][k] for k in keys[1:]),
            }
        )

    result = {
        "pages": len(pages),
        "html_mb": round(html_mb, 2),
        "seconds": {k: round(v, 3) for k, v in timing.items()},
        "speedup_lexbor": round(timing["html.parser"] / timing["lexbor"], 1),
        "identical_page_texts": identical_pages,
        "word_agreement_mean": round(sum(word_ratio) / len(word_ratio), 4),
        "word_agreement_min": round(min(word_ratio), 4),
        "identical_chunks": n_same_chunks,
        "chunks_reference": n_chunks_ref,
        "questions_same_stabilization": sum(r["same_stabilization"] for r in rows),
        "questions": rows,
    }
    print(f"{len(pages)} pages, {html_mb:.1f} MB of HTML")
    print(
        f"html.parser {timing['html.parser']:.2f} s, lexbor {timing['lexbor']:.2f} s: lexbor {result['speedup_lexbor']}x faster"
    )
    print(
        f"identical page texts {identical_pages}/{len(pages)}; word agreement mean {result['word_agreement_mean']}, min {result['word_agreement_min']}"
    )
    print(f"identical chunks {n_same_chunks}/{n_chunks_ref}")
    print(f"questions with identical t_sc, t_suf, groundable, V: {result['questions_same_stabilization']}/{len(rows)}")
    for r in rows:
        if not r["same_stabilization"] or r["n_passages_ref"] != r["n_passages_lexbor"]:
            print(
                f"  {r['interaction_id']}: chunks {r['n_passages_ref']} vs {r['n_passages_lexbor']}, t_sc {r['t_sc_ref']} vs {r['t_sc_lexbor']}, t_suf {r['t_suf_ref']} vs {r['t_suf_lexbor']}"
            )
    print(f"saved {save('parsers', result)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
