"""Build streamrag's demo data set: ``streamrag/data/demo/demo_questions.jsonl``.

    python scripts/build_demo.py            # (re)write the shipped file
    python scripts/build_demo.py --check    # exit 1 if the shipped file is out of date

Standard library only and deterministic: the same content gives the same bytes (every
choice comes from ``random.Random(<question slug>)``, ids from ``uuid5``). The prose is
in ``demo_content.py`` beside this script; this file turns it into CRAG tasks 1&2 v4
records with five HTML pages per question, each page carrying the noise real pages
have: ``<head>`` with title and meta tags, ``<style>``, analytics ``<script>`` and
JSON-LD, navigation, a cookie banner, bylines, related links, comments, footers, and
sometimes ``<noscript>`` and ``<template>``.
"""

from __future__ import annotations

import argparse
import html
import json
import random
import re
import sys
import uuid
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from demo_content import COMMENTS, FILLER, GENERAL, QUESTIONS, SITES

OUT = Path(__file__).resolve().parents[1] / "streamrag" / "data" / "demo" / "demo_questions.jsonl"
NAMESPACE = uuid.UUID("6f1c2a3e-5b7d-4e8f-9a0b-1c2d3e4f5a6b")  # streamrag demo ids
AUTHORS = ("Maya Lindholm", "Kofi Mensah", "Priya Raman", "Tom Averill", "Lucia Ferrante", "Sam Whitaker", "Hana Kobayashi", "Diego Salas")  # fmt: skip
USERS = ("river_otter", "jmcgee", "north_star_77", "quietreader", "b.lopez", "kettlecorn", "owl_at_noon", "dtran")
EXTRA_FILLER = 2  # bank paragraphs on top of each page's own count: pages of ~300–450 words
STYLE = (
    "body{margin:0;font-family:Georgia,serif;color:#222;background:#fff}"
    "header,footer{background:#f4f4f4;padding:12px 24px}nav ul{display:flex;gap:16px;list-style:none}"
    "article{max-width:720px;margin:0 auto;line-height:1.6}.byline{color:#777;font-size:14px}"
    ".cookie-banner{position:fixed;bottom:0;width:100%;background:#333;color:#fff;padding:8px}"
    ".related li{margin:4px 0}.comment{border-top:1px solid #ddd;padding:8px 0}"
)
ANALYTICS = (
    "window.dataLayer=window.dataLayer||[];function gtag(){dataLayer.push(arguments)}"
    "gtag('js',new Date());gtag('config','UA-{n}-1',{anonymize_ip:true});"
)
TAIL_SCRIPT = (
    "(function(){var b=document.querySelector('.cookie-banner button');"
    "if(b){b.addEventListener('click',function(){document.cookie='consent=1;path=/';"
    "b.parentNode.style.display='none'})};var s=document.createElement('script');"
    "s.src='https://{host}/static/app.{n}.js';s.async=true;document.body.appendChild(s)})();"
)


def slugify(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def fillers(page: dict, domain: str, rng: random.Random) -> list[str]:
    """Bank paragraphs for a page; ``{e}`` only where the page names a fitting entity."""
    entity = page.get("entity")
    bank = FILLER[page.get("bank") or SITES[page["site"]].get("bank") or domain]
    fitting = [p for p in bank if entity or "{e}" not in p]
    n = len(fitting) if page.get("long") else min(page["filler"] + EXTRA_FILLER, len(fitting))
    chosen = rng.sample(fitting, n)
    n_general = len(GENERAL) if page.get("long") else rng.choice((0, 1, 1, 2))
    chosen += rng.sample(GENERAL, n_general)
    rng.shuffle(chosen)
    if not entity:
        return chosen
    named = [text.replace("{e}", entity) for text in chosen]
    return [text[0].upper() + text[1:] for text in named]


def interleave(body: list[str], extra: list[str], rng: random.Random, *, body_first: bool = False) -> list[str]:
    """The body paragraphs in order, with the extra ones at random places around them."""
    if not body:
        return extra
    # the first body paragraph usually leads; now and then other paragraphs come first
    lead = 0 if rng.random() < 0.6 or body_first else min(len(extra), rng.randint(1, 3))
    paragraphs = [*extra[:lead], body[0]]
    rest = extra[lead:]
    for text in body[1:]:
        k = rng.randint(0, min(2, len(rest)))
        paragraphs += [*rest[:k], text]
        rest = rest[k:]
    return paragraphs + rest


def snippet_of(page: dict, paragraphs: list[str]) -> str:
    if page.get("snippet"):
        return page["snippet"]
    source = " ".join(page["body"] or paragraphs)
    words = source.split()
    return " ".join(words[:45]) + (" ..." if len(words) > 45 else "")


def render(page: dict, question: dict, related: list[str], rng: random.Random) -> tuple[str, str]:
    """The page's HTML and its snippet."""
    site = SITES[page["site"]]
    paragraphs = interleave(page["body"], fillers(page, question["domain"], rng), rng, body_first=page.get("lead", False))
    snippet = snippet_of(page, paragraphs)
    if page.get("empty"):
        return "", snippet
    esc = html.escape
    title = page["title"]
    n = rng.randint(100000, 999999)
    analytics = ANALYTICS.replace("{n}", str(n))
    json_ld = json.dumps(
        {
            "@context": "https://schema.org",
            "@type": "Article",
            "headline": title,
            "description": snippet[:200],
            "publisher": site["name"],
        }
    )
    head = (
        f'<head><meta charset="utf-8"><title>{esc(title)} | {esc(site["name"])}</title>'
        f'<meta name="viewport" content="width=device-width,initial-scale=1">'
        f'<meta name="description" content="{esc(snippet[:160])}">'
        f'<meta property="og:title" content="{esc(title)}"><meta property="og:site_name" content="{esc(site["name"])}">'
        f'<link rel="stylesheet" href="https://www.{site["host"]}/static/main.css">'
        f"<style>{STYLE}</style><script>{analytics}</script>"
        f'<script type="application/ld+json">{json_ld}</script></head>'
    )
    nav = "".join(f'<li><a href="/{slugify(label)}/">{esc(label)}</a></li>' for label in site["nav"])
    author = rng.choice(AUTHORS)
    # the byline date precedes the question's query_time ("MM/DD/YYYY, hh:mm:ss PT")
    asked_month, asked_day = int(question["query_time"][:2]), int(question["query_time"][3:5])
    month = rng.randint(1, asked_month)
    day = rng.randint(1, asked_day - 1 if month == asked_month and asked_day > 1 else 28)
    month = ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec")[month - 1]
    parts = [
        '<!DOCTYPE html><html lang="en">',
        head,
        f'<body class="site-{page["site"]}"><a class="skip" href="#main">Skip to content</a>',
        f'<header><div class="logo">{esc(site["name"])}</div><nav><ul>{nav}</ul></nav></header>',
        '<div class="cookie-banner">We use cookies to improve your experience. By continuing to browse '
        "you agree to our use of cookies. <button>Accept</button></div>",
        f'<main id="main"><article><h1>{esc(title)}</h1>',
        f'<p class="byline">By {author} · Updated {month} {day}, 2024</p>',
    ]
    parts += [f"<p>{esc(text)}</p>" for text in paragraphs]
    parts.append("</article>")
    n_comments = 6 if page.get("long") else page.get("comments", 0)
    if n_comments:
        picked = rng.sample(COMMENTS, min(n_comments, len(COMMENTS)))
        comments = "".join(
            f'<div class="comment"><p class="author">{rng.choice(USERS)}</p><p>{esc(text)}</p></div>' for text in picked
        )
        parts.append(f'<section class="comments"><h2>{len(picked)} comments</h2>{comments}</section>')
        parts.append(
            '<template id="comment-form"><form class="comment-form"><textarea>Write a comment</textarea>'
            "<button>Post comment</button></form></template>"
        )
    links = "".join(f'<li><a href="/{slugify(t)}">{esc(t)}</a></li>' for t in related)
    parts.append(f'<aside class="related"><h2>Related</h2><ul>{links}</ul></aside></main>')
    parts.append(
        f"<footer><p>{esc(site['footer'])}</p><p>© 2024 {esc(site['name'])}. All rights reserved.</p>"
        '<ul><li><a href="/about">About us</a></li><li><a href="/privacy">Privacy</a></li>'
        '<li><a href="/terms">Terms</a></li></ul></footer>'
    )
    if rng.random() < 0.4:
        parts.append("<noscript><p>Please enable JavaScript to see live data and comments.</p></noscript>")
    tail = TAIL_SCRIPT.replace("{host}", site["host"]).replace("{n}", str(n))
    parts.append(f"<script>{tail}</script></body></html>")
    return "".join(parts), snippet


def build_record(question: dict) -> dict:
    rng = random.Random(question["slug"])
    # Search results come in the search engine's order, not the content's: the page
    # written first (usually the answer's) may land anywhere.
    pages = list(question["pages"])
    random.Random(f"{question['slug']}/order").shuffle(pages)
    titles = [p["title"] for p in pages]
    results = []
    for page_idx, page in enumerate(pages):
        others = [t for i, t in enumerate(titles) if i != page_idx]
        related = rng.sample(others, 3)
        page_html, snippet = render(page, question, related, rng)
        site = SITES[page["site"]]
        results.append(
            {
                "page_name": page["title"],
                "page_url": f"https://www.{site['host']}/{slugify(page['title'])}",
                "page_snippet": snippet,
                "page_result": page_html,
                "page_last_modified": f" {page['modified']}" if page.get("modified") else "",
            }
        )
    return {
        "interaction_id": str(uuid.uuid5(NAMESPACE, question["slug"])),
        "query_time": question["query_time"],
        "domain": question["domain"],
        "question_type": question["question_type"],
        "static_or_dynamic": question["static_or_dynamic"],
        "query": question["query"],
        "answer": question["answer"],
        "alt_ans": list(question["alt_ans"]),
        "split": question["split"],
        "search_results": results,
    }


def build() -> bytes:
    lines = [json.dumps(build_record(q), ensure_ascii=False) for q in QUESTIONS]
    return ("\n".join(lines) + "\n").encode("utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="only check that the shipped file is up to date")
    parser.add_argument("--out", type=Path, default=OUT, help=f"output file (default {OUT})")
    args = parser.parse_args(argv)
    data = build()
    if args.check:
        current = args.out.read_bytes() if args.out.exists() else b""
        if current != data:
            print(f"{args.out} is out of date: run python scripts/build_demo.py", file=sys.stderr)
            return 1
        return 0
    args.out.parent.mkdir(parents=True, exist_ok=True)
    tmp = args.out.with_name(args.out.name + ".part")
    tmp.write_bytes(data)
    tmp.replace(args.out)
    print(f"wrote {args.out}: {len(QUESTIONS)} questions, {len(data):,} bytes", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
