"""``fit-input --validate``: the typed model fitted on some participants, checked on others.

The participants of the fit logs become typist profiles
(:func:`~streamrag.data.human.typed.typists_of`); each sentence of the validation logs is
typed again by one of them (drawn by the sentence's id and the seed, as
:func:`~streamrag.data.human.typed.type_keys` does), and every statistic of
:data:`STATISTICS` is computed on the logged sentences and on the model's, each with a
95% percentile bootstrap CI over the validation participants (the same resamples for
both: a participant's logged and model sentences are drawn together). A statistic is
*inside* when the model's value lies in the logs' CI.

The model's value is one draw of its typing; a statistic of the gaps' tail (``cv``) moves
with it by about the width of the logs' CI. ``typings = k`` types each sentence k times
(typing ``i > 0`` on its own stream; the first is the single typing's), all of a
participant's typings resampled with them, so the model's value tells its expectation
rather than one draw's luck.

A participant in both sets would check the model on people it was fitted to: refused,
naming them (:func:`check_disjoint`). One folder is split by :func:`split_half`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from streamrag.base.errors import InputError
from streamrag.data.human.asr import question_rng
from streamrag.data.human.input_fit import SessionStats, bootstrap, fitted, keyed_stats, summarize, within
from streamrag.data.human.keystrokes import KeystrokeLogs
from streamrag.data.human.typed import type_keys, typists_of

STATISTICS: dict[str, str] = {
    "words_per_s_median": "median over sentences of final words / s from the first key to the last word heard",
    "gap_ms_p10": "10th percentile of the times between successive hypotheses (inter-word gaps), ms",
    "gap_ms_p50": "median inter-word gap, ms",
    "gap_ms_p90": "90th percentile inter-word gap, ms",
    "gap_share_over_1s": "share of inter-word gaps over 1 s",
    "revisions_per_session": "revision events (a hypothesis changing a word already heard) per sentence",
    "sessions_revised_share": "share of sentences with at least one revision event",
    "revised_hypotheses_share": "mean over sentences of the share of hypotheses not a prefix of the final one",
    "backspace_share": "backspaces / typing keys pressed",
    "runs_across_space_share": "share of backspace runs that delete a typed space (take back a heard word)",
    "p": "revision events per word arrival after the first",
    "r_mean": "mean trailing words a revision event rewrote",
    "delta_wps": "1 / mean inter-word gap, words/s",
    "cv": "inter-word gaps' coefficient of variation",
}
"""Each compared statistic's canonical name (JSON key, table row) and its definition."""

N_NAMED = 5
"""Overlapping participants an error names (the count is of all)."""


def split_half(ids: Sequence[str]) -> tuple[list[str], list[str]]:
    """``(fit, validate)``: participants sorted by id (as strings, the file-name order),
    the first ``n // 2`` and the rest — a fixed rule, no seed."""
    ordered = sorted(ids)
    return ordered[: len(ordered) // 2], ordered[len(ordered) // 2 :]


def check_disjoint(fit_root: str, fit_ids: Sequence[str], val_root: str, val_ids: Sequence[str]) -> None:
    """An InputError naming the participants both sets hold, if any."""
    shared = sorted(set(fit_ids) & set(val_ids))
    if shared:
        named = ", ".join(shared[:N_NAMED]) + (f" and {len(shared) - N_NAMED} more" if len(shared) > N_NAMED else "")
        raise InputError(
            f"{fit_root} and {val_root} share {len(shared)} participant{'s' * (len(shared) != 1)} ({named}): "
            "a model validated on people it was fitted to; give disjoint folders, or one folder with --split-participants"
        )


def statistics(sessions: Sequence[SessionStats]) -> dict[str, float]:
    """Every statistic of :data:`STATISTICS` on a set of sessions."""
    values = summarize(sessions) | fitted(sessions)
    return {name: values[name] for name in STATISTICS}


def validate(
    fit_logs: KeystrokeLogs,
    fit_ids: Sequence[str],
    val_logs: KeystrokeLogs,
    val_ids: Sequence[str],
    *,
    seed: int = 0,
    typings: int = 1,
) -> dict[str, Any]:
    """The statistics of the validation logs and of the model fitted on ``fit_ids``
    typing their sentences ``typings`` times each, with CIs, and whether each is inside
    (module docstring)."""
    if typings < 1:
        raise InputError(f"--typings: the model types each sentence at least once, got {typings}")
    check_disjoint(fit_logs.root, fit_ids, val_logs.root, val_ids)
    pool = typists_of(fit_logs, fit_ids)
    logged: list[list[SessionStats]] = []
    model: list[list[SessionStats]] = []
    for pid in val_ids:
        mine: tuple[list[SessionStats], list[SessionStats]] = ([], [])
        for s in val_logs.participants[pid]:
            got = keyed_stats(s.press_ms, s.chars)
            if got is None or not s.sentence.split():
                continue
            mine[0].append(got)
            for i in range(typings):  # typing 0 on the sentence's own stream, as a single typing
                stream = f"{pid}/{s.section}" + (f"/{i}" if i else "")
                typed = keyed_stats(*type_keys(s.sentence, pool, question_rng(seed, stream)))
                assert typed is not None  # the keys end on the sentence, which has a word
                mine[1].append(typed)
        if mine[0]:
            logged.append(mine[0])
            model.append(mine[1])
    if not logged:
        raise InputError(f"{val_logs.root}: no typed sentence with a word to validate on")
    logs_ci = bootstrap(logged, statistics, seed=seed)
    model_ci = bootstrap(model, statistics, seed=seed)
    rows = {
        name: {"logs": logs_ci[name], "model": model_ci[name], "inside": within(model_ci[name]["value"], logs_ci[name])}
        for name in STATISTICS
    }
    return {
        "fit_source": fit_logs.root,
        "validate_source": val_logs.root,
        "n_fit_participants": len(pool.profiles),
        "n_validate_participants": len(logged),
        "n_validate_sentences": sum(len(g) for g in logged),
        "seed": seed,
        "typings": typings,
        "statistics": rows,
        "outside": [name for name, row in rows.items() if row["inside"] is False],
    }


def table(result: dict[str, Any]) -> str:
    """The statistics as a plain-text table: logs and model, each value [CI], inside."""
    lines = [f"{'statistic':<26} {'logs [95% CI]':>30} {'model [95% CI]':>30}  inside"]
    for name, row in result["statistics"].items():
        cells = [_cell(row[side]) for side in ("logs", "model")]
        mark = {True: "yes", False: "NO", None: "-"}[row["inside"]]
        lines.append(f"{name:<26} {cells[0]:>30} {cells[1]:>30}  {mark}")
    return "\n".join(lines)


def _cell(ci: dict[str, float]) -> str:
    return f"{_num(ci['value'])} [{_num(ci['lo'])}, {_num(ci['hi'])}]"


def _num(v: float) -> str:
    return f"{v:.4g}" if v == v else "n/a"
