"""Simulator inputs: questions from a stabilization table, and the scenario's selection.

Trace-driven mode (design §5) needs only the §7 columns ``interaction_id, n_words,
t_sc, t_suf`` (and ``question_type``, ``retrieved_gold``). Rows the analyzer skipped
(non-empty ``skip_reason``) are not simulated; they are counted in the summary.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from pathlib import Path

from streamrag.engine.scenario import ResolvedScenario
from streamrag.errors import EmptySelectionError, InputError
from streamrag.pipeline.question import SimQuestion


def questions_from_frame(frame: object) -> tuple[list[SimQuestion], int]:
    """SimQuestions (trace-driven) from a stabilization-table DataFrame; also the skip count."""
    import pandas as pd

    df: pd.DataFrame = frame  # type: ignore[assignment]

    def opt_int(v: object) -> int | None:
        return None if v is None or pd.isna(v) else int(v)  # type: ignore[arg-type]

    skip = df["skip_reason"] if "skip_reason" in df.columns else None
    qtype = df["question_type"] if "question_type" in df.columns else None
    out: list[SimQuestion] = []
    n_skipped = 0
    ids, n_words, t_sc, t_suf = (df[c].tolist() for c in ("interaction_id", "n_words", "t_sc", "t_suf"))
    for i in range(len(df)):
        if skip is not None and isinstance(skip.iat[i], str) and skip.iat[i]:
            n_skipped += 1
            continue
        qt = qtype.iat[i] if qtype is not None else ""
        out.append(
            SimQuestion(
                interaction_id=str(ids[i]),
                n_words=int(n_words[i]),
                t_sc=int(t_sc[i]),
                t_suf=opt_int(t_suf[i]),
                topk=None,
                gold=None,
                final_scores=None,
                final_coverage=None,
                question_type="" if qt is None or (not isinstance(qt, str) and pd.isna(qt)) else str(qt),
            )
        )
    return out, n_skipped


def questions_from_table(path: str | os.PathLike[str]) -> tuple[list[SimQuestion], int]:
    """Read and validate a stabilization table (§7) into trace-driven questions."""
    from streamrag.analysis.table import read_table

    return questions_from_frame(read_table(path))


def read_ids(path: str | os.PathLike[str]) -> list[str]:
    """Question ids, one per line (blank lines and ``#`` comments ignored)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"{path}: cannot read ids file: {exc.strerror or exc}") from None
    return [s for line in text.splitlines() if (s := line.split("#", 1)[0].strip())]


def select_questions(
    questions: Iterable[SimQuestion],
    rs: ResolvedScenario,
    *,
    ids: Sequence[str] | None = None,
    n_skipped: int = 0,
) -> tuple[list[SimQuestion], dict[str, int]]:
    """Apply ``--ids``, ``select.population`` and ``select.limit`` (input order kept).

    Returns the selected questions and the counts behind the selection.
    """
    sel = rs.scenario.select
    pool = list(questions)
    counts = {"input_rows": len(pool) + n_skipped, "skipped_in_input": n_skipped}
    if ids is not None:
        wanted = set(ids)
        known = {q.interaction_id for q in pool}
        missing = [i for i in ids if i not in known]
        if missing:
            more = f" and {len(missing) - 1} more" if len(missing) > 1 else ""
            raise InputError(f"--ids: question {missing[0]!r}{more} not in the input")
        before = len(pool)
        pool = [q for q in pool if q.interaction_id in wanted]
        counts["not_in_ids"] = before - len(pool)
    if sel.population == "retrieved_gold":
        before = len(pool)
        pool = [q for q in pool if q.retrieved_gold]
        counts["not_retrieved_gold"] = before - len(pool)
    if sel.limit is not None and len(pool) > sel.limit:
        counts["over_limit"] = len(pool) - sel.limit
        pool = pool[: sel.limit]
    counts["selected"] = len(pool)
    if not pool:
        raise EmptySelectionError(
            f"no question to simulate ({', '.join(f'{k} {v}' for k, v in counts.items())})"
        )
    return pool, counts
