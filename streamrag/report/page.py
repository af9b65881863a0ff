"""HTML for the report: every string from a run escaped, data in inert JSON, no network.

The page is one file: the style and the script are inline, figures are ``data:`` URLs,
and the per-question rows and timelines travel as JSON in a ``<script
type="application/json">`` block that the script reads with ``JSON.parse`` and draws
with ``textContent`` and ``createElementNS`` — never ``innerHTML`` — so an id or a query
text holding markup stays text.
"""

from __future__ import annotations

import base64
import html
import json
import math
from collections.abc import Iterator, Mapping, Sequence
from importlib.resources import files
from typing import Any

__all__ = ["esc", "figure", "flatten", "json_block", "key_value_table", "metric_table", "page", "rows_table", "section"]

_ASSET = files("streamrag.report")


def esc(value: Any) -> str:
    """``value`` as HTML text (quotes escaped too, so it is safe in attributes)."""
    return html.escape(_text(value), quote=True)


def _text(value: Any) -> str:
    if value is None:
        return "—"
    if isinstance(value, float):
        return "—" if math.isnan(value) else f"{value:.4g}"
    return str(value)


def json_block(element_id: str, data: Any) -> str:
    """``data`` as an inert JSON block; ``<``, ``>`` and ``&`` are written as ``\\u`` escapes
    so no text inside can close the element or open another."""
    text = json.dumps(data, ensure_ascii=False, separators=(",", ":"), allow_nan=False, default=str)
    text = text.replace("&", "\\u0026").replace("<", "\\u003c").replace(">", "\\u003e")
    return f'<script type="application/json" id="{esc(element_id)}">{text}</script>'


def flatten(data: Any, prefix: str = "") -> Iterator[tuple[str, Any]]:
    """``(dotted.key, scalar)`` pairs of nested dicts; lists of scalars are one value."""
    if isinstance(data, Mapping):
        for key, value in data.items():
            yield from flatten(value, f"{prefix}.{key}" if prefix else str(key))
    elif isinstance(data, list) and any(isinstance(v, Mapping | list) for v in data):
        for i, value in enumerate(data):
            yield from flatten(value, f"{prefix}[{i}]")
    else:
        yield prefix, ", ".join(_text(v) for v in data) if isinstance(data, list) else data


def key_value_table(pairs: Sequence[tuple[str, Any]]) -> str:
    rows = "".join(f"<tr><th>{esc(k)}</th><td>{esc(v)}</td></tr>" for k, v in pairs)
    return f'<table class="kv">{rows}</table>'


def metric_table(rows: Sequence[tuple[str, Mapping[str, Any]]]) -> str:
    """One row per metric, one column per statistic (the union of their keys, in order)."""
    columns: list[str] = []
    for _, stats in rows:
        columns += [c for c in stats if c not in columns]
    head = "".join(f"<th>{esc(c)}</th>" for c in ["metric", *columns])
    body = "".join(
        "<tr><th>" + esc(name) + "</th>" + "".join(f"<td>{esc(stats.get(c))}</td>" for c in columns) + "</tr>"
        for name, stats in rows
    )
    return f'<table class="metrics"><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>'


def figure(caption: str, data: bytes, mime: str) -> str:
    """A figure as an ``<img>`` with a ``data:`` URL (SVG stays vector; PNG files of a run
    are shown as they are)."""
    url = f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"
    return f'<figure><img alt="{esc(caption)}" src="{url}"><figcaption>{esc(caption)}</figcaption></figure>'


def rows_table(*, misfires: bool) -> str:
    """The place of the sortable, filterable table the script draws from the data's
    ``table`` (with ``misfires``, a box that keeps the mis-fired rows only)."""
    box = '<label><input type="checkbox" id="only-misfires"> mis-fires only</label>' if misfires else ""
    return (
        f'<div class="controls"><input id="filter" type="search" placeholder="filter rows (any cell)"> {box}'
        '<span id="row-count" class="muted"></span></div><div class="tablewrap"><table id="questions"></table></div>'
    )


def section(title: str, body: str, *, open_: bool = True) -> str:
    return f"<details{' open' if open_ else ''}><summary><h2>{esc(title)}</h2></summary>{body}</details>"


def page(title: str, subtitle: str, body: Sequence[str], data: Mapping[str, Any]) -> str:
    """The whole document: ``body`` (HTML built with :func:`esc`) and ``data`` (the
    per-question table and timelines, drawn by the inline script)."""
    style = (_ASSET / "report.css").read_text(encoding="utf-8")
    script = (_ASSET / "report.js").read_text(encoding="utf-8")
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        '<meta http-equiv="Content-Security-Policy" content="default-src \'none\'; img-src data:; '
        "style-src 'unsafe-inline'; script-src 'unsafe-inline'\">"
        f"<title>{esc(title)}</title><style>{style}</style></head><body>"
        f"<header><h1>{esc(title)}</h1><p>{esc(subtitle)}</p></header><main>"
        + "".join(body)
        + "</main>"
        + json_block("report-data", data)
        + f"<script>{script}</script></body></html>\n"
    )
