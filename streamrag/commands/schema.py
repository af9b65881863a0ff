"""``streamrag schema KIND [--out FILE]``: the JSON Schema of a run's JSON output.

==================  ===========================================================
``summary``         ``summary.json`` of a simulate or live run
``load-summary``    ``summary.json`` of a load run (a simulate scenario with ``[load]``)
``analyze-summary`` ``summary.json`` of ``analyze`` or ``stats``
``manifest``        ``manifest.json`` of a simulate, load or live run
``sweep-manifest``  ``manifest.json`` of a sweep folder
``trace-event``     one line of ``trace.jsonl`` (a union discriminated by ``kind``)
``trace-header``    the first line of ``trace.jsonl`` (its format and version)
==================  ===========================================================

Each schema is generated from the pydantic model the writer validates its data with, and
names the format version it describes (``x-streamrag-format-version``). The package ships
them, as written by this command, in ``streamrag/schemas/KIND.schema.json`` (a test
regenerates and compares them). Standard-library imports only at top level.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

KINDS = ("summary", "load-summary", "analyze-summary", "manifest", "sweep-manifest", "trace-event", "trace-header")

SCHEMAS_DIR = Path(__file__).resolve().parents[1] / "schemas"
"""Where the package ships the schemas (``KIND.schema.json``)."""


def add_parser(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "schema",
        help="the JSON Schema of summary.json (simulate, load, analyze), manifest.json (a run's or a sweep's), "
        "a trace event or a trace's header",
        description="Print (or write) the JSON Schema of a run's summary.json (simulate, load or analyze), manifest.json, one "
        "trace.jsonl event or the trace's header line, generated from the models the writers validate with.",
    )
    p.add_argument("kind", choices=KINDS, help="which file")
    p.add_argument("--out", metavar="FILE", help="write it here (atomically) instead of printing it")
    p.set_defaults(run=run)


def json_schema(kind: str) -> dict[str, Any]:
    """The JSON Schema of ``kind`` (one of :data:`KINDS`), with its format version."""
    from streamrag.base.formats import FORMAT_VERSION

    if kind == "summary":
        from streamrag.simulator.run_files import SimulateSummary

        body = SimulateSummary.model_json_schema()
    elif kind == "load-summary":
        from streamrag.simulator.run_files import LoadSummary

        body = LoadSummary.model_json_schema()
    elif kind == "analyze-summary":
        from streamrag.analysis.summary_model import AnalyzeSummary

        body = AnalyzeSummary.model_json_schema()
    elif kind == "manifest":
        from streamrag.simulator.run_files import RunManifest

        body = RunManifest.model_json_schema()
    elif kind == "sweep-manifest":
        from streamrag.sweep.run_files import SweepManifest

        body = SweepManifest.model_json_schema()
    elif kind == "trace-header":
        from streamrag.engine.trace_file import TraceHeader

        body = TraceHeader.model_json_schema()
    else:
        from streamrag.engine.trace_events import TRACE_EVENT

        body = {"title": "streamrag trace.jsonl event", **TRACE_EVENT.json_schema()}
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", "x-streamrag-format-version": FORMAT_VERSION, **body}


def schema_text(kind: str) -> str:
    """:func:`json_schema` as the shipped file holds it."""
    return json.dumps(json_schema(kind), indent=2, ensure_ascii=False) + "\n"


def run(args: argparse.Namespace) -> int:
    text = schema_text(args.kind)
    if args.out is None:
        print(text, end="")
        return 0
    from streamrag.base.atomic import write_text_atomic

    write_text_atomic(args.out, text)
    print(f"wrote {args.out}")
    return 0
