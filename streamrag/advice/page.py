"""``advice.html``: the answer, the situation, each end's assumptions and the rows, on one page.

Built with the report machinery (:mod:`streamrag.report.page`): one self-contained file,
every string escaped, the rows as a sortable, filterable table drawn from inert JSON.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from streamrag.base.atomic import write_text_atomic
from streamrag.report.page import esc, key_value_table, metric_table, page, rows_table, section

SHOWN = (
    "end", "label", "runs_on", "verdict", "baseline_ms.median", "streaming_ms.median", "answer_ms_difference.median",
    "answer_ms_difference.p90", "extra_calls.mean", "misfire.rate", "negative.rate",
    "break_even.median_saved.turns_per_s", "break_even.p90.turns_per_s", "at_load.answer_ms_difference.median",
)  # fmt: skip
"""The columns the page's table shows (``advice.csv`` has them all)."""


def write_page(path: Path, data: dict[str, Any]) -> Path:
    """Write the page from ``data`` (what ``advice.json`` holds)."""
    rec = data["recommendation"]
    rows = [{k: r.get(k) for k in SHOWN} for r in data["rows"]]
    why = metric_table([(policy, {"why it lost": text}) for policy, text in rec["why_others_lost"].items()])
    ends = metric_table([(e["end"], {"G and F": e["assumes"], "L": e["tool"]}) for e in data["assumptions"]["ends"]])
    body = [
        section("Answer", f"<p>{esc(data['answer'])}</p>" + why),
        section("Situation", key_value_table(sorted(data["situation"].items()))),
        section("Assumptions", ends + key_value_table([(k, v) for k, v in data["assumptions"].items() if k != "ends"])),
        section("One row per end and policy", rows_table(misfires=False)),
        section("Reproduce", key_value_table(list(data["reproduce"].items())), open_=False),
    ]
    table = {"columns": list(SHOWN), "rows": [[r[k] for k in SHOWN] for r in rows], "id_column": "label"}
    text = page("streamrag advise", f"recommended: {rec['policy']}", body, {"table": table})
    write_text_atomic(path, text)
    return path
