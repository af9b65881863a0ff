"""Short human-readable reports of a summary, for the terminal."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from streamrag.analysis.stats.rq import ADDITIONS
from streamrag.analysis.studies.entity_position import entity_position_lines
from streamrag.analysis.studies.grounding_precision import grounding_precision_lines


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f}%"


def _num(x: float | None, fmt: str = ".3f") -> str:
    return "n/a" if x is None else format(x, fmt)


def _kw(res: dict[str, Any] | None) -> str:
    if res is None:
        return "undefined"
    return (
        f"H={_num(res['H'], '.2f')} df={res['df']} p={_num(res['p'], '.3g')} eps2={_num(res['epsilon2'], '.3f')} "
        f"(eps2_adj={_num(res.get('epsilon2_adjusted'), '.3f')})"
    )


def _additions(summary: dict[str, Any]) -> list[str]:
    """One line naming what the anchor study did not report (``summary["additions"]``)."""
    listed = {entry["name"] for entry in summary.get("additions", [])}
    labels = list(dict.fromkeys(label for name, label, _ in ADDITIONS if name in listed))
    return [f"  additions (not in the anchor study; summary.json 'additions'): {', '.join(labels)}"] if labels else []


def summary_lines(summary: dict[str, Any], source: str) -> list[str]:
    """RQ1, RQ2 at the configured point and RQ4 by question type, a line each; a line
    saying why the gold-density slice is undefined, when it is; the additions to the
    anchor study (results it did not report)."""
    rq1, point = summary["rq1"], summary["rq2"]["point"]
    by_type = summary["rq4"]["question_type"]
    rg, fb = point["retrieved_gold"], point["fallback"]
    density = summary.get("gold_density") or {}
    undefined = [f"  gold density: undefined, {density['undefined_reason']}"] if density.get("undefined_reason") else []
    cap = summary.get("chunk_cap") or {}
    if cap.get("n_questions_capped"):
        limit = f"{cap['max_chunks']}-chunk" if cap.get("max_chunks") else "chunk"
        undefined.append(
            f"  {cap['n_questions_capped']} question(s) reached the {limit} cap: {cap['n_pages_unread']} page(s) unread, "
            f"{cap['n_chunks_cut']} chunk(s) cut (n_pages_unread, n_chunks_cut in the table)"
        )
    n_apart = (summary.get("no_overlap") or {}).get("n")
    if n_apart:
        undefined.append(
            f"  {n_apart} question(s) share no word with their pages (no_overlap): t_sc = 1 is a tie-break; "
            "counted as never streamable"
        )
    return [
        f"{source}: {summary['n_questions']} questions ({summary['n_skipped']} skipped)",
        f"  groundable {rq1['n_groundable']} ({_pct(rq1['share_groundable'])}), "
        f"retrieved-gold {rq1['n_retrieved_gold']} ({_pct(rq1['share_retrieved_gold'])})",
        f"  phi_sc mean {_num(rq1['phi_sc']['mean'])} median {_num(rq1['phi_sc']['median'])}; "
        f"phi_suf mean {_num(rq1['phi_suf']['mean'])} median {_num(rq1['phi_suf']['median'])}",
        f"  streamable at L={point['L_ms']:g} ms, delta={point['delta_wps']:g} w/s, theta={point['theta']:g}: "
        f"{_pct(point['streamable_fraction'])} ({point['n_streamable']}/{point['n']}); "
        f"retrieved-gold {_pct(rg['streamable_fraction'])}, fallback {_pct(fb['streamable_fraction'])}",
        f"  Kruskal-Wallis phi_suf by question type: all groups {_kw(by_type['kruskal_wallis_all'])}; "
        f"groups with n>={summary['parameters']['min_group_n']} {_kw(by_type['kruskal_wallis_min_n'])}",
        *undefined,
        *entity_position_lines(summary.get("entity_position")),
        *grounding_precision_lines(summary.get("grounding_precision")),
        *_additions(summary),
    ]


def robustness_lines(summary: dict[str, Any]) -> list[str]:
    """One line per top-k × grounding arm, and the anchor comparison."""
    lines = ["  robustness (k, grounding): retrieved-gold, phi_suf mean / median, streamable"]
    for arm in summary.get("robustness", []):
        lines.append(
            f"    k={arm['k']} {arm['grounding']:<7} {_pct(arm['share_retrieved_gold']):>6}  "
            f"{_num(arm['phi_suf']['mean'])} / {_num(arm['phi_suf']['median'])}  {_pct(arm['streamable_fraction'])}"
        )
    anchor = summary.get("anchor", {})
    for name in ("t_entity", "t_entity_full", "t_anchor", "t_pivot"):
        entry = anchor.get(name)
        if entry and entry.get("spearman_rho") is not None:
            lines.append(
                f"  {name} vs t_suf: Spearman rho {_num(entry['spearman_rho'])} (n={entry['n']}), "
                f"MAE {_num(entry['mae_t_suf'], '.2f')} words vs {_num(entry['mae_t_suf_type_baseline'], '.2f')} by question type"
            )
    return lines


def retriever_lines(summary: dict[str, Any]) -> list[str]:
    """The compared retrievers side by side (``retrievers`` section, when present): the
    headline and the reflector's threshold under both rules, then how far each pair
    orders the question types alike."""
    section = summary.get("retrievers")
    if not section:
        return []
    width = max(6, *(len(name) for name in section["arms"]))
    lines = [
        f"  retrievers: retrieved-gold, phi_suf mean / median, phi_sc mean, streamable; "
        f"reflector threshold fixed -> calibrated (final top-1 accepted, BM25 >= {section['reference']['threshold']:g})"
    ]
    for name, arm in section["arms"].items():
        reflector = arm["reflector"]
        fixed, calibrated = reflector["fixed"], reflector["calibrated"]
        rule = f"{fixed['threshold']:g} ({fixed['n_accepted']})"
        if calibrated is not None:
            rule += f" -> {calibrated['threshold']:.4g} ({calibrated['n_accepted']}/{calibrated['n_questions']})"
        lines.append(
            f"    {name:<{width}} {_pct(arm['share_retrieved_gold']):>6}  {_num(arm['phi_suf']['mean'])} / "
            f"{_num(arm['phi_suf']['median'])}  {_num(arm['phi_sc']['mean'])}  {_pct(arm['streamable_fraction']):>6}  "
            f"{reflector['scale']} {rule}"
        )
    for pair in section["pairs"]:
        order = pair["type_order"]
        lines.append(
            f"    {pair['a']} vs {pair['b']}: per-type median phi_suf order Spearman rho {_num(order['rho'])} "
            f"over {order['n']} types"
        )
    return lines


def format_study(summary: dict[str, Any], out_dir: Path) -> str:
    """What ``streamrag analyze`` prints when done."""
    analysis = summary["parameters"].get("analysis", {})
    source = str(analysis.get("data", "data"))
    kind = (analysis.get("retriever") or {}).get("kind", "bm25")
    if kind != "bm25":
        source += f" [retriever {kind}]"
    lines = [*summary_lines(summary, source), *robustness_lines(summary), *retriever_lines(summary)]
    return "\n".join([*lines, f"wrote {out_dir}/"])
