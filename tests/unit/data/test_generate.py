"""The CRAG-shaped data generator, the synthetic stabilization table and `streamrag generate`."""

from __future__ import annotations

import bz2
import json
import re
import uuid
from collections import Counter
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conventions_oracle import chunk_texts, gold_chunks, normalize, visible_text

from streamrag.base.errors import ConfigError
from streamrag.cli import main
from streamrag.data.generated import crag_shape as profile
from streamrag.data.generated import records as gen
from streamrag.data.generated.records import (
    GeneratorSettings,
    generate_record,
    generate_records,
    generate_stabilization_table,
    write_crag_file,
)

SMALL = {"page_words": 120}  # metadata and queries do not depend on page size


def n_gold_chunks(record: dict) -> int:
    return len(gold_chunks(record))


# -- records -----------------------------------------------------------------------------
def test_records_have_the_crag_v4_shape() -> None:
    records = list(generate_records(GeneratorSettings(n_questions=12, seed=4, **SMALL)))
    assert len(records) == 12
    for rec in records:
        assert list(rec) == [
            "interaction_id", "query_time", "domain", "question_type", "static_or_dynamic",
            "query", "answer", "alt_ans", "split", "search_results",
        ]  # fmt: skip
        assert uuid.UUID(rec["interaction_id"]).version == 4
        assert re.fullmatch(r"\d\d/\d\d/2024, \d\d:\d\d:\d\d PT", rec["query_time"])
        assert rec["domain"] in profile.DOMAINS
        assert rec["question_type"] in profile.QUESTION_TYPES
        assert rec["static_or_dynamic"] in profile.STATIC_OR_DYNAMIC
        assert rec["split"] in (0, 1)
        assert 3 <= len(rec["query"].split()) <= 40
        assert isinstance(rec["answer"], str) and isinstance(rec["alt_ans"], list)
        assert len(rec["search_results"]) == 5
        for page in rec["search_results"]:
            assert set(page) == {"page_name", "page_url", "page_snippet", "page_result", "page_last_modified"}
            assert page["page_snippet"]
            assert page["page_result"] == "" or page["page_result"].startswith("<!DOCTYPE html>")
    assert len({r["interaction_id"] for r in records}) == 12


def test_same_seed_same_bytes_and_question_i_independent_of_n(tmp_path: Path) -> None:
    settings = GeneratorSettings(n_questions=4, seed=11, **SMALL)
    a, b = tmp_path / "a.jsonl", tmp_path / "b.jsonl"
    write_crag_file(a, settings)
    write_crag_file(b, settings)
    assert a.read_bytes() == b.read_bytes()

    more = list(generate_records(settings.model_copy(update={"n_questions": 7})))
    assert [json.loads(line) for line in a.read_text().splitlines()] == more[:4]
    assert generate_record(settings, 6) == more[6]
    other_seed = list(generate_records(settings.model_copy(update={"seed": 12})))
    assert all(x["query"] != y["query"] for x, y in zip(other_seed, more, strict=False))


def test_markup_weight_does_not_change_the_text() -> None:
    light = generate_record(GeneratorSettings(n_questions=1, seed=2, html_overhead=0.2, **SMALL), 0)
    heavy = generate_record(GeneratorSettings(n_questions=1, seed=2, html_overhead=0.9, **SMALL), 0)
    assert light["query"] == heavy["query"] and light["answer"] == heavy["answer"]
    assert [visible_text(p) for p in light["search_results"]] == [visible_text(p) for p in heavy["search_results"]]
    assert sum(len(p["page_result"]) for p in heavy["search_results"]) > 2 * sum(
        len(p["page_result"]) for p in light["search_results"]
    )


def test_metadata_follows_crag_proportions() -> None:
    records = list(generate_records(GeneratorSettings(n_questions=400, seed=0, page_words=20, pages_per_question=1)))
    n = len(records)

    def close(counts: dict[str, int], field: str, tol: float) -> None:
        seen = Counter(r[field] for r in records)
        total = sum(counts.values())
        for key, count in counts.items():
            assert abs(seen[key] / n - count / total) < tol, (field, key, seen[key] / n, count / total)

    close(profile.QUESTION_TYPES, "question_type", 0.06)
    close({d: sum(profile.DOMAIN_DYNAMISM[d]) for d in profile.DOMAINS}, "domain", 0.06)
    dynamism = {s: sum(profile.DOMAIN_DYNAMISM[d][i] for d in profile.DOMAINS) for i, s in enumerate(profile.STATIC_OR_DYNAMIC)}
    close(dynamism, "static_or_dynamic", 0.06)
    assert not any(r["domain"] == "movie" and r["static_or_dynamic"] == "real-time" for r in records)
    n_words = np.array([len(r["query"].split()) for r in records])
    assert abs(n_words.mean() - 11.93) < 0.7 and 10 <= np.median(n_words) <= 12
    assert n_words.min() >= 3 and n_words.max() <= 40
    assert abs(np.mean([r["split"] == 0 for r in records]) - 0.5) < 0.07
    assert all(r["answer"] == "invalid question" for r in records if r["question_type"] == "false_premise")


def test_groundable_share_and_planted_query_words() -> None:
    settings = GeneratorSettings(n_questions=120, seed=5, page_words=150)
    records = list(generate_records(settings))
    gold = [n_gold_chunks(r) for r in records]
    groundable = np.array([g > 0 for g in gold])
    assert abs(groundable.mean() - 0.35) < 0.1
    assert not any(g for r, g in zip(records, gold, strict=True) if r["question_type"] == "false_premise")
    # content words of the query (not among the top ranks) are in the pages: BM25 has signal
    lexicon = gen.build_lexicon(settings.vocabulary_size, settings.zipf_exponent)
    common = set(lexicon.words[:300])
    for rec in records[:30]:
        text = " " + " ".join(normalize(visible_text(p)) for p in rec["search_results"]) + " "
        content = [w for w in normalize(rec["query"]).split()[1:] if w not in common]
        assert content and sum(f" {w} " in text for w in content) >= len(content) / 2


def test_nothing_grounds_when_the_share_is_zero_and_everything_when_one() -> None:
    none = list(generate_records(GeneratorSettings(n_questions=25, seed=1, page_words=100, groundable_fraction=0.0)))
    assert sum(n_gold_chunks(r) for r in none) == 0
    every = list(generate_records(GeneratorSettings(n_questions=25, seed=1, page_words=100, groundable_fraction=1.0)))
    assert all(n_gold_chunks(r) > 0 for r in every if r["answer"] != "invalid question")


def test_default_pages_look_like_crag_pages() -> None:
    records = list(generate_records(GeneratorSettings(n_questions=4, seed=9)))
    n_chunks = [len(chunk_texts(r)) for r in records]
    assert 80 <= np.mean(n_chunks) <= 260
    html = [p["page_result"] for r in records for p in r["search_results"] if p["page_result"]]
    text = [visible_text(p) for r in records for p in r["search_results"] if p["page_result"]]
    markup_share = 1 - sum(map(len, text)) / sum(map(len, html))
    assert 0.78 <= markup_share <= 0.92
    assert all("<script>" in h and "<style>" in h and "<head>" in h for h in html)


# -- writing ------------------------------------------------------------------------------
def test_bz2_output_decompresses_to_the_plain_file(tmp_path: Path) -> None:
    settings = GeneratorSettings(n_questions=5, seed=3, **SMALL)
    plain = write_crag_file(tmp_path / "d.jsonl", settings)
    threaded = write_crag_file(tmp_path / "d.jsonl.bz2", settings)
    inline = write_crag_file(tmp_path / "e.jsonl.bz2", settings, compress_workers=0)
    assert not plain.compressed and threaded.compressed and inline.compressed
    data = (tmp_path / "d.jsonl").read_bytes()
    assert bz2.decompress((tmp_path / "d.jsonl.bz2").read_bytes()) == data
    assert bz2.decompress((tmp_path / "e.jsonl.bz2").read_bytes()) == data
    assert plain.n_records == threaded.n_records == 5
    assert plain.n_json_bytes == threaded.n_json_bytes == len(data) == plain.n_file_bytes
    assert threaded.n_file_bytes < len(data) / 2


def test_interrupted_write_leaves_no_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    real = gen.generate_records

    def failing(settings: GeneratorSettings):
        for i, rec in enumerate(real(settings)):
            if i == 2:
                raise KeyboardInterrupt
            yield rec

    monkeypatch.setattr(gen, "generate_records", failing)
    monkeypatch.setattr(gen, "_BATCH_BYTES", 1)  # batches reach the file before the failure
    settings = GeneratorSettings(n_questions=5, seed=0, **SMALL)
    for name in ("new.jsonl", "new.jsonl.bz2"):
        with pytest.raises(KeyboardInterrupt):
            write_crag_file(tmp_path / name, settings)
    existing = tmp_path / "old.jsonl"
    existing.write_text("previous content\n")
    with pytest.raises(KeyboardInterrupt):
        write_crag_file(existing, settings)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["old.jsonl"]
    assert existing.read_text() == "previous content\n"


def test_missing_folder_is_a_config_error(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="does not exist"):
        write_crag_file(tmp_path / "nope" / "x.jsonl", GeneratorSettings(n_questions=1, **SMALL))


# -- the synthetic stabilization table ----------------------------------------------------
@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    return generate_stabilization_table(1371, seed=0)


def test_table_invariants(table: pd.DataFrame) -> None:
    assert list(table.columns) == [
        "interaction_id", "domain", "question_type", "static_or_dynamic", "n_words", "n_passages",
        "groundable", "retrieved_gold", "t_sc", "phi_sc", "t_suf", "phi_suf", "volatility", "gold_density",
    ]  # fmt: skip
    assert len(table) == 1371 and table["interaction_id"].is_unique
    assert not (table.retrieved_gold & ~table.groundable).any()
    assert (table.t_suf.notna() == table.retrieved_gold).all()
    assert table.t_sc.between(1, table.n_words).all()
    suf = table[table.retrieved_gold]
    assert suf.t_suf.between(1, suf.n_words).all() and (suf.t_suf == suf.t_suf.round()).all()
    assert np.allclose(table.phi_sc, table.t_sc / table.n_words)
    assert np.allclose(suf.phi_suf, suf.t_suf / suf.n_words) and table.phi_suf[~table.retrieved_gold].isna().all()
    assert table.volatility.dtype.kind == "i" and (table.volatility >= 0).all()
    assert (table.volatility != 1).all()  # leaving the final top-1 and coming back takes ≥ 2 changes
    assert (table.volatility <= table.t_sc - 1).all()
    assert ((table.gold_density > 0) == table.groundable).all() and (table.gold_density <= 1).all()
    assert not table.groundable[table.question_type == "false_premise"].any()
    assert table.n_passages.between(1, 400).all()


def test_table_approximates_the_anchor_study(table: pd.DataFrame) -> None:
    rg = table[table.retrieved_gold]
    assert abs(table.groundable.mean() - 0.354) < 0.05
    assert abs(table.retrieved_gold.mean() - 0.213) < 0.035
    assert abs(table.phi_sc.mean() - 0.666) < 0.03 and 0.68 <= table.phi_sc.median() <= 0.78
    assert abs(rg.phi_suf.mean() - 0.264) < 0.045 and 0.09 <= rg.phi_suf.median() <= 0.2
    assert abs((rg.t_suf == 1).mean() - 0.49) < 0.08
    assert abs(table.volatility.mean() - 0.516) < 0.15 and abs((table.volatility > 0).mean() - 0.209) < 0.04
    sparse = rg[rg.gold_density <= 0.05]
    assert 0.1 < len(sparse) / len(rg) < 0.3 and (sparse.t_suf == 1).mean() < (rg.t_suf == 1).mean()


def test_table_is_deterministic_per_row() -> None:
    a = generate_stabilization_table(50, seed=3)
    pd.testing.assert_frame_equal(a, generate_stabilization_table(50, seed=3))
    pd.testing.assert_frame_equal(a.head(20), generate_stabilization_table(20, seed=3))
    assert not a.equals(generate_stabilization_table(50, seed=4))


# -- the command ----------------------------------------------------------------------------
def test_cli_writes_records(tmp_path: Path) -> None:
    out = tmp_path / "gen.jsonl.bz2"
    assert main(["generate", str(out), "--questions", "3", "--page-words", "100", "--seed", "5"]) == 0
    with bz2.open(out, "rt") as fh:
        records = [json.loads(line) for line in fh]
    assert records == list(generate_records(GeneratorSettings(n_questions=3, page_words=100, seed=5)))


def test_cli_writes_a_table(tmp_path: Path) -> None:
    out = tmp_path / "table.csv"
    assert main(["generate", str(out), "--questions", "40", "--table", "--seed", "2"]) == 0
    frame = pd.read_csv(out)
    assert len(frame) == 40 and "phi_suf" in frame.columns
    assert set(frame.groundable.unique()) <= {True, False}
    t_suf = pd.read_csv(out, dtype=str)["t_suf"].dropna()
    assert len(t_suf) and t_suf.str.fullmatch(r"\d+").all()  # integers, undefined left empty


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["x.txt", "--questions", "2"], ".jsonl, .jsonl.bz2 or .jsonl.zst"),
        (["x.jsonl", "--questions", "0"], "--questions must be ≥ 1"),
        (["x.jsonl", "--questions", "2", "--table"], "name the output *.csv"),
        (["x.jsonl", "--questions", "2", "--page-words", "3"], "page_words"),
    ],
)
def test_cli_errors_are_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str], argv: list[str], message: str) -> None:
    argv = [str(tmp_path / argv[0]), *argv[1:]]
    assert main(["generate", *argv]) == 1
    err = capsys.readouterr().err.strip()
    assert err.startswith("streamrag: error:") and message in err and "\n" not in err
    assert list(tmp_path.iterdir()) == []


def test_synthetic_evidence_reproduces_every_row_of_the_generated_table() -> None:
    from streamrag.analysis.evidence.synthetic import synthetic_evidence
    from streamrag.analysis.metrics import volatility

    table = generate_stabilization_table(600, seed=4)
    evidence = synthetic_evidence(table, seed=4)
    assert (
        synthetic_evidence(table, seed=4)["synthetic-4-0000007"].top_ids.tolist()
        == evidence["synthetic-4-0000007"].top_ids.tolist()
    )
    for row in table.itertuples():
        ev = evidence[row.interaction_id]
        t_suf = None if pd.isna(row.t_suf) else int(row.t_suf)
        assert (ev.n_words, ev.t_sc(), ev.t_suf(3)) == (row.n_words, row.t_sc, t_suf)
        assert volatility(ev.top_ids[:, 0].tolist()) == row.volatility
        if not row.groundable:
            assert (ev.gold_rank == 0).all()
        assert all(len(set(r)) == 5 for r in ev.top_ids.tolist())  # five distinct chunks per prefix


def test_generated_table_is_replayed_with_its_synthetic_evidence(tmp_path) -> None:
    import json

    from streamrag.cli import main

    out = tmp_path / "t.csv"
    assert main(["generate", str(out), "--questions", "120", "--table", "--seed", "2"]) == 0
    assert (tmp_path / "t.prefixes.parquet").is_file()  # named after its table
    assert main(["simulate", "--table", str(out), "--scenario", "paper_rq3", "--out", str(tmp_path / "run")]) == 0
    summary = json.loads((tmp_path / "run" / "summary.json").read_text())
    assert summary["reflector_model"] == "heuristic on per-prefix evidence"
    assert main(["simulate", "--table", str(out), "--no-evidence", "--scenario", "paper_rq3", "--out", str(tmp_path / "o")]) == 0
    oracle = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert oracle["reflector_model"].startswith("oracle reflector")
    # the real reflector accepts or rejects some results the oracle rule would not
    assert summary["saved_ms"]["mean"] != oracle["saved_ms"]["mean"]
