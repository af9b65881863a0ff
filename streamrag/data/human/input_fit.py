"""The input models fitted to real people, with bootstrap CIs, and checked on held-out data.

Two sources: typed sentences (keystroke logs, :mod:`streamrag.data.human.keystrokes`) and spoken
questions (a recognizer's hypotheses, :mod:`streamrag.data.human.speech`). Each session (a typed
sentence, a spoken question) gives, by :func:`session_stats`:

- ``words_per_s`` = final words / time of the final hypothesis (s from the first key or
  the start of speech);
- ``gaps_ms``: the times between successive hypotheses (inter-word gaps when typing);
- ``n_revisions`` (hypotheses that changed a word the previous one showed) and
  ``revised_share`` (hypotheses not a word prefix of the final one);
- typed sessions only (:func:`keyed_stats`): keys, backspaces, backspace runs and runs
  that deleted a typed space (``backspace_share``, ``runs_across_space_share``).

Fitted, per source (CIs: percentile bootstrap over participants, or over questions):

- the **revision model** (:class:`~streamrag.data.human.asr.RevisionModel`): ``p`` =
  revision events per word arrival after the first; ``r`` = mean number of trailing words
  an event rewrote (the previous hypothesis' words past the common prefix), rounded;
- the **cadence** (:class:`~streamrag.engine.cadence.JitteredCadence`): ``delta_wps`` =
  1 / mean gap, ``cv`` = the gaps' coefficient of variation.

Held-out check (typed): participants split by :func:`~streamrag.data.human.typed.split_participants`;
the typist profiles of the fit side type the held-out side's sentences (one drawn
participant per sentence); the held-out logs' statistics get bootstrap CIs over their
participants, and the typed model's, the fitted revision model's and the fitted
cadence's statistics on the same sentences are compared with them. ``fit-input --validate``
(:mod:`streamrag.data.human.typed_validate`) does the same on another folder's logs.

The fit file (``FIT.json``, :func:`fit_file` / :func:`read_fit`) carries ``format_version``
and ``format``; its typed part stores the logs' backspace-run structure
(``backspace_runs``). A file without it (written before versions were recorded) is refused.
"""

from __future__ import annotations

import dataclasses
import json
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from streamrag.base.errors import DataFileError, InputError
from streamrag.base.formats import FIELD, UNVERSIONED, check_version, versioned
from streamrag.data.human.asr import Hypotheses, RevisionModel, hypotheses_of, question_rng, revise
from streamrag.data.human.backspace_runs import logged_runs, structure
from streamrag.data.human.keystrokes import KeystrokeLogs, heard
from streamrag.data.human.typed import type_keys, typists_of

N_BOOT = 1000
LEVEL = 0.95


@dataclass(frozen=True, slots=True)
class SessionStats:
    words_per_s: float | None
    gaps_ms: np.ndarray
    n_revisions: int
    revised_share: float
    n_words: int
    reaches: tuple[int, ...]
    """Per revision event, the trailing words of the previous hypothesis it rewrote."""
    n_keys: int = 0
    """Typing keys pressed (typed sessions; 0 for spoken ones, whose key statistics are undefined)."""
    n_backspaces: int = 0
    n_runs: int = 0
    """Backspace runs (:func:`~streamrag.data.human.backspace_runs.logged_runs`)."""
    n_runs_across_space: int = 0
    """Runs that deleted a typed space: took back a word already heard."""


def keyed_stats(press_ms: Sequence[float], chars: str) -> SessionStats | None:
    """:func:`session_stats` of what a pipeline hears from these keys, with their key
    counts; None when no word was typed."""
    got = heard(press_ms, chars)
    if got is None:
        return None
    runs = logged_runs(chars)
    base = session_stats(hypotheses_of(*got))
    return dataclasses.replace(
        base,
        n_keys=len(chars),
        n_backspaces=chars.count("\b"),
        n_runs=len(runs),
        n_runs_across_space=sum(r.across_space for r in runs),
    )


def session_stats(h: Hypotheses) -> SessionStats:
    times = np.asarray(h.times_ms if h.times_ms is not None else [], dtype=np.float64)
    n = len(h.words[-1])
    end_s = times[-1] / 1000 if times.size else 0.0
    reaches = []
    for prev, cur in zip(h.words, h.words[1:], strict=False):
        common = 0
        while common < min(len(prev), len(cur)) and prev[common] == cur[common]:
            common += 1
        if common < min(len(prev), len(cur)) or (common < len(prev) and len(cur) < len(prev)):
            reaches.append(len(prev) - common)
    return SessionStats(n / end_s if end_s > 0 else None, np.diff(times), h.n_revisions, h.revised_share, n, tuple(reaches))


def _groups_of(stats_by_group: Sequence[Sequence[SessionStats]]) -> list[list[SessionStats]]:
    return [list(g) for g in stats_by_group if g]


def summarize(sessions: Sequence[SessionStats]) -> dict[str, float]:
    """The compared statistics of a set of sessions."""
    wps = np.array([s.words_per_s for s in sessions if s.words_per_s is not None])
    gaps = np.concatenate([s.gaps_ms for s in sessions]) if sessions else np.zeros(0)
    n = len(sessions)
    return {
        "words_per_s_median": float(np.median(wps)) if wps.size else float("nan"),
        "gap_ms_p10": float(np.percentile(gaps, 10)) if gaps.size else float("nan"),
        "gap_ms_p50": float(np.percentile(gaps, 50)) if gaps.size else float("nan"),
        "gap_ms_p90": float(np.percentile(gaps, 90)) if gaps.size else float("nan"),
        "gap_share_over_1s": float(np.mean(gaps > 1000)) if gaps.size else float("nan"),
        "sessions_revised_share": sum(1 for s in sessions if s.n_revisions) / n if n else float("nan"),
        "revisions_per_session": sum(s.n_revisions for s in sessions) / n if n else float("nan"),
        "revised_hypotheses_share": float(np.mean([s.revised_share for s in sessions])) if n else float("nan"),
        "backspace_share": _ratio(sum(s.n_backspaces for s in sessions), sum(s.n_keys for s in sessions)),
        "runs_across_space_share": _ratio(sum(s.n_runs_across_space for s in sessions), sum(s.n_runs for s in sessions)),
    }


def _ratio(num: int, den: int) -> float:
    return num / den if den else float("nan")


def fitted(sessions: Sequence[SessionStats]) -> dict[str, float]:
    """Revision model and cadence parameters fitted to sessions (module docstring)."""
    arrivals = sum(max(0, s.n_words - 1) for s in sessions)
    events = sum(s.n_revisions for s in sessions)
    reaches = [r for s in sessions for r in s.reaches]
    gaps = np.concatenate([s.gaps_ms for s in sessions]) if sessions else np.zeros(0)
    mean = float(gaps.mean()) if gaps.size else float("nan")
    return {
        "p": events / arrivals if arrivals else float("nan"),
        "r_mean": float(np.mean(reaches)) if reaches else float("nan"),
        "delta_wps": 1000.0 / mean if gaps.size and mean > 0 else float("nan"),
        "cv": float(gaps.std() / mean) if gaps.size and mean > 0 else float("nan"),
    }


def bootstrap(
    groups: Sequence[Sequence[SessionStats]], statistic: Callable[[Sequence[SessionStats]], dict[str, float]], *, seed: int = 0
) -> dict[str, dict[str, float]]:
    """``{name: {value, lo, hi}}``: the statistic on all sessions and its percentile
    bootstrap CI, resampling whole groups (participants, or one question per group)."""
    rng = np.random.default_rng(seed)
    flat = [s for g in groups for s in g]
    point = statistic(flat)
    draws: dict[str, list[float]] = {k: [] for k in point}
    for _ in range(N_BOOT):
        pick = rng.integers(len(groups), size=len(groups))
        value = statistic([s for i in pick for s in groups[i]])
        for k, v in value.items():
            draws[k].append(v)
    lo, hi = (1 - LEVEL) / 2 * 100, (1 + LEVEL) / 2 * 100
    return {k: {"value": point[k], "lo": _percentile(draws[k], lo), "hi": _percentile(draws[k], hi)} for k in point}


def within(value: float, ci: dict[str, float]) -> bool | None:
    """Whether ``value`` lies in ``ci``'s ``[lo, hi]``; None when either is undefined
    (a key statistic of sessions without keys)."""
    if value != value or ci["lo"] != ci["lo"] or ci["hi"] != ci["hi"]:
        return None
    return bool(ci["lo"] <= value <= ci["hi"])


def _percentile(values: Sequence[float], q: float) -> float:
    """The ``q``-th percentile of the defined values; NaN (null in the file) when none is
    (a statistic undefined on every resample, as ``r`` without a revision)."""
    defined = np.asarray(values, dtype=np.float64)
    defined = defined[~np.isnan(defined)]
    return float(np.percentile(defined, q)) if defined.size else float("nan")


def logged_sessions(logs: KeystrokeLogs, participants: Sequence[str]) -> list[list[SessionStats]]:
    """Per participant, the statistics of each logged sentence."""
    out = []
    for p in participants:
        stats = []
        for s in logs.participants[p]:
            got = keyed_stats(s.press_ms, s.chars)
            if got is not None:
                stats.append(got)
        out.append(stats)
    return _groups_of(out)


def run_structure(logs: KeystrokeLogs, ids: Sequence[str]) -> dict[str, Any]:
    """The backspace-run structure of these participants' logs
    (:func:`~streamrag.data.human.backspace_runs.structure`), as a fit file stores it."""
    sentences = [s for p in ids for s in logs.participants[p]]
    return structure([r for s in sentences for r in logged_runs(s.chars)], sum(len(s.chars) for s in sentences))


def held_out_check(logs: KeystrokeLogs, fit_ids: Sequence[str], held_ids: Sequence[str], *, seed: int = 0) -> dict[str, Any]:
    """Fit on ``fit_ids``, compare on ``held_ids`` (module docstring)."""
    fit_groups = logged_sessions(logs, fit_ids)
    fit_params = bootstrap(fit_groups, fitted, seed=seed)
    pool = typists_of(logs, fit_ids)
    p, r_mean = fit_params["p"]["value"], fit_params["r_mean"]["value"]
    if p != p:  # NaN: no sentence heard twice, so no arrival to revise and no gap
        raise InputError(f"{logs.root}: no sentence of the fitted participants has two words: nothing to fit")
    r = 1 if r_mean != r_mean else max(1, round(r_mean))  # no revision at all: p = 0, and r's least value
    model = RevisionModel(p=min(1.0, p), r=r, final_words=max(3, r), seed=seed)
    delta, cv = fit_params["delta_wps"]["value"], fit_params["cv"]["value"]
    logged: list[list[SessionStats]] = []
    typed: list[list[SessionStats]] = []
    revision: list[list[SessionStats]] = []
    for pid in held_ids:
        groups: tuple[list[SessionStats], list[SessionStats], list[SessionStats]] = ([], [], [])
        for s in logs.participants[pid]:
            got = keyed_stats(s.press_ms, s.chars)
            text = " ".join(s.sentence.split())
            if got is None or not text:
                continue
            key = f"{pid}/{s.section}"
            groups[0].append(got)
            model_typed = keyed_stats(*type_keys(text, pool, question_rng(seed, key)))
            assert model_typed is not None  # the keys end on the text, which has a word
            groups[1].append(model_typed)
            revised = revise(text, model, key)
            rng = question_rng(seed + 1, key)
            shape = 1.0 / (cv * cv)
            times = np.cumsum(rng.gamma(shape, (1000.0 / delta) / shape, len(revised.words)))
            times -= times[0]  # from the first word, as the logs count
            groups[2].append(session_stats(hypotheses_of(list(revised.words), times.tolist())))
        if groups[0]:
            for target, g in zip((logged, typed, revision), groups, strict=True):
                target.append(g)
    logged_ci = bootstrap(logged, summarize, seed=seed)
    compared = {}
    for name, groups_ in (("typed_model", typed), ("revision_model_jittered", revision)):
        point = summarize([s for g in groups_ for s in g])
        compared[name] = {k: {"value": v, "within_logged_ci": within(v, logged_ci[k])} for k, v in point.items()}
    return {
        "n_fit_participants": len(fit_groups),
        "n_held_out_participants": len(logged),
        "n_held_out_sentences": sum(len(g) for g in logged),
        "fit": fit_params,
        "backspace_runs": run_structure(logs, fit_ids),
        "revision_model": model.model_dump(),
        "held_out_logged": logged_ci,
        "held_out_model": compared,
    }


def spoken_fit(hypotheses: Sequence[Hypotheses], *, seed: int = 0) -> dict[str, Any]:
    """Revision model and cadence fitted to recorded hypotheses, CIs over questions, and
    the statistics of those questions."""
    groups = [[session_stats(h)] for h in hypotheses if h.times_ms is not None]
    return {
        "n_questions": len(groups),
        "fit": bootstrap(groups, fitted, seed=seed),
        "stats": bootstrap(groups, summarize, seed=seed),
    }


# --------------------------------------------------------------------------- the fit file

FIT_FORMAT = "streamrag.input_fit"
"""``format`` of a ``fit-input`` file (``FIT.json``)."""


def fit_file(data: dict[str, Any]) -> dict[str, Any]:
    """What ``fit-input`` writes: ``format_version`` first (:mod:`streamrag.base.formats`),
    then ``format``, then ``data``."""
    return versioned({"format": FIT_FORMAT, **data})


def read_fit(path: str | os.PathLike[str]) -> dict[str, Any]:
    """A ``fit-input`` file, checked: its version readable, its format ours, and a typed
    fit carrying its backspace-run structure. A file written before versions were
    recorded has none: refused in one line saying so (its spoken fit alone would load,
    but a typed model without the run structure is the one that under-revises)."""
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise DataFileError(f"{path}: not a fit-input file ({exc})") from None
    if not isinstance(data, dict):
        raise DataFileError(f"{path}: not a fit-input file (expected a JSON object)")
    version = check_version(data.get(FIELD), path)
    if version > UNVERSIONED and data.get("format") != FIT_FORMAT:
        raise DataFileError(f"{path}: format {data.get('format')!r} is not {FIT_FORMAT!r}")
    typed = data.get("typed")
    if isinstance(typed, dict) and not isinstance(typed.get("backspace_runs"), dict):
        raise DataFileError(
            f"{path}: a typed fit of format version {version} has no backspace-run structure (typed.backspace_runs): "
            "re-run streamrag fit-input to write it"
        )
    return data
