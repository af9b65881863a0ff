"""The part of a page between ``<!-- NAME -->`` and ``<!-- /NAME -->`` markers, rewritten by a
script that regenerates it (the endpointing and typed-validation tables)."""

from __future__ import annotations

from pathlib import Path


def splice(page: Path, marker: str, lines: list[str]) -> None:
    """Replace what lies between ``page``'s ``marker`` markers with ``lines``; a page without
    the opening marker is refused (nothing written)."""
    text = page.read_text(encoding="utf-8")
    start, end = f"<!-- {marker} -->", f"<!-- /{marker} -->"
    head, found, rest = text.partition(start)
    if not found:
        raise SystemExit(f"{page}: no {start} marker")
    _, _, tail = rest.partition(end)
    page.write_text(head + start + "\n" + "\n".join(lines) + "\n" + end + tail, encoding="utf-8")
