"""Query-side columns, joins onto a table, the entity-position test and the grounding-precision sweep."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pandas as pd
import pytest
from conftest import ANCHOR_REPO
from scipy import stats as sps
from stats_tables import TABLE, write

from streamrag.analysis.join import join_table
from streamrag.analysis.studies.entity_position import entity_position
from streamrag.analysis.studies.grounding_precision import grounding_precision
from streamrag.analysis.studies.label_audit import AUDIT
from streamrag.analysis.studies.query_side import QUERIES, query_columns, question_word
from streamrag.analysis.table import read_table
from streamrag.base.columns import declared_dtypes
from streamrag.base.errors import RecordError, TableError
from streamrag.cli import main

# t_entity per question: q4 has no entity; q6..q9 are not in the source; qX is not in the table.
ENTITY_CSV = "interaction_id,t_entity,question_type\nq1,3,simple\nq2,1,simple\nq3,2,comparison\nq4,,comparison\nq5,2,comparison\nqX,1,set\n"


def test_question_word_and_query_columns(tmp_path: Path) -> None:
    assert question_word("Who won?") == "who"
    assert question_word("name the 3 largest") == "other"
    path = tmp_path / "q.jsonl"
    lines = [{"interaction_id": "a", "query": "how many  goals did   messi score", "question_type": "simple"},
             {"interaction_id": "b", "query": "Is it raining"}]  # fmt: skip
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n", encoding="utf-8")
    rows = query_columns(path)
    assert [(r["interaction_id"], r["n_words"], r["question_word"], r["question_type"]) for r in rows] == [
        ("a", 6, "how", "simple"),
        ("b", 3, "is", None),
    ]
    assert "t_entity" not in rows[0]


def test_query_columns_name_line_and_field(tmp_path: Path) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text('{"interaction_id": "a", "query": "x y"}\n{"interaction_id": "b", "query": "  "}\n', encoding="utf-8")
    with pytest.raises(RecordError, match=r"q\.jsonl.*2.*query"):
        query_columns(path)


def test_join_keeps_every_row_and_reports(tmp_path: Path) -> None:
    table = write(tmp_path)
    source = write(tmp_path, ENTITY_CSV, "entity.csv")
    df, (report,) = join_table(table, [source], tmp_path / "joined.csv")
    assert list(df["interaction_id"]) == [f"q{i}" for i in range(1, 10)]
    assert [None if x is pd.NA else int(x) for x in df["t_entity"]] == [3, 1, 2, None, 2, None, None, None, None]
    assert report["n_matched"] == 5
    assert report["n_table_unmatched"] == 4 and report["table_unmatched_ids"] == ["q6", "q7", "q8", "q9"]
    assert report["n_source_unmatched"] == 1
    assert report["added_columns"] == ["t_entity"]
    assert report["disagreements"]["question_type"] == {"n": 1, "ids": ["q3"]}  # the table's 'simple' is kept
    assert df.loc[2, "question_type"] == "simple"


def test_join_validates_joined_values(tmp_path: Path) -> None:
    table = write(tmp_path)
    source = write(tmp_path, "interaction_id,t_entity\nq3,7\n", "bad.csv")  # q3 has 4 words
    with pytest.raises(TableError, match=r"joined\.csv:4: column 't_entity': 7 is outside 1\.\.n_words"):
        join_table(table, [source], tmp_path / "joined.csv")


def test_gold_size_is_n_gold(tmp_path: Path) -> None:
    text = TABLE.replace(",gold_density,", ",dens,")  # as the anchor's tables: no gold_density
    table = write(tmp_path, text)
    source = write(tmp_path, "interaction_id,gold_size,gold_density\nq1,1,0.02\nq2,5,0.1\nq3,1,0.04\n", "gp.csv")
    df, _ = join_table(table, [source], tmp_path / "joined.csv")
    section = grounding_precision(df)
    assert section is not None
    assert section["all"]["n"] == 5
    assert section["n_density_undefined"] == 2
    # density <= 0.05: q1 (phi 0.1, t_suf 1) and q3 (0.5, 2)
    assert section["by_density_cap"]["0.05"] == {
        "n": 2, "mean_phi_suf": 0.3, "median_phi_suf": 0.3, "share_t_suf_1": 0.5, "median_t_suf": 1.5,
    }  # fmt: skip
    assert section["by_gold_size_cap"]["1"]["n"] == 2
    assert section["by_gold_size_cap"]["5"]["n"] == 3


def test_entity_position_against_hand_values(tmp_path: Path) -> None:
    df, _ = join_table(write(tmp_path), [write(tmp_path, ENTITY_CSV, "e.csv")], tmp_path / "j.csv")
    section = entity_position(df)
    assert section is not None
    assert section["n_retrieved_gold"] == 5 and section["n_without_entity"] == 1
    block = section["all"]
    # (t_entity, t_suf, type): q1 (3, 1, simple), q2 (1, 2, simple), q3 (2, 2, simple), q5 (2, 4, comparison)
    rho, p = sps.spearmanr([3, 1, 2, 2], [1, 2, 2, 4])
    assert block["spearman"]["rho"] == pytest.approx(rho, abs=1e-12)
    assert block["spearman"]["p"] == pytest.approx(p, rel=1e-9)
    assert block["mae_t_entity_words"] == pytest.approx(5 / 4)
    assert block["mae_question_type_words"] == pytest.approx((2 / 3 + 1 / 3 + 1 / 3 + 0) / 4)
    assert block["r2_question_type"] == pytest.approx(1 - (4 / 9 + 1 / 9 + 1 / 9) / 4.75)
    assert block["by_type"]["comparison"]["n"] == 1
    later = section["t_suf_gt_1"]
    assert later["n"] == 3
    assert later["spearman"]["rho"] == pytest.approx(sps.spearmanr([1, 2, 2], [2, 2, 4])[0], abs=1e-12)
    assert section["verdict"] == "not supported"


def test_entity_position_absent_without_t_entity(tmp_path: Path) -> None:
    assert entity_position(read_table(write(tmp_path))) is None


def test_stats_join_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    table = write(tmp_path)
    source = write(tmp_path, ENTITY_CSV, "entity.csv")
    out = tmp_path / "out"
    assert main(["stats", str(table), "--join", str(source), "--out", str(out), "--bootstrap", "50"]) == 0
    summary = json.loads((out / "summary.json").read_text())
    assert summary["join"][0]["n_table_unmatched"] == 4
    assert summary["entity_position"]["all"]["n"] == 4
    assert (out / "table.joined.csv").exists()
    printed = capsys.readouterr().out
    assert "entity position" in printed and "4 unmatched" in printed


def _anchor_file(tmp_path: Path, name: str) -> Path:
    if not ANCHOR_REPO.exists():
        pytest.skip(f"the anchor study's repository is not mirrored at {ANCHOR_REPO}")
    target = tmp_path / Path(name).name
    target.write_bytes(
        subprocess.run(["git", "-C", str(ANCHOR_REPO), "show", f"HEAD:{name}"], check=True, capture_output=True).stdout
    )
    return target


def test_specifically_grounded_slice_from_published_files(tmp_path: Path) -> None:
    """design §4: n 58, median phi_suf 0.35, from the anchor's published table and grounding file."""
    table = _anchor_file(tmp_path, "results/stab_k3.csv")
    grounding = _anchor_file(tmp_path, "results/grounding_precision.split0.csv")
    published = json.loads(_anchor_file(tmp_path, "results/grounding_precision.summary.json").read_text())["sweep"]
    df, (report,) = join_table(table, [grounding], tmp_path / "joined.csv")
    assert report["n_matched"] == 292 and report["n_source_unmatched"] == 0
    assert not any(d["n"] for d in report["disagreements"].values())
    section = grounding_precision(df)
    assert section is not None
    for ours, theirs in (("by_density_cap", "by_density_cap"), ("by_gold_size_cap", "by_goldsize_cap")):
        for cap, cell in section[ours].items():
            anchor_cell = published[theirs][cap if ours == "by_gold_size_cap" else str(float(cap))]
            assert cell["n"] == anchor_cell["n"]
            assert round(cell["median_phi_suf"], 4) == anchor_cell["phi_suf_median"]
            assert round(cell["mean_phi_suf"], 4) == anchor_cell["phi_suf_mean"]
            assert round(cell["share_t_suf_1"], 4) == anchor_cell["t_suf_eq_1_rate"]
    assert section["by_density_cap"]["0.05"]["n"] == 58


# (context, predictor, n with an entity, rho all, rho t_suf > 1): online and the anchor's rule
PUBLISHED_292 = [("prefix", "t_entity", 213, -0.072, 0.280), ("full", "t_entity_full", 207, -0.084, 0.283)]


@pytest.mark.slow
@pytest.mark.parametrize(("context", "predictor", "n", "rho", "rho_later"), PUBLISHED_292)
def test_entity_position_on_published_292(tmp_path: Path, crag_dir: Path, context, predictor, n, rho, rho_later) -> None:
    """The README's entity-position test: one command on the published table and the v4 question list."""
    from streamrag.analysis.studies.entity import ner_unavailable_reason

    reason = ner_unavailable_reason()
    if reason is not None:
        pytest.skip(reason)
    questions = crag_dir / "crag_v4_questions.jsonl"
    if not questions.exists():
        pytest.skip(f"{questions} not found")
    table = _anchor_file(tmp_path, "results/stab_k3.csv")
    out = tmp_path / "out"
    args = ["stats", str(table), "--join", str(questions), "--entity-predictor", "--entity-context", context]
    assert main([*args, "--out", str(out), "--bootstrap", "50"]) == 0
    section = json.loads((out / "summary.json").read_text())["entity_position"]
    assert section["predictor"] == predictor and section["n_retrieved_gold"] == 292
    assert section["all"]["n"] == n
    assert section["all"]["spearman"]["rho"] == pytest.approx(rho, abs=5e-4)
    assert section["t_suf_gt_1"]["spearman"]["rho"] == pytest.approx(rho_later, abs=5e-4)
    assert section["verdict"] == "not supported"


def test_label_audit_sampler_is_the_anchors_draw() -> None:
    import random

    from streamrag.analysis.studies.label_audit import sample_ids

    ids = [f"id{i:03d}" for i in range(40)]
    assert sample_ids(ids, 7, 3) == sorted(random.Random(3).sample(ids, 7))
    assert sample_ids(ids, 100, 3) == ids  # N beyond the population: all of it
    assert sample_ids(ids, 7, 3) != sample_ids(ids, 7, 4)


def test_label_audit_cli(tmp_path: Path, crag_sample: Path) -> None:
    import csv
    import random

    from streamrag.data.grounding import normalize

    out = tmp_path / "out"
    args = ["analyze", str(crag_sample), "--split", "all", "--label-audit", "2", "--seed", "5", "--no-figures", "--out", str(out)]
    assert main(args) == 0
    with open(out / "stabilization.csv", encoding="utf-8") as fh:
        population = [r["interaction_id"] for r in csv.DictReader(fh) if r["retrieved_gold"] == "True"]
    with open(out / "label_audit.csv", encoding="utf-8") as fh:
        audit = list(csv.DictReader(fh))
    assert [r["interaction_id"] for r in audit] == sorted(random.Random(5).sample(population, 2))
    for row in audit:
        assert row["matched_answer"] and row["matched_answer"] in normalize(row["gold_passage"])
        assert row["is_answer_bearing"] == ""
    typed = AUDIT.read_csv(out / "label_audit.csv")  # the judge's column, empty on every row, is still boolean
    assert declared_dtypes(typed) == dict(AUDIT.columns) and str(typed["is_answer_bearing"].dtype) == "boolean"


def test_label_audit_shows_the_passage_the_anchors_gold_set_yields(tmp_path: Path, crag_sample: Path) -> None:
    """The published audit row of 55b219e5 shows chunk 97: the first its gold set
    {16, 17, …, 97, 99} yields in CPython's order, not the lowest id; ``lowest`` is a
    labelled choice, and the choice without an audit is refused."""
    import csv

    shown: dict[str, dict[str, str]] = {}
    for rule in ("paper", "lowest"):
        out = tmp_path / rule
        args = [
            "--quiet",
            "analyze",
            str(crag_sample),
            "--split",
            "all",
            "--label-audit",
            "10",
            "--no-figures",
            "--out",
            str(out),
        ]
        assert main([*args, "--audit-passage", rule]) == 0
        with open(out / "label_audit.csv", encoding="utf-8") as fh:
            shown[rule] = {r["interaction_id"][:8]: r for r in csv.DictReader(fh)}
    assert shown["paper"]["55b219e5"]["gold_chunk_id"] == "97" and shown["paper"]["55b219e5"]["passage_rule"] == "paper"
    assert shown["lowest"]["55b219e5"]["gold_chunk_id"] == "16" and shown["lowest"]["55b219e5"]["passage_rule"] == "lowest"
    assert main(["analyze", str(crag_sample), "--audit-passage", "lowest", "--out", str(tmp_path / "x")]) == 1


def test_query_columns_t_anchor_over_a_corpus(tmp_path: Path) -> None:
    from streamrag.analysis.studies.anchor import t_anchor
    from streamrag.retrieval.bm25 import BM25Index
    from streamrag.retrieval.tokenize import word_tokens

    # 25 chunks: "common" in all, "rare" in one (1 <= df <= max(1, 0.05 * 25) = 1)
    index = BM25Index.build(["common words here"] * 24 + ["common rare"])
    path = tmp_path / "q.jsonl"
    path.write_text('{"interaction_id": "a", "query": "what common rare thing"}\n{"interaction_id": "b", "query": "absent"}\n')
    rows = query_columns(path, anchor_index=index)
    assert [r["t_anchor"] for r in rows] == [3, None]
    assert rows[0]["t_anchor"] == t_anchor(index, word_tokens("what common rare thing"))


def test_queries_only_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "q.jsonl"
    path.write_text('{"interaction_id": "a", "query": "who won", "question_type": "simple"}\n', encoding="utf-8")
    out = tmp_path / "out"
    assert main(["analyze", "--queries-only", str(path), "--out", str(out)]) == 0
    assert (out / "queries.csv").read_text(encoding="utf-8") == (
        "interaction_id,question_type,domain,static_or_dynamic,n_words,question_word\na,simple,,,2,who\n"
    )
    queries = QUERIES.read_csv(out / "queries.csv")
    assert declared_dtypes(queries) == QUERIES.dtypes(queries.columns) and str(queries["domain"].dtype) == "str"
    assert main(["analyze", str(path), "--queries-only", str(path), "--out", str(out)]) == 1
    assert "reads no pages" in capsys.readouterr().err
