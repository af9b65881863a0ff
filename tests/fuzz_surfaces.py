"""The hostile harness's registry: every command-line surface that reads a file, once.

A :class:`Surface` names the command and argument that read the file, writes a valid
seed input into a folder (the fuzzed file and whatever else the command needs), and
says which fields hold numbers people or tools wrote (``numbers``): an absurd value there
(NaN, ±inf, negative, 10⁴⁰, a boolean, text, empty) must be refused in one line or skipped
and said, never taken silently. :func:`mutations` draws damaged versions of the seed
file (hypothesis); ``tests/hostile/test_fuzz_surfaces.py`` runs each and checks the contract.
``tests/hostile/test_fuzz_surfaces.py::test_every_file_argument_is_registered`` fails when a
command gains an argument that reads a file and no surface (or exemption) names it.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from hypothesis import strategies as st

Format = Literal["jsonl", "csv", "tsv", "toml", "lines"]


@dataclass(frozen=True)
class Surface:
    """One file a command reads: ``reads`` = (command, argparse dest, or ``--set KEY``)."""

    name: str
    reads: tuple[str, str]
    file: str
    format: Format
    argv: tuple[str, ...]
    seed: Callable[[Path], None]
    numbers: tuple[str, ...] = ()
    header: bool = field(default=False)
    """csv/tsv: the first line is a header (kept by the row mutations)."""
    signed: tuple[str, ...] = ()
    """Number fields where a negative value is plausible (an intercept, a measured saving)."""
    optional: tuple[str, ...] = ()
    """Number fields that may be empty (left out: the reader does without them)."""


# --------------------------------------------------------------------------- seeds


def _record(i: int) -> dict[str, Any]:
    from _inputs import record

    return record(
        i, query=["who founded acme robotics in boston", "where is acme robotics based", "when was acme founded"][i % 3]
    )


def _jsonl(path: Path, objects: list[Any]) -> None:
    path.write_text("".join(json.dumps(o) + "\n" for o in objects), encoding="utf-8")


def _data(folder: Path) -> None:
    _jsonl(folder / "d.jsonl", [_record(i) for i in range(3)])


def _table(folder: Path) -> None:
    from streamrag.analysis.table import write_table
    from streamrag.data.generated.synthetic_table import generate_stabilization_table

    write_table(generate_stabilization_table(12, seed=4), folder / "t.csv")


def _scenario(folder: Path) -> None:
    _table(folder)
    (folder / "s.toml").write_text(
        'name = "mine"\nseed = 3\n[latency]\nL_ms = 600\nG_ms = 500\nF_ms = 900\n'
        '[trigger]\nkind = "interval"\nwords = 3\n[input]\nkind = "uniform"\ndelta_wps = 3.0\n',
        encoding="utf-8",
    )


def _grid(folder: Path) -> None:
    (folder / "g.toml").write_text(
        'name = "g"\nkind = "simulate"\ninput = "generated:20:seed=1"\nscenario = "paper_rq3"\n'
        '[axes]\n"latency.L_ms" = [300, 600]\n"input.delta_wps" = [2.0, 3.0]\n',
        encoding="utf-8",
    )


def _measurements(folder: Path) -> None:
    rows = ["timestamp,stage,duration_ms"]
    for i in range(75):
        rows.append(f"2025-01-01T00:00:{i:02d}Z,{'GLF'[i % 3]},{300 + 37 * (i % 11) + (i % 3) * 200}")
    (folder / "m.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")


SPAN_RULES = ("--span", "speculate.generate_query=G", "--span", "execute_tool lookup=L", "--span", "speculate.respond=F")
"""The rules that read a Speculator's spans back (docs/telemetry.md)."""


def _speculator_turns() -> list[list[dict[str, Any]]]:
    """Eight turns of a Speculator's spans, as plain records: (name, parent, start µs,
    length µs, attributes), the turn's first."""
    turns = []
    for i in range(8):
        t0 = 1_760_000_000_000_000 + i * 5_000_000
        g, l_, f = 400 + 37 * i, 900 + 53 * (i % 5), 1_200 + 71 * (i % 3)
        outcome = ("used", "expired", "superseded", "used_after_wait")[i % 4]
        turns.append(
            [
                {"name": "speculate.turn", "id": 1, "parent": 0, "start": t0, "length": g + l_ + f + 9_000, "attrs": {"streamrag.turn.id": f"q{i}"}},
                {"name": "speculate.tool_call", "id": 2, "parent": 1, "start": t0 + 1_000, "length": g + l_, "attrs": {"streamrag.call.outcome": outcome, "streamrag.call.speculative": True}},
                {"name": "speculate.generate_query", "id": 3, "parent": 2, "start": t0 + 1_000, "length": g, "attrs": {"streamrag.stage": "G"}},
                {"name": "execute_tool lookup", "id": 4, "parent": 2, "start": t0 + 1_000 + g, "length": l_, "attrs": {"gen_ai.tool.name": "lookup"}},
                {"name": "speculate.respond", "id": 5, "parent": 1, "start": t0 + 8_000 + g + l_, "length": f, "attrs": {"streamrag.stage": "F"}},
            ]
        )  # fmt: skip
    return turns


def _otlp_value(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"boolValue": value}
    return {"stringValue": value}


def _otlp_spans(folder: Path) -> None:
    lines = []
    for i, turn in enumerate(_speculator_turns()):
        spans = [
            {
                "traceId": f"{i + 1:032x}",
                "spanId": f"{i + 1:08x}{s['id']:08x}",
                "parentSpanId": f"{i + 1:08x}{s['parent']:08x}" if s["parent"] else "",
                "name": s["name"],
                "startTimeUnixNano": str(s["start"] * 1000),
                "endTimeUnixNano": str((s["start"] + s["length"]) * 1000),
                "attributes": [{"key": k, "value": _otlp_value(v)} for k, v in s["attrs"].items()],
                "status": {"code": 0},
            }
            for s in turn
        ]
        lines.append(
            {"resourceSpans": [{"resource": {"attributes": []}, "scopeSpans": [{"scope": {"name": "t"}, "spans": spans}]}]}
        )
    _jsonl(folder / "spans.jsonl", lines)  # one export per line, as the collector's file exporter writes


def _jaeger_spans(folder: Path) -> None:
    lines = []
    for i, turn in enumerate(_speculator_turns()):
        trace = f"{i + 1:032x}"
        spans = [
            {
                "traceID": trace,
                "spanID": f"{i + 1:08x}{s['id']:08x}",
                "operationName": s["name"],
                "references": [{"refType": "CHILD_OF", "traceID": trace, "spanID": f"{i + 1:08x}{s['parent']:08x}"}] if s["parent"] else [],
                "startTime": s["start"],
                "duration": s["length"],
                "tags": [{"key": k, "type": "bool" if isinstance(v, bool) else "string", "value": v} for k, v in s["attrs"].items()],
                "processID": "p1",
            }
            for s in turn
        ]  # fmt: skip
        lines.append({"data": [{"traceID": trace, "spans": spans, "processes": {"p1": {"serviceName": "streamrag"}}}]})
    _jsonl(folder / "jaeger.json", lines)  # one download per line: each line is read as one document


def _transcript(folder: Path) -> None:
    words = ["who", "founded", "acme", "robotics", "in", "boston"]
    _jsonl(folder / "w.jsonl", [{"word": w, "t_ms": 31.0 * i} for i, w in enumerate(words)])  # live runs on the real clock


def _ids(folder: Path) -> None:
    _data(folder)
    (folder / "ids.txt").write_text("q0\n# a comment\nq2\n", encoding="utf-8")


def _keystrokes(folder: Path) -> None:
    from streamrag.data.human.keystrokes import FIELDS

    logs = folder / "logs"
    logs.mkdir()
    for pid in ("101", "102"):
        rows, t = [], 1_473_275_876_010
        for section, text in {"s1": "the cat is here", "s2": "a dog ran far", "s3": "we go home now"}.items():
            for ch in text:
                t += 150 + 40 * (ord(ch) % 5)
                code = 32 if ch == " " else ord(ch.upper())
                rows.append([pid, section, text, text, "1", str(t), str(t + 80), ch, str(code)])
            t += 4000
        lines = ["\t".join(FIELDS), *("\t".join(r) for r in rows)]
        (logs / f"{pid}_keystrokes.txt").write_text("\n".join(lines) + "\n", encoding="utf-8")


def _hypotheses(folder: Path) -> None:
    _data(folder)
    objects = []
    for i in range(3):
        words = _record(i)["query"].split()
        hyps = [
            {"t_ms": 300.0 * (j + 1), "text": " ".join(words[: j + 1]), "final": j == len(words) - 1} for j in range(len(words))
        ]
        speech = [[40.0, 300.0 * len(words) - 120.0]]  # a voice-activity detector's speech segments
        objects.append({"interaction_id": f"q{i}", "hypotheses": hyps, "speech_ms": speech})
    _jsonl(folder / "h.jsonl", objects)


def _features(folder: Path) -> None:
    from _inputs import anchor_feature_table

    anchor_feature_table(folder / "train.csv", 30, 3)
    anchor_feature_table(folder / "test.csv", 20, 4)


def _run_folder(folder: Path) -> None:
    from streamrag.cli import main

    _table(folder)
    assert (
        main(["--quiet", "simulate", "--table", str(folder / "t.csv"), "--scenario", "paper_rq3", "--out", str(folder / "run")])
        == 0
    )


def _published(folder: Path) -> None:
    _run_folder(folder)
    rows = list(csv.DictReader(io.StringIO((folder / "run" / "results.csv").read_text(encoding="utf-8"))))
    lines = ["interaction_id,measured_saved_ms,H_predicted_ms,question_type,n_words,t_star"]
    for i, r in enumerate(rows):
        lines.append(f"{r['interaction_id']},{400 + 50 * i},590,simple,{r['n_words']},{r['t_star']}")
    (folder / "pub.csv").write_text("\n".join(lines) + "\n", encoding="utf-8")


def _model(folder: Path) -> None:
    from streamrag.base.config.bundled import models_dir

    _data(folder)  # the learned trigger reads per-prefix evidence: records, not a table
    model = json.loads((models_dir() / "frontier.json").read_text(encoding="utf-8"))
    (folder / "m.json").write_text(json.dumps(model) + "\n", encoding="utf-8")  # one line: the jsonl mutations apply


def _profile(folder: Path) -> None:
    from streamrag.cli import main

    _table(folder)
    _measurements(folder)
    assert main(["--quiet", "calibrate", str(folder / "m.csv"), "--out", str(folder / "p.toml")]) == 0


def _reference(folder: Path) -> None:
    from streamrag.base.config.bundled import references_dir

    _table(folder)
    (folder / "ref.toml").write_text((references_dir() / "deepgram_flux.toml").read_text(encoding="utf-8"), encoding="utf-8")


# --------------------------------------------------------------------------- the registry

OUT = "{out}"
SURFACES: tuple[Surface, ...] = (
    Surface("crag-records", ("analyze", "data"), "d.jsonl", "jsonl",
            ("analyze", "{tmp}/d.jsonl", "--out", OUT, "--no-cache", "--jobs", "1", "--no-figures", "--split", "all"),
            _data, numbers=("split",)),
    Surface("table-stats", ("stats", "table"), "t.csv", "csv", ("stats", "{tmp}/t.csv", "--out", OUT), _table,
            numbers=("n_words", "n_passages", "t_sc", "phi_sc", "t_suf", "phi_suf", "volatility", "gold_density"), header=True),
    Surface("table-simulate", ("simulate", "table"), "t.csv", "csv",
            ("simulate", "--table", "{tmp}/t.csv", "--scenario", "paper_rq3", "--out", OUT), _table,
            numbers=("n_words", "n_passages", "t_sc", "t_suf"), header=True, optional=("n_passages",)),
    Surface("scenario", ("simulate", "scenario"), "s.toml", "toml",
            ("simulate", "--table", "{tmp}/t.csv", "--scenario", "{tmp}/s.toml", "--out", OUT), _scenario,
            numbers=("seed", "L_ms", "G_ms", "F_ms", "words", "delta_wps")),
    Surface("grid", ("sweep", "grid"), "g.toml", "toml", ("sweep", "{tmp}/g.toml", "--out", OUT, "--jobs", "1"), _grid),
    Surface("measurements", ("calibrate", "measurements"), "m.csv", "csv",
            ("calibrate", "{tmp}/m.csv", "--out", "{out}/p.toml"), _measurements, numbers=("duration_ms",), header=True),
    Surface("otlp-spans", ("calibrate", "measurements"), "spans.jsonl", "jsonl",
            ("calibrate", "{tmp}/spans.jsonl", "--out", "{out}/p.toml", "--min-n", "3", "--no-figure", *SPAN_RULES), _otlp_spans,
            numbers=("startTimeUnixNano", "endTimeUnixNano")),
    Surface("jaeger-spans", ("calibrate", "measurements"), "jaeger.json", "jsonl",
            ("calibrate", "{tmp}/jaeger.json", "--out", "{out}/p.toml", "--min-n", "3", "--no-figure", *SPAN_RULES), _jaeger_spans,
            numbers=("startTime", "duration")),
    Surface("transcript", ("live", "transcript"), "w.jsonl", "jsonl", ("live", "--transcript", "{tmp}/w.jsonl", "--set", "latency.G_ms=1", "--set", "latency.F_ms=1", "--out", OUT),
            _transcript, numbers=("t_ms",)),
    Surface("id-file", ("analyze", "ids"), "ids.txt", "lines",
            ("analyze", "{tmp}/d.jsonl", "--ids", "{tmp}/ids.txt", "--out", OUT, "--no-cache", "--jobs", "1", "--no-figures"),
            _ids),
    Surface("keystrokes", ("fit-input", "keystrokes"), "logs/101_keystrokes.txt", "tsv",
            ("fit-input", "--keystrokes", "{tmp}/logs", "--out", "{out}/fit.json"), _keystrokes,
            numbers=("PRESS_TIME",), header=True),  # RELEASE_TIME is not read
    Surface("hypotheses", ("analyze", "asr_hypotheses"), "h.jsonl", "jsonl",
            ("analyze", "{tmp}/d.jsonl", "--asr-hypotheses", "{tmp}/h.jsonl", "--out", OUT, "--no-cache", "--jobs", "1",
             "--no-figures"),
            _hypotheses, numbers=("t_ms", "speech_ms"), optional=("speech_ms",)),
    Surface("features", ("train-trigger", "train"), "train.csv", "csv",
            ("train-trigger", "{tmp}/train.csv", "{tmp}/test.csv", "--out", OUT, "--folds", "2"), _features,
            numbers=("n_words", "t", "t_suf", "t_sc", "top1_stable_streak"), header=True),
    Surface("run-folder", ("report", "run_dir"), "run/results.csv", "csv",
            ("report", "{tmp}/run", "--out", "{out}/r.html", "--no-text"), _run_folder, header=True),
    Surface("published", ("compare", "published"), "pub.csv", "csv",
            ("compare", "{tmp}/run", "{tmp}/pub.csv", "--out", OUT), _published,
            numbers=("measured_saved_ms", "H_predicted_ms", "n_words", "t_star"), header=True,
            signed=("measured_saved_ms",), optional=("n_words", "t_star")),
    Surface("model", ("simulate", "--set trigger.model"), "m.json", "jsonl",
            ("simulate", "{tmp}/d.jsonl", "--scenario", "paper_rq3", "--no-cache", "--set", "data.split=all",
             "--set", "trigger.kind=learned", "--set", "trigger.model={tmp}/m.json", "--out", OUT), _model, numbers=("intercept", "coef", "mean", "scale"), signed=("intercept", "coef", "mean")),
    Surface("reference", ("simulate", "reference"), "ref.toml", "toml",
            ("simulate", "--table", "{tmp}/t.csv", "--scenario", "paper_rq3", "--reference", "{tmp}/ref.toml", "--out", OUT),
            _reference),
    Surface("profile", ("simulate", "--set latency.profile"), "p.toml", "toml",
            ("simulate", "--table", "{tmp}/t.csv", "--scenario", "paper_rq3", "--set", "latency.profile={tmp}/p.toml",
             "--out", OUT), _profile),
)  # fmt: skip

_RECORDS = "CRAG records: the crag-records surface's reader (data/crag.py), whichever command reads them"
_SCENARIO = "a scenario file: the scenario surface's reader (load_scenario), whichever command reads it"
_TABLE = "a stabilization table: the table-stats and table-simulate surfaces' reader (read_table)"
_PLUGIN = (
    "a kind, or a user's class (FILE.py:Class): tests/unit/retrieval/test_user_retriever.py refuses each bad one in one line"
)
_RUN = "a run folder streamrag wrote: the run-folder surface's readers (results.csv, summary.json)"
EXEMPT: dict[tuple[str, str], str] = {
    (
        "analyze",
        "corpus",
    ): "a BEIR or CRAG corpus folder (several files): tests/unit/retrieval/test_global_scope.py and test_hostile_data.py damage them by hand",
    (
        "analyze",
        "hotpotqa",
    ): "a HotpotQA file: tests/unit/data/test_hotpotqa.py checks its damaged records (one line naming record and field)",
    ("analyze", "queries_only"): _RECORDS,
    ("analyze", "typed"): "a keystroke folder: the keystrokes surface's reader (data/human/keystrokes.py)",
    ("compare", "run_dir"): _RUN,
    ("fit-input", "hypotheses"): "recorded hypotheses: the hypotheses surface's reader (data/human/hypotheses_file.py)",
    ("advise", "hypotheses"): "recorded hypotheses: the hypotheses surface's reader (data/human/hypotheses_file.py)",
    ("advise", "typed"): "a keystroke folder: the keystrokes surface's reader (data/human/keystrokes.py)",
    ("fit-input", "validate"): "a keystroke folder: the keystrokes surface's reader (data/human/keystrokes.py)",
    ("frontier", "grid"): "a grid file: the grid surface's reader (sweep/grid.py)",
    ("frontier", "reference"): "a reference policy: the reference surface's reader (simulator/reference.py)",
    ("advise", "reference"): "a reference policy: the reference surface's reader (simulator/reference.py)",
    ("frontier", "input"): "an input source (demo, generated:N, a file): the crag-records and table surfaces' readers",
    ("ingest", "data"): _RECORDS,
    ("ingest", "ids"): "an id file: the id-file surface's reader (read_ids)",
    ("live", "corpus"): "a corpus folder, as analyze --corpus",
    ("live", "data"): _RECORDS,
    ("live", "latency_profile"): "a latency profile: the profile surface's reader",
    ("live", "scenario"): _SCENARIO,
    ("predict", "data"): _RECORDS,
    (
        "predict",
        "evidence",
    ): "per-prefix evidence analyze wrote beside a table (binary parquet): tests/hostile/test_hostile_data.py refuses a mismatched one",
    ("predict", "scenario"): _SCENARIO,
    ("predict", "table"): _TABLE,
    ("report", "run_b"): _RUN,
    ("serve", "corpus"): "a corpus folder, as analyze --corpus",
    ("simulate", "data"): _RECORDS,
    (
        "simulate",
        "evidence",
    ): "per-prefix evidence analyze wrote beside a table (binary parquet): tests/hostile/test_hostile_data.py refuses a mismatched one",
    ("simulate", "ids"): "an id file: the id-file surface's reader (read_ids)",
    (
        "speak",
        "questions",
    ): "CRAG-style questions: the crag-records surface's line reader (iter_question_objects); a case costs a voice",
    ("stats", "join"): "a stabilization table to join: the table-stats surface's reader",
    ("sweep", "input"): "an input source (demo, generated:N, a file): the crag-records and table surfaces' readers",
    ("trace", "run_dir"): _RUN,
    ("train-trigger", "test"): "a feature table: the features surface's reader (TRAIN and TEST are read alike)",
    ("analyze", "retriever"): _PLUGIN,
    ("analyze", "compare_retrievers"): "kinds or users' classes (FILE.py:Class), comma-separated, each read as --retriever "
    "reads it: tests/unit/retrieval/test_compare_retrievers.py refuses each bad one in one line",
    ("simulate", "retriever"): _PLUGIN,
    ("advise", "input"): "an input source (demo, generated:N, a file): the crag-records and table surfaces' readers",
    ("advise", "measurements"): "measured durations: the measurements surface's reader (calibrate's read_measurements)",
    ("advise", "situation"): "a situation TOML: read_toml and a SettingsModel, as the scenario surface's reader; "
    "tests/unit/advice/test_advise.py refuses damaged and absurd ones in one line naming the file",
}
"""File arguments no surface fuzzes, each with the reason (an empty reason fails a test)."""

NOT_FILES = {
    "out", "convert", "png", "perfetto", "figure", "cache", "index_dir",  # written, not read
    "log_level", "figure_format", "dpi", "scheduler", "url", "llm_url", "llm_model", "llm_key_env", "name",
    "description", "question_id", "what", "kind", "overrides", "settings", "spans", "turn", "features", "qrels",
}  # fmt: skip
"""Argument dests that name no input file (outputs, values, addresses)."""


# --------------------------------------------------------------------------- mutations

NUMBER_JSON = ("NaN", "Infinity", "-Infinity", "-1", "1e308", "1" + "0" * 40, "true", "false", "null", '"abc"', '""', "[]", "{}")
"""Hostile JSON values for a field (an absurd number, or not a number)."""
NUMBER_CELLS = ("nan", "inf", "-inf", "-1", "1e308", "1" + "0" * 40, "True", "", "abc")
"""Hostile CSV/TSV cells."""
NUMBER_TOML = ("nan", "inf", "-inf", "-1", "1e308", "true", '"abc"', "[]", "{}")
"""Hostile TOML values."""
ANY_JSON = ('"' + "x" * 200_000 + '"', "[" * 5_000 + "]" * 5_000, '{"a": ' * 3_000 + "1" + "}" * 3_000)
"""Oversized values for any field."""


@dataclass(frozen=True)
class Mutation:
    """What was done to the seed file: ``kind`` and its draws; ``absurd`` when it put an
    absurd value into a declared number field (the contract then asks for a refusal or
    a said skip, never a silent run)."""

    kind: str
    where: float = 0.0
    field: str = ""
    value: str = ""
    absurd: bool = False

    def apply(self, surface: Surface, raw: bytes) -> bytes:
        return _apply(self, surface, raw)


def mutations(surface: Surface) -> st.SearchStrategy[Mutation]:
    """Damaged versions of ``surface``'s seed file: bytes (empty, header only, cut,
    garbled, not UTF-8), rows (duplicated, reversed, short) and values (absurd numbers
    in the declared fields, hostile values in any field, oversized values)."""
    where = st.floats(0, 1, exclude_max=True)
    kinds = [
        st.just(Mutation("empty")),
        st.builds(Mutation, st.just("cut"), where),
        st.builds(Mutation, st.just("garble"), where, value=st.sampled_from(["\xff", "\x00", "\ufffd", "\n"])),
        st.builds(Mutation, st.just("duplicate"), where),
        st.just(Mutation("reverse")),
        st.builds(Mutation, st.just("short"), where),
    ]
    if surface.header:
        kinds.append(st.just(Mutation("header")))
    values = {"jsonl": NUMBER_JSON, "csv": NUMBER_CELLS, "tsv": NUMBER_CELLS, "toml": NUMBER_TOML, "lines": NUMBER_CELLS}
    hostile = values[surface.format]
    if surface.numbers:

        def plausible(field: str, value: str) -> bool:
            return (field in surface.signed and value == "-1") or (field in surface.optional and value in ("", '""', "null"))

        kinds.append(
            st.builds(
                lambda at, f, v: Mutation("value", at, f, v, not plausible(f, v)),
                where,
                st.sampled_from(surface.numbers),
                st.sampled_from(hostile),
            )
        )
    if surface.format in ("jsonl", "toml"):
        big = ANY_JSON if surface.format == "jsonl" else ('"' + "x" * 200_000 + '"', "[" * 3_000 + "]" * 3_000)
        kinds.append(st.builds(Mutation, st.just("value"), where, st.just("*"), st.sampled_from(hostile + big)))
    return st.one_of(kinds)


def _lines(raw: bytes) -> list[bytes]:
    return raw.splitlines(keepends=True)


def _apply(m: Mutation, surface: Surface, raw: bytes) -> bytes:
    lines = _lines(raw)
    head, body = (lines[:1], lines[1:]) if surface.header else ([], lines)
    body = [b for b in body if b.strip()] or body
    pick = int(m.where * len(body)) if body else 0
    if m.kind == "empty":
        return b""
    if m.kind == "header":
        return b"".join(head)
    if m.kind == "cut":
        return raw[: int(m.where * len(raw))]
    if m.kind == "garble":
        at = int(m.where * len(raw))
        return (
            raw[:at] + m.value.encode("utf-8", "surrogatepass") + raw[at + 1 :]
            if m.value != "\xff"
            else raw[:at] + b"\xff" + raw[at + 1 :]
        )
    if m.kind == "duplicate" and body:
        return b"".join([*head, *body[: pick + 1], body[pick], *body[pick + 1 :]])
    if m.kind == "reverse":
        return b"".join([*head, *reversed(body)])
    if m.kind == "short" and body:
        line = body[pick].rstrip(b"\r\n")
        cut = line[: max(1, len(line) // 2)]
        return b"".join([*head, *body[:pick], cut + b"\n", *body[pick + 1 :]])
    if m.kind == "value" and surface.format == "toml":  # a key's line, wherever it is
        return _set_value(m, surface, [], raw)
    if m.kind == "value" and body:
        return b"".join([*head, *body[:pick], _set_value(m, surface, head, body[pick]), *body[pick + 1 :]])
    return raw


def _set_value(m: Mutation, surface: Surface, head: list[bytes], line: bytes) -> bytes:
    text = line.decode("utf-8")
    if surface.format == "jsonl":
        obj = json.loads(text)
        keys = _json_keys(obj)
        key = m.field if m.field != "*" else (keys[int(m.where * 997) % len(keys)] if keys else "")
        return (_json_set(text, obj, key, m.value) + "\n").encode("utf-8")
    if surface.format in ("csv", "tsv"):
        delimiter = "," if surface.format == "csv" else "\t"
        header = next(csv.reader([head[0].decode("utf-8")], delimiter=delimiter)) if head else []
        cells = next(csv.reader([text], delimiter=delimiter))
        column = header.index(m.field) if m.field in header else int(m.where * 997) % max(1, len(cells))
        if column < len(cells):
            cells[column] = m.value
        buffer = io.StringIO()
        csv.writer(buffer, delimiter=delimiter, lineterminator="\n").writerow(cells)
        return buffer.getvalue().encode("utf-8")
    if surface.format == "toml":
        key = re.escape(m.field) if m.field != "*" else r"[\w\".]+"
        return re.sub(rf"^(\s*{key}\s*=\s*).*$", lambda g: g.group(1) + m.value, text, count=1, flags=re.M).encode("utf-8")
    return (m.value + "\n").encode("utf-8")


def _json_keys(obj: Any) -> list[str]:
    return sorted(obj) if isinstance(obj, dict) else []


def _json_set(text: str, obj: Any, key: str, value: str) -> str:
    """``obj`` with ``key`` (top level, or the first nested object holding it) set to the
    raw JSON ``value`` (NaN and deep nesting survive: the line is spliced as text)."""
    marker = "\x00MARK\x00"
    done = False

    def put(node: Any) -> Any:
        nonlocal done
        if isinstance(node, dict):
            if key in node and not done:
                done = True
                return {**node, key: marker}
            return {k: put(v) for k, v in node.items()}
        if isinstance(node, list):
            return [put(v) for v in node]
        return node

    spliced = json.dumps(put(obj))
    return spliced.replace(json.dumps(marker), value, 1) if done else text


# --------------------------------------------------------------------------- counts


def harness_counts(reports: list[Any]) -> dict[str, int] | None:
    """The hostile harness's counts summed over its surfaces (``tests/hostile/test_fuzz_surfaces.py``
    records each surface's as a report property), or None when it did not run."""
    calls = [r for r in reports if r.when == "call"]  # each phase's report repeats the properties
    per_surface = [value for r in calls for name, value in r.user_properties if name == "hostile_harness"]
    if not per_surface:
        return None
    total = {"surfaces": len(per_surface)}
    for counts in per_surface:
        for key, value in counts.items():
            if key != "surface":
                total[key] = total.get(key, 0) + value
    return total
