"""``streamrag report RUN_A RUN_B``: two simulation runs on one page, question by question.

The numbers are :func:`streamrag.simulator.compare.runs.compare_runs`' — the join on the
questions both runs replayed, ``delta_saved_ms = B − A`` per question, the Wilcoxon
signed-rank test, the mis-fires per side — and its console lines, as ``streamrag compare
RUN_A RUN_B`` prints them; the page adds the settings that differ between the runs, the
comparison's figure, each run's own figures side by side (:func:`read_report_run`), and
the per-question table (sortable, filterable) with the question texts when the runs read
CRAG. Two runs of different kinds, runs of a kind other than simulation, and two runs
with no replayed question in common are refused in one line; runs over overlapping
question sets are compared on the intersection, which the page names.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from streamrag.base.errors import InputError
from streamrag.base.version import __version__
from streamrag.report import page
from streamrag.report.sections import Run, json_value, read_report_run, run_kind, summary_parts, svg_of

__all__ = ["PairReport", "pair_path", "write_pair_report"]


@dataclass(frozen=True)
class PairReport:
    html: Path
    n_matched: int


def pair_path(run_a: str | os.PathLike[str], run_b: str | os.PathLike[str]) -> Path:
    """The page's default place: ``RUN_A/report-vs-NAME_OF_B.html``."""
    return Path(run_a) / f"report-vs-{Path(run_b).resolve().name}.html"


def _check_kinds(a: Path, b: Path) -> None:
    for run in (a, b):
        if not run.is_dir():
            raise InputError(f"{run}: no such run folder")
    kind_a, kind_b = run_kind(a), run_kind(b)
    if kind_a != kind_b:
        raise InputError(
            f"{a} is a {kind_a} run and {b} a {kind_b} run: a page compares two simulation runs question by question"
        )
    if kind_a != "simulation":
        raise InputError(
            f"{a} and {b} are {kind_a} runs: a page compares two simulation runs question by question "
            f"(their results.csv); report each with 'streamrag report RUN_DIR'"
        )


def _provenance(run: Run) -> dict[str, Any]:
    """The run's settings as flat ``dotted.key → value``: summary.json's parameters, rules
    and selection."""
    if run.summary is None:
        return {}
    _, _, keys = summary_parts(run.summary)
    return dict(page.flatten({k: run.summary[k] for k in keys}))


def _differences(a: Run, b: Run) -> str:
    """The settings that differ between the runs, as a three-column table."""
    left, right = _provenance(a), _provenance(b)
    keys = [k for k in dict.fromkeys([*left, *right]) if left.get(k) != right.get(k)]
    if not keys:
        same = f" ({len(left)} settings)" if left else ""
        return f'<p class="muted">the two runs have the same settings{same}</p>'
    rows = "".join(
        f"<tr><th>{page.esc(k)}</th><td>{page.esc(left.get(k))}</td><td>{page.esc(right.get(k))}</td></tr>" for k in keys
    )
    n_same = len(set(left) & set(right)) - len(set(keys) & set(left) & set(right))
    return (
        f'<table class="kv"><thead><tr><th>setting</th><th>A</th><th>B</th></tr></thead><tbody>{rows}</tbody></table>'
        f'<p class="muted">{len(keys)} setting(s) differ, {n_same} are the same (summary.json).</p>'
    )


def _intersection(data: dict[str, Any]) -> str:
    """What the comparison leaves out: the questions one run did not replay, by id."""
    ids = data["ids"]
    parts = [("only_in_a", "only in A"), ("only_in_b", "only in B"), ("not_replayed", "skipped by one run")]
    left_out = [(what, ids[key]) for key, what in parts if ids[key]]
    if not left_out:
        return f"<p>Both runs replayed the same {data['n_matched']} questions; every one is compared.</p>"
    lists = "".join(
        f"<details><summary>{len(found)} {what}</summary><p>{page.esc(', '.join(found))}</p></details>"
        for what, found in left_out
    )
    counts = ", ".join(f"{len(found)} {what}" for what, found in left_out)
    return (
        f"<p><strong>Compared on the intersection:</strong> the {data['n_matched']} questions both runs replayed; "
        f"{counts} left out:</p>{lists}"
    )


def _comparison(data: dict[str, Any], lines: list[str]) -> str:
    w = data["wilcoxon"]
    pairs: list[tuple[str, Any]] = [
        ("questions compared (replayed by both)", data["n_matched"]),
        ("only in A", len(data["ids"]["only_in_a"])),
        ("only in B", len(data["ids"]["only_in_b"])),
        ("skipped by one run", len(data["ids"]["not_replayed"])),
        ("B saves more / equal / A saves more", f"{data['sign']['b_more']} / {data['sign']['equal']} / {data['sign']['a_more']}"),
        ("Wilcoxon signed-rank W", w["statistic"]),
        ("Wilcoxon p (two-sided)", w["p"]),
        ("nonzero differences", w["n_nonzero"]),
    ]
    if "misfire" in data:
        pairs += [("mis-fires in A (questions)", data["misfire"]["a"]), ("mis-fires in B (questions)", data["misfire"]["b"])]
    if "calls_fired" in data:
        pairs += [
            ("calls fired per question, A", data["calls_fired"]["a"]),
            ("calls fired per question, B", data["calls_fired"]["b"]),
        ]
    stats = [(f"{name} (ms)", data[name]) for name in ("saved_ms_a", "saved_ms_b", "delta_saved_ms")]
    text = "\n".join(lines)
    return (
        _intersection(data)
        + f'<pre class="lines">{page.esc(text)}</pre>'
        + page.key_value_table(pairs)
        + page.metric_table(stats)
    )


def write_pair_report(
    run_a: str | os.PathLike[str],
    run_b: str | os.PathLike[str],
    out: str | os.PathLike[str] | None = None,
    *,
    figures: bool = True,
    texts: bool = True,
) -> PairReport:
    """Write the page comparing ``run_a`` with ``run_b`` to ``out`` (default
    :func:`pair_path`), atomically (see the module docstring)."""
    from streamrag.base.atomic import write_text_atomic
    from streamrag.simulator.compare.runs import compare_runs, plot_run_comparison, run_comparison_lines

    a, b = Path(run_a), Path(run_b)
    _check_kinds(a, b)
    comparison = compare_runs(a, b)
    data = comparison.data
    if data["n_matched"] == 0:
        ids = data["ids"]
        raise InputError(
            f"{a} and {b} replayed no question in common ({len(ids['only_in_a'])} only in A, {len(ids['only_in_b'])} "
            f"only in B, {len(ids['not_replayed'])} skipped by one): different question sets, nothing to compare"
        )
    run_a_parts = read_report_run(a, figures=figures, texts=texts)
    run_b_parts = read_report_run(b, figures=figures, texts=texts)
    found = {**run_b_parts.texts, **run_a_parts.texts}
    table = comparison.table
    columns = [str(c) for c in table.columns]
    rows = [[json_value(v) for v in row] for row in table.itertuples(index=False)]
    if found:
        j = columns.index("interaction_id")
        columns.insert(j + 1, "question")
        rows = [[*row[: j + 1], found.get(str(row[j])), *row[j + 1 :]] for row in rows]

    body = [
        page.section(
            "Runs",
            page.key_value_table([("A", str(a)), ("B", str(b))])
            + "<h3>Settings that differ</h3>"
            + _differences(run_a_parts, run_b_parts),
        ),
        page.section("Comparison (streamrag compare)", _comparison(data, run_comparison_lines(data))),
    ]
    if figures:
        side = "".join(
            f"<div><h3>{name}: {page.esc(run.path)}</h3>" + "".join(page.figure(c, d, m) for c, d, m in run.figures) + "</div>"
            for name, run in (("A", run_a_parts), ("B", run_b_parts))
        )
        compared = page.figure("B against A, per question", svg_of(plot_run_comparison(comparison)), "image/svg+xml")
        body.append(page.section("Figures", compared + f'<div class="pair">{side}</div>'))
    body.append(page.section("Per question (B − A)", page.rows_table(misfires=False)))
    payload = {
        "table": {"columns": columns, "rows": rows, "id_column": "interaction_id"},
        "comparison": data,
    }
    html_path = Path(out) if out is not None else pair_path(a, b)
    subtitle = f"A {a} vs B {b} · {data['n_matched']} questions compared · streamrag {__version__}"
    document = page.page(f"streamrag report: {a.name} vs {b.name}", subtitle, body, payload)
    html_path.parent.mkdir(parents=True, exist_ok=True)
    write_text_atomic(html_path, document)
    return PairReport(html_path, data["n_matched"])
