"""The learned trigger: features, the saved model and its numpy inference, the trigger's modes,
the anchor's published ``trigger.summary.json`` reproduced from its feature files."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest
from _inputs import anchor_feature_table as _write_anchor_table
from _simhelpers import compact, const_scenario, full_q, replay
from conftest import ANCHOR_REPO

from streamrag.analysis.evidence.prefixes import PrefixEvidence
from streamrag.analysis.features.compute import ANCHOR_COLUMNS, prefix_features
from streamrag.analysis.features.table import read_feature_table
from streamrag.base.errors import ConfigError, RecordError, TableError
from streamrag.cli import main
from streamrag.pipeline.learned import LearnedTrigger, load_model, predict_proba

MIRROR = ANCHOR_REPO  # STREAMRAG_ANCHOR_REPO: a clone of the anchor study's repository
PUBLISHED = ("results/trigger_features.split0.csv", "results/trigger_features.split1.csv", "results/trigger.summary.json")


def _evidence(
    top1: list[int], *, words: list[str] | None = None, ne: list[int] | None = None, ne_full: int | None = None
) -> PrefixEvidence:
    n = len(top1)
    ids = np.array([[c, c + 100, c + 200] for c in top1], dtype=np.int32)
    zeros = np.zeros(n)
    return PrefixEvidence(
        ids, zeros, zeros, zeros, np.zeros(n, dtype=np.int8), words=None if words is None else tuple(words),
        ne_first=None if ne is None else np.array(ne, dtype=np.int16),
        ne_first_full=None if ne_full is None else np.full(n, ne_full, dtype=np.int16),
    )  # fmt: skip


def test_stability_features_follow_the_anchors_rule() -> None:
    f = prefix_features(_evidence([5, 7, 7, 7, 2, 2]))
    assert f["top1_changed"].tolist() == [0, 1, 0, 0, 1, 0]
    assert f["top1_stable_streak"].tolist() == [1, 1, 2, 3, 1, 2]
    assert f["t"].tolist() == [1, 2, 3, 4, 5, 6]


def test_entity_and_question_word_online_and_full() -> None:
    # The tagger on the prefix finds the entity at word 3 only once word 4 is heard; on the
    # full query it starts at word 3 from the first word on (right context).
    words = ["the", "movie", "Dune", "Part", "who"]
    f = prefix_features(_evidence([1] * 5, words=words, ne=[0, 0, 0, 3, 3], ne_full=3))
    assert f["named_entity_detected"].tolist() == [0, 0, 0, 1, 1]
    assert f["words_since_first_ne"].tolist() == [0, 0, 0, 1, 2]
    assert f["named_entity_detected_full"].tolist() == [0, 0, 1, 1, 1]
    assert f["words_since_first_ne_full"].tolist() == [0, 0, 0, 1, 2]
    # "who" is word 5, beyond the anchor's first three words: other, online and full alike
    assert f["question_word_type"].tolist() == ["other"] * 5
    g = prefix_features(_evidence([1] * 3, words=["so", "when", "is"]))
    assert g["question_word_type"].tolist() == ["other", "when", "when"]
    assert g["question_word_type_full"].tolist() == ["when"] * 3


def test_the_reader_names_file_line_and_column(tmp_path: Path) -> None:
    good = _write_anchor_table(tmp_path / "f.csv", 5)
    table = read_feature_table(good)
    assert table.context == "full"  # an anchor file has no context column: its rule is the full query's
    lines = good.read_text().splitlines()
    lines[3] = lines[3].replace(",simple,movie,True,", ",simple,movie,yes,").replace(",simple,movie,False,", ",simple,movie,yes,")
    bad = tmp_path / "bad.csv"
    bad.write_text("\n".join(lines) + "\n")
    with pytest.raises(RecordError, match=r"bad\.csv:4: field 'retrieved_gold': must be True or False, got 'yes'"):
        read_feature_table(bad)
    (tmp_path / "short.csv").write_text("interaction_id,t\nq,1\n")
    with pytest.raises(TableError, match="column 'question_type' missing"):
        read_feature_table(tmp_path / "short.csv")


@pytest.fixture(scope="module")
def trained(tmp_path_factory: pytest.TempPathFactory) -> Path:
    pytest.importorskip("sklearn", reason="train-trigger needs the learn extra")
    d = tmp_path_factory.mktemp("learned")
    train, test = _write_anchor_table(d / "train.csv", 60, 3), _write_anchor_table(d / "test.csv", 40, 4)
    assert main(["train-trigger", str(train), str(test), "--out", str(d / "out"), "--folds", "3"]) == 0
    return d


def test_our_inference_equals_scikit_learns_predict_proba(trained: Path) -> None:
    from streamrag.learn.train import design_for, fit_models, training_rows

    table = read_feature_table(trained / "train.csv")
    design = design_for(table, "anchor")
    rows = training_rows(table)
    fitted = fit_models(design.matrix(table, rows), table.columns["label"][rows].astype(int))
    test = read_feature_table(trained / "test.csv")
    x = design.matrix(test)
    for name in ("logreg", "gbdt"):
        model = load_model(trained / "out" / f"{name}.json")
        ours, theirs = predict_proba(model, x), fitted[name].predict_proba(x)[:, 1]
        np.testing.assert_allclose(ours, theirs, rtol=1e-12, atol=1e-15)
        assert model.provenance["train_sha256"] == table.sha256
        assert model.columns[3] == "named_entity_detected_full"  # an anchor table: the full-query rule


def test_the_trigger_frontier_reads_in_its_declared_types(trained: Path) -> None:
    from streamrag.base.columns import declared_dtypes
    from streamrag.learn.train import TRIGGER_FRONTIER

    frontier = TRIGGER_FRONTIER.read_csv(trained / "out" / "frontier.csv")
    assert declared_dtypes(frontier) == dict(TRIGGER_FRONTIER.columns)
    assert set(frontier["evaluation"]) == {"paper", "cv"} and str(frontier["n_questions"].dtype) == "Int64"


def test_a_saved_model_is_json_and_a_bad_one_is_one_line(trained: Path, tmp_path: Path) -> None:
    raw = json.loads((trained / "out" / "gbdt.json").read_text())
    assert raw["format"] == "streamrag.trigger-model/1" and len(raw["gbdt"]["trees"]) == 100
    raw["gbdt"]["trees"][0]["left"][0] = 10**6
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(raw))
    with pytest.raises(ConfigError, match=r"bad\.json: not a streamrag trigger model: gbdt\.trees\.0"):
        load_model(bad)


def test_single_fires_once_rearm_at_every_upward_crossing() -> None:
    p = [0.1, 0.6, 0.7, 0.2, 0.8, 0.9, 0.3]
    single = LearnedTrigger(lambda t: p[t - 1], 0.5, rearm=False)
    rearm = LearnedTrigger(lambda t: p[t - 1], 0.5, rearm=True)
    assert [single.on_word(t) for t in range(1, 8)] == [False, True, False, False, False, False, False]
    assert [rearm.on_word(t) for t in range(1, 8)] == [False, True, False, False, True, False, False]
    # live input revised from word 2 on: word 2 is decided again from the state before it
    # (armed), as if the withdrawn words had never been heard
    p[1:] = [0.3, 0.6]
    assert [single.on_word(t) for t in (2, 3)] == [False, True]


def test_the_learned_trigger_fires_in_the_pipeline_at_the_models_word(trained: Path) -> None:
    model = trained / "out" / "logreg.json"
    topk = [[1, 2, 3], [1, 2, 3], [4, 5, 6], [4, 5, 6], [4, 5, 6], [4, 5, 6]]
    q = full_q("q", topk, scores={1: 5.0, 4: 5.0}, coverage={1: 0.9, 4: 0.9})
    with pytest.raises(ConfigError, match="reads 'named_entity_detected_full', which is not computed"):
        replay(q, const_scenario(trigger={"kind": "learned", "model": str(model), "tau": 0.5}))
    n = q.n_words
    feats = dict(q.features or {})
    feats.update(named_entity_detected_full=np.ones(n), words_since_first_ne_full=np.arange(n, dtype=float),
                 question_word_type_full=np.array(["who"] * n, dtype=object))  # fmt: skip
    from dataclasses import replace

    q2 = replace(q, features=feats)
    rs = const_scenario(trigger={"kind": "learned", "model": str(model), "tau": 0.0})

    def fires(rs: object) -> list[tuple]:
        return [(e[0], e[4]) for e in compact(replay(q2, rs)) if e[1] == "fire" and e[2] == "streaming"]  # type: ignore[arg-type]

    assert fires(rs) == [(500_000, 1)]  # τ = 0: one fire, at word 1 (δ = 2 w/s)
    rs = const_scenario(trigger={"kind": "learned", "model": str(model), "tau": 0.0, "mode": "rearm"})
    assert fires(rs) == [(500_000, 1)]  # P never drops below 0: never re-armed
    rs = const_scenario(trigger={"kind": "learned", "model": str(model), "tau": 1.0})
    assert fires(rs) == [(3_000_000, 6)]  # P < 1 throughout: only the reflector's fallback on the full query


def test_a_table_without_evidence_cannot_run_the_learned_trigger(trained: Path) -> None:
    from _simhelpers import table_q

    rs = const_scenario(trigger={"kind": "learned", "model": str(trained / "out" / "logreg.json")})
    with pytest.raises(ConfigError, match="needs per-prefix features"):
        replay(table_q("q", 6, t_suf=2), rs)


def _published(tmp: Path) -> list[Path]:
    if not MIRROR.is_dir():
        pytest.skip(f"the anchor study's mirror is not at {MIRROR}")
    out = []
    for name in PUBLISHED:
        data = subprocess.run(["git", "-C", str(MIRROR), "show", f"HEAD:{name}"], capture_output=True, check=True).stdout
        (tmp / Path(name).name).write_bytes(data)
        out.append(tmp / Path(name).name)
    return out


def _differences(ours: object, theirs: object, path: str = "") -> list[str]:
    if isinstance(theirs, dict):
        return [d for k, v in theirs.items() for d in _differences(ours[k], v, f"{path}{k}.")]  # type: ignore[index]
    if isinstance(theirs, list):
        assert isinstance(ours, list) and len(ours) == len(theirs), path
        return [d for i, (a, b) in enumerate(zip(ours, theirs, strict=True)) for d in _differences(a, b, f"{path}{i}.")]
    if isinstance(theirs, float) and isinstance(ours, float):
        # The published file came from another numpy/BLAS: the anchor's own code run here gives
        # our values, which differ from the file's in the 15th digit (426.94063926940623 vs
        # …0640); a rule difference moves a mean by ≥ 1 ms / 292 questions, 7 orders more.
        same = ours == pytest.approx(theirs, rel=1e-11, abs=1e-9)
    else:
        same = ours == theirs
    return [] if same else [f"{path}: ours {ours!r}, published {theirs!r}"]


def test_the_published_trigger_summary_is_reproduced_from_the_published_features(tmp_path: Path) -> None:
    pytest.importorskip("sklearn", reason="train-trigger needs the learn extra")
    from streamrag.learn.train import paper_summary

    split0, split1, summary = _published(tmp_path)
    ours, _ = paper_summary(read_feature_table(split1), read_feature_table(split0))
    published = json.loads(summary.read_text())
    del published["params"]  # its file paths
    # every published number exactly (operating points, both frontiers, baselines, ablation, importances)
    assert _differences(ours, published) == []


@pytest.mark.slow  # two analyses of the demo set with the tagger on every prefix
def test_a_table_replay_of_the_learned_trigger_equals_full_mode(tmp_path: Path, demo_features_analysis: Path) -> None:
    # A hand-written model (no scikit-learn): P rises with t and the stable streak, falls
    # with a top-1 change; entity and question-word columns read the prefix (online).
    from streamrag.data.demo import demo_path
    from streamrag.pipeline.learned import LogRegParams, TriggerModel, save_model

    columns = ["t", "top1_stable_streak", "top1_changed", "named_entity_detected", "top1_margin", "question_word_type=what"]
    logreg = LogRegParams(mean=[0.0] * 6, scale=[1.0] * 6, coef=[0.4, 0.3, -0.8, 0.5, 0.2, -0.3], intercept=-2.0)
    model = save_model(TriggerModel(kind="logreg", columns=columns, context="prefix", logreg=logreg), tmp_path / "m.json")
    analysis = demo_features_analysis  # skipped without the entity tagger (the ner extra)
    assert (analysis / "features.csv").read_text().splitlines()[0].startswith(",".join(ANCHOR_COLUMNS))
    common = ["--scenario", "paper_rq3", "--set", "select.population=all", "--set", "trigger.kind=learned",
              "--set", f"trigger.model={model}", "--set", "trigger.tau=0.4", "--set", "trigger.mode=rearm"]  # fmt: skip
    inputs = {
        "data": [str(demo_path()), "--set", "data.split=all", "--set", "data.entity_predictor=true"],
        "table": ["--table", str(analysis / "stabilization.csv")],
    }
    for name, source in inputs.items():
        assert main(["simulate", *source, *common, "--out", str(tmp_path / name)]) == 0
    for file in ("results.csv", "trace.jsonl"):
        assert (tmp_path / "data" / file).read_bytes() == (tmp_path / "table" / file).read_bytes(), file
    fired = [int(r.split(",")[8]) for r in (tmp_path / "data" / "results.csv").read_text().splitlines()[1:] if r.split(",")[8]]
    assert max(fired) >= 2  # rearm fired more than once somewhere (the test can tell the modes apart)


def test_analytic_vs_replayed_names_each_disagreement() -> None:
    from streamrag.learn.analytic_vs_replay import compare
    from streamrag.learn.paper import AnalyticParams

    rows = [  # n = 12, t_suf = 6, δ = 3: H(t_suf) = 600 ms
        {"interaction_id": "early_ok", "n_words": 12, "t_star": 6, "saved_ms": 1190.0, "misfire": "False"},
        {"interaction_id": "early_bad", "n_words": 12, "t_star": 6, "saved_ms": -1190.0, "misfire": "True"},
        {"interaction_id": "late_bad", "n_words": 12, "t_star": 6, "saved_ms": -1190.0, "misfire": "True"},
        {"interaction_id": "late_ok", "n_words": 12, "t_star": 6, "saved_ms": 1190.0, "misfire": "False"},
        {"interaction_id": "silent", "n_words": 12, "t_star": 6, "saved_ms": 0.0, "misfire": "False"},
    ]
    fires = {"early_ok": 2, "early_bad": 2, "late_bad": 7, "late_ok": 6, "silent": None}
    out = compare(rows, fires, AnalyticParams())
    assert {k: v["n"] for k, v in out["by_reason"].items()} == {
        "late_fire_rejected": 1, "no_fire": 1, "overlap": 1, "premature_accepted": 1, "premature_rejected": 1,
    }  # fmt: skip
    # analytic: premature → H(6) − L = 0; fire at 7 → H(7) = 600 (5 words left = 1.67 s); at 6 → 600
    assert out["by_reason"]["premature_accepted"]["mean_analytic_ms"] == 0.0
    assert out["by_reason"]["late_fire_rejected"]["mean_analytic_ms"] == 600.0
    assert out["analytic"]["misfire_rate"] == 0.4 and out["replayed"]["misfire_rate"] == 0.4


def test_train_trigger_refuses_a_bad_table_in_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "bad.csv").write_text("interaction_id,t\nq,1\n")
    assert main(["train-trigger", str(tmp_path / "bad.csv"), str(tmp_path / "bad.csv"), "--out", str(tmp_path / "o")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "bad.csv: column 'question_type' missing" in err[0]


def test_a_model_path_is_relative_to_its_scenario_and_sweep_keys_follow_its_content(trained: Path, tmp_path: Path) -> None:
    import shutil

    from streamrag.simulator.scenario import load_scenario
    from streamrag.sweep.grid import load_grid
    from streamrag.sweep.inputs import PreparedInputs
    from streamrag.sweep.points import plan

    study = tmp_path / "study"
    (study / "models").mkdir(parents=True)
    shutil.copy(trained / "out" / "logreg.json", study / "models" / "m.json")
    shutil.copy(trained / "out" / "gbdt.json", study / "models" / "other.json")
    (study / "s.toml").write_text('[trigger]\nkind = "learned"\nmodel = "models/m.json"\n', encoding="utf-8")
    assert load_scenario(str(study / "s.toml")).scenario.trigger.model == str(study / "models" / "m.json")  # type: ignore[union-attr]
    grid = study / "g.toml"
    grid.write_text(
        'name = "g"\nkind = "simulate"\ninput = "generated:10:seed=1"\nscenario = "s.toml"\n[axes]\n"trigger.tau" = [0.3, 0.6]\n',
        encoding="utf-8",
    )

    def keys(path: Path) -> list[str]:
        g = load_grid(path)
        return [p.key for p in plan(g, PreparedInputs(g.input)).points]

    first = keys(grid)
    shutil.copytree(study, tmp_path / "moved")
    assert keys(tmp_path / "moved" / "g.toml") == first  # content, not place
    shutil.copy(study / "models" / "other.json", study / "models" / "m.json")  # another model, same path
    assert set(keys(grid)).isdisjoint(first)
