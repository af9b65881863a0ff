"""t_entity: the anchor study's proposed predictor (first named entity), an optional extra."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from streamrag.analysis.studies.entity import ner_unavailable_reason
from streamrag.cli import main
from streamrag.data.demo import demo_path

REASON = ner_unavailable_reason()
needs_ner = pytest.mark.skipif(REASON is not None, reason=REASON or "")


@needs_ner
def test_first_entity_position_is_the_word_where_the_entity_begins() -> None:
    from streamrag.analysis.studies.entity import first_entity_position

    # spaCy tags "Steve Nash" (PERSON) starting at word 3 and "2008" (DATE) later
    assert first_entity_position("how did Steve Nash play in 2008") == 3
    assert first_entity_position("what is the answer") is None
    # an entity beginning inside a word (after punctuation) belongs to that word
    assert first_entity_position("who was president in (1990)") == 5


@needs_ner
def test_analyze_writes_t_entity_and_the_anchor_section_says_what_each_predictor_is(tmp_path: Path) -> None:
    out = tmp_path / "a"
    args = ["analyze", str(demo_path()), "--split", "all", "--out", str(out), "--no-figures", "--no-cache", "--entity-predictor"]
    assert main(args) == 0
    header = (out / "stabilization.csv").read_text().splitlines()[0].split(",")
    assert header[-2:] == ["t_entity", "skip_reason"]
    anchor = json.loads((out / "summary.json").read_text())["anchor"]
    assert "online" in anchor["t_entity"]["what"] and "not an online predictor" in anchor["t_pivot"]["what"]
    assert "proxy" in anchor["t_anchor"]["what"]
    # stats recomputes the same section from the table alone
    assert main(["stats", str(out / "stabilization.csv"), "--out", str(tmp_path / "s")]) == 0
    again = json.loads((tmp_path / "s" / "summary.json").read_text())["anchor"]
    assert again["t_entity"] == anchor["t_entity"]


def test_without_the_extra_the_flag_is_a_one_line_error(tmp_path: Path, capsys, monkeypatch) -> None:
    import streamrag.analysis.studies.entity as entity

    monkeypatch.setattr(
        entity, "ner_unavailable_reason", lambda: "the entity predictor needs spaCy: pip install 'streamrag[ner]'"
    )
    args = ["analyze", str(demo_path()), "--split", "all", "--out", str(tmp_path / "x"), "--entity-predictor"]
    assert main(args) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "pip install 'streamrag[ner]'" in err
    assert not (tmp_path / "x").exists()  # refused before any work or output


@needs_ner
def test_the_first_entity_heard_needs_only_the_words_heard_so_far() -> None:
    from streamrag.analysis.studies.entity import entity_columns, first_entity_heard, first_entity_position

    # Tagged whole, "brightwater" (word 7) is an entity from its right context ("foods or
    # kestrel outdoor"); tagging the prefixes as they are heard, the first one with an
    # entity is words 1..10.
    q = "which company had more employees at the end of 2022, brightwater foods or kestrel outdoor?"
    assert (first_entity_heard(q), first_entity_position(q)) == (10, 7)
    # here only a prefix has one: the whole question tagged at once has none
    q = "what is the population of the city where the harlow institute of technology is located?"
    assert (first_entity_heard(q), first_entity_position(q)) == (12, None)
    assert first_entity_heard("what is the answer") is None
    assert entity_columns("how did Steve Nash play in 2008", "prefix") == {"t_entity": 3}
    assert entity_columns("how did Steve Nash play in 2008", "full") == {"t_entity_full": 3}


@needs_ner
def test_the_first_entity_heard_is_the_first_prefix_the_feature_tagger_marks() -> None:
    # one rule: the early-stopping tagger and the per-prefix feature columns agree
    from streamrag.analysis.features.compute import prefix_entities
    from streamrag.analysis.studies.entity import first_entity_heard
    from streamrag.base.lines import iter_question_objects

    for _, _, obj in iter_question_objects(demo_path()):
        online, _ = prefix_entities(obj["query"])
        marked = [t for t, position in enumerate(online.tolist(), start=1) if position > 0]
        assert first_entity_heard(obj["query"]) == (marked[0] if marked else None)


@needs_ner
def test_analyze_writes_the_entity_column_of_its_context_and_says_which(tmp_path: Path) -> None:
    import pandas as pd

    from streamrag.analysis.studies.entity import first_entity_heard, first_entity_position
    from streamrag.base.lines import iter_question_objects

    queries = {qid: obj["query"] for _, qid, obj in iter_question_objects(demo_path())}
    tables = {}
    for context in ("prefix", "full"):
        out = tmp_path / context
        args = ["analyze", str(demo_path()), "--split", "all", "--out", str(out), "--no-figures", "--no-cache"]
        assert main([*args, "--entity-predictor", "--entity-context", context]) == 0
        tables[context] = pd.read_csv(out / "stabilization.csv", dtype={"interaction_id": str}).set_index("interaction_id")
        anchor = json.loads((out / "summary.json").read_text())["anchor"]
        column = {"prefix": "t_entity", "full": "t_entity_full"}[context]
        other = {"prefix": "t_entity_full", "full": "t_entity"}[context]
        assert column in tables[context].columns and other not in tables[context].columns
        assert column in anchor and other not in anchor
    assert "anchor's rule" in json.loads((tmp_path / "full" / "summary.json").read_text())["anchor"]["t_entity_full"]["what"]
    for qid, query in queries.items():
        online, full = tables["prefix"].at[qid, "t_entity"], tables["full"].at[qid, "t_entity_full"]
        assert (None if pd.isna(online) else int(online)) == first_entity_heard(query)
        assert (None if pd.isna(full) else int(full)) == first_entity_position(query)
    differ = (tables["prefix"]["t_entity"].fillna(0) != tables["full"]["t_entity_full"].fillna(0)).sum()
    assert differ == 9  # of 32 demo questions: the tagger reads right context


@needs_ner
def test_stats_tests_entity_position_on_the_column_it_has_and_names_it(tmp_path: Path, capsys) -> None:
    out = tmp_path / "a"
    args = ["analyze", str(demo_path()), "--split", "all", "--out", str(out), "--no-figures", "--no-cache"]
    assert main([*args, "--entity-predictor", "--entity-context", "full"]) == 0
    assert main(["stats", str(out / "stabilization.csv"), "--out", str(tmp_path / "s"), "--bootstrap", "20"]) == 0
    section = json.loads((tmp_path / "s" / "summary.json").read_text())["entity_position"]
    assert section["predictor"] == "t_entity_full" and "anchor's rule" in section["what"]
    assert "entity position, t_entity_full" in capsys.readouterr().out
