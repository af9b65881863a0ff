"""Hand-made stabilization tables for the stats tests, with their statistics worked out.

TABLE: 8 questions + 1 skipped row, columns in §7 order plus ``skip_reason`` and ``t_anchor``.

    id  type        n   gr rg  t_sc phi_sc t_suf phi_suf V dens  t_anchor  t*  n-t*
    q1  simple      10  T  T   5    0.5    1     0.1     0 0.02  1         1   9
    q2  simple      10  T  T   10   1.0    2     0.2     1 0.10  3         2   8
    q3  simple      4   T  T   2    0.5    2     0.5     0 0.04  2         2   2
    q4  comparison  5   T  T   5    1.0    1     0.2     2 0.5   2         1   4
    q5  comparison  8   T  T   4    0.5    4     0.5     0 0.05  4         4   4
    q6  set         6   T  F   3    0.5    -     -       0 0.2   5         3   3
    q7  set         4   F  F   3    0.75   -     -       1 0.0   -         3   1
    q8  multi-hop   12  F  F   6    0.5    -     -       0 0.0   -         6   6
    q9  (skipped: "empty query", every other field empty)
"""

from __future__ import annotations

from pathlib import Path

HEADER = (
    "interaction_id,domain,question_type,static_or_dynamic,n_words,n_passages,groundable,"
    "retrieved_gold,t_sc,phi_sc,t_suf,phi_suf,volatility,gold_density,skip_reason,t_anchor"
)

ROWS = [
    "q1,finance,simple,static,10,50,True,True,5,0.5,1,0.1,0,0.02,,1",
    "q2,finance,simple,static,10,50,True,True,10,1.0,2,0.2,1,0.1,,3",
    "q3,music,simple,real-time,4,25,True,True,2,0.5,2,0.5,0,0.04,,2",
    "q4,music,comparison,static,5,2,True,True,5,1.0,1,0.2,2,0.5,,2",
    "q5,movie,comparison,static,8,20,True,True,4,0.5,4,0.5,0,0.05,,4",
    "q6,movie,set,static,6,5,True,False,3,0.5,,,0,0.2,,5",
    "q7,sports,set,real-time,4,10,False,False,3,0.75,,,1,0.0,,",
    "q8,sports,multi-hop,static,12,10,False,False,6,0.5,,,0,0.0,,",
    "q9,,,,,,,,,,,,,,empty query,",
]

TABLE = "\n".join([HEADER, *ROWS]) + "\n"


def write(tmp_path: Path, text: str = TABLE, name: str = "t.csv") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def rows_table(rows: list[tuple], *, header: str = HEADER) -> str:
    """A table text from tuples (interaction_id, question_type, n_words, t_suf or None, t_sc).

    Every question is groundable; retrieved-gold exactly when t_suf is given; phi
    columns are computed as t/n_words with repr (exact round trip).
    """
    lines = [header]
    for qid, qtype, n, t_suf, t_sc in rows:
        rg = t_suf is not None
        suf = f"{t_suf},{t_suf / n!r}" if rg else ","
        lines.append(f"{qid},d,{qtype},static,{n},10,True,{rg},{t_sc},{t_sc / n!r},{suf},0,0.1,,")
    return "\n".join(lines) + "\n"
