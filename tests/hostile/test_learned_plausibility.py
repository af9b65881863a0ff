"""Issue 43: every number ``train-trigger`` and the learned trigger read is plausible or refused.

A feature table's rows (``1 ≤ t ≤ n_words``, ``1 ≤ t_suf ≤ n_words``, labels by their
definition, finite floats), the command's options (L, C_waste, δ, τ), degenerate training
data (one label, no row, not text) and a saved model (finite numbers, scale ≠ 0, trees a
walk can leave, a capped file size) are refused in one line naming what is wrong — never
trained on, run silently, or a traceback."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from conftest import ANCHOR_REPO

from streamrag.analysis.features.compute import ANCHOR_COLUMNS
from streamrag.base.errors import ConfigError
from streamrag.cli import main
from streamrag.pipeline.learned import MAX_MODEL_BYTES, load_model

ROOT = Path(__file__).resolve().parents[2]
SHIPPED = ROOT / "sim" / "models" / "frontier.json"


def _rows(n_questions: int = 6, n_words: int = 6) -> list[dict[str, str]]:
    """A plausible anchor-format table: every other question retrieved-gold (t_suf 3), t_sc 2."""
    rows = []
    for i in range(n_questions):
        t_suf = 3 if i % 2 == 0 else None
        for t in range(1, n_words + 1):
            rows.append(
                {
                    "interaction_id": f"q{i}", "question_type": "simple", "domain": "movie",
                    "retrieved_gold": str(t_suf is not None), "n_words": str(n_words), "t": str(t),
                    "t_suf": "" if t_suf is None else str(t_suf), "t_sc": "2", "top1_stable_streak": str(t),
                    "top1_changed": "0", "named_entity_detected": "0", "words_since_first_ne": "0",
                    "question_word_type": "who", "label": "" if t_suf is None else str(int(t >= t_suf)),
                    "label_sc": str(int(t >= 2)),
                }
            )  # fmt: skip
    return rows


def _write(path: Path, rows: list[dict[str, str]], header: tuple[str, ...] = ANCHOR_COLUMNS) -> Path:
    lines = [",".join(header), *(",".join(r[c] for c in header) for r in rows)]
    path.write_text("\n".join(lines) + "\n")
    return path


def _train(tmp_path: Path, train: Path, test: Path | None = None, *options: str) -> int:
    pytest.importorskip("sklearn", reason="train-trigger needs the learn extra")
    test = test or _write(tmp_path / "test.csv", _rows())
    return main(["train-trigger", str(train), str(test), "--out", str(tmp_path / "out"), "--folds", "2", *options])


def _one_line(capsys: pytest.CaptureFixture[str]) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    assert err[0].startswith("streamrag: error: ")
    return err[0]


# Each edit: (row index, {column: value}); the row is line index + 2 of the file.
IMPLAUSIBLE = {
    "negative t": ((1, {"t": "-4"}), "train.csv:3: field 't': -4 is outside 1..n_words = 1..6"),
    "t beyond the question": ((4, {"t": "99"}), "train.csv:6: field 't': 99 is outside 1..n_words = 1..6"),
    "t_suf 0": (
        (0, {"t_suf": "0"}),
        "train.csv:2: field 't_suf': 0 is outside 1..n_words = 1..6",
    ),
    "t_suf beyond the question": ((2, {"t_suf": "7"}), "train.csv:4: field 't_suf': 7 is outside 1..n_words = 1..6"),
    "n_words 0": ((0, {"n_words": "0"}), "train.csv:2: field 'n_words': 0 is outside 1..10000"),
    "t_sc 0": ((0, {"t_sc": "0"}), "train.csv:2: field 't_sc': 0 is outside 1..n_words = 1..6"),
    "a streak longer than the prefix": (
        (1, {"top1_stable_streak": "5"}),
        "train.csv:3: field 'top1_stable_streak': 5 is outside 1..t = 1..2",
    ),
    "a label that is not 1[t >= t_suf]": (
        (0, {"label": "1"}),
        "train.csv:2: field 'label': 1, but 1[t ≥ t_suf] = 1[1 ≥ 3] = 0",
    ),
    "a label without t_suf": (
        (6, {"label": "0"}),
        "train.csv:8: field 'label': 0, but t_suf is empty",
    ),
    "a label_sc that is not 1[t >= t_sc]": (
        (3, {"label_sc": "0"}),
        "train.csv:5: field 'label_sc': 0, but 1[t ≥ t_sc] = 1[4 ≥ 2] = 1",
    ),
    "another n_words in one question": (
        (5, {"n_words": "7"}),
        "train.csv:7: field 'n_words': 7, but line 2 of question 'q0' gives 6",
    ),
    "a repeated word": (
        (7, {"t": "1", "top1_stable_streak": "1", "label_sc": "0"}),
        "train.csv:9: field 't': 1 repeats line 8 of question 'q1'",
    ),
}


@pytest.mark.parametrize("case", list(IMPLAUSIBLE))
def test_train_trigger_refuses_an_implausible_row_naming_file_line_and_field(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (row, edit), message = IMPLAUSIBLE[case]
    rows = _rows()
    rows[row].update(edit)
    assert _train(tmp_path, _write(tmp_path / "train.csv", rows)) == 1
    assert message in _one_line(capsys)
    assert not (tmp_path / "out").exists()  # refused before anything is written


@pytest.mark.parametrize(
    ("column", "value", "message"),
    [
        ("top1_margin", "inf", "field 'top1_margin': inf is not a finite number"),
        ("top1_margin", "-1e400", "field 'top1_margin': -inf is not a finite number"),
        ("top1_coverage_prefix", "1.5", "field 'top1_coverage_prefix': 1.5 is outside 0..1"),
    ],
)
def test_a_float_feature_must_be_finite_and_in_its_range(
    column: str, value: str, message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    header = (*ANCHOR_COLUMNS, "top1_margin", "top1_coverage_prefix")
    rows = [{**r, "top1_margin": "0.5", "top1_coverage_prefix": "0.25"} for r in _rows()]
    rows[2][column] = value
    assert _train(tmp_path, _write(tmp_path / "train.csv", rows, header)) == 1
    assert "train.csv:4: " + message in _one_line(capsys)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        (["--L-ms", "-600"], "--L-ms: must be a finite number of ms ≥ 0, got -600.0"),
        (["--L-ms", "nan"], "--L-ms: must be a finite number of ms ≥ 0, got nan"),
        (["--L-ms", "inf"], "--L-ms: must be a finite number of ms ≥ 0, got inf"),
        (["--c-waste-ms", "-1"], "--c-waste-ms: must be a finite number of ms ≥ 0, got -1.0"),
        (["--delta-wps", "0"], "--delta-wps: must be a finite number of words/s > 0, got 0.0"),
        (["--delta-wps", "nan"], "--delta-wps: must be a finite number of words/s > 0, got nan"),
        (["--tau", "nan"], "--tau: must be in [0, 1], got nan"),
    ],
)
def test_an_out_of_range_option_is_refused_in_one_line(
    options: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _train(tmp_path, _write(tmp_path / "train.csv", _rows()), None, *options) == 1
    assert message in _one_line(capsys)


def test_one_label_only_is_refused_not_a_scikit_learn_traceback(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = _rows()
    for r in rows:  # t_suf = 1: every retrieved-gold row has label 1
        if r["t_suf"]:
            r.update(t_suf="1", label="1")
    assert _train(tmp_path, _write(tmp_path / "train.csv", rows)) == 1
    assert "train.csv: every one of the 18 training rows has label 1 (t ≥ t_suf): a classifier needs rows of both labels" in (
        _one_line(capsys)
    )


@pytest.mark.parametrize("which", ["train", "test"])
def test_no_row_to_train_or_evaluate_on_is_one_line(which: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    empty = _write(tmp_path / "empty.csv", [])
    good = _write(tmp_path / "good.csv", _rows())
    train, test = (empty, good) if which == "train" else (good, empty)
    assert _train(tmp_path, train, test) == 1
    line = _one_line(capsys)
    assert "empty.csv: no row to train on" in line if which == "train" else "empty.csv: no retrieved-gold question" in line


def test_a_table_without_a_retrieved_gold_question_trains_on_nothing_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rows = [r for r in _rows() if not r["t_suf"]]
    assert _train(tmp_path, _write(tmp_path / "train.csv", rows)) == 1
    assert "train.csv: no row to train on" in _one_line(capsys)


def test_a_binary_file_is_one_line_naming_it(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    binary = tmp_path / "train.csv"
    binary.write_bytes(b"interaction_id,t\nq\xff\xfe\x00\x01,1\n")
    assert _train(tmp_path, binary) == 1
    assert "train.csv:2: not UTF-8 text (byte 18)" in _one_line(capsys)


def test_an_integer_beyond_any_float_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = _rows()
    rows[3]["top1_stable_streak"] = "9" * 400
    assert _train(tmp_path, _write(tmp_path / "train.csv", rows)) == 1
    assert "train.csv:5: field 'top1_stable_streak': " in _one_line(capsys)


def test_a_field_past_the_csv_limit_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rows = _rows()
    rows[2]["interaction_id"] = "q" * 200_000
    assert _train(tmp_path, _write(tmp_path / "train.csv", rows)) == 1
    assert "train.csv:4: malformed CSV: field larger than field limit" in _one_line(capsys)


def test_the_published_feature_files_are_plausible(tmp_path: Path) -> None:
    import subprocess

    from streamrag.learn.plausible import read_training_table

    if not ANCHOR_REPO.is_dir():
        pytest.skip(f"the anchor study's mirror is not at {ANCHOR_REPO}")
    for split in (0, 1):
        name = f"results/trigger_features.split{split}.csv"
        data = subprocess.run(["git", "-C", str(ANCHOR_REPO), "show", f"HEAD:{name}"], capture_output=True, check=True).stdout
        (tmp_path / f"{split}.csv").write_bytes(data)
        assert read_training_table(tmp_path / f"{split}.csv").n_rows > 10_000


def test_a_generated_tables_features_are_plausible(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from streamrag.learn.plausible import read_training_table

    monkeypatch.chdir(tmp_path)
    assert main(["generate", "T.csv", "--table", "--questions", "30", "--seed", "3"]) == 0
    assert read_training_table("table:T.csv").n_rows > 30


# ------------------------------------------------------------------------- saved models


def _logreg(**edit: object) -> dict:
    raw = json.loads(SHIPPED.read_text())
    raw["logreg"].update(edit)
    return raw


def _gbdt(**edit: object) -> dict:
    """A one-tree GBDT on the shipped model's columns (a split on ``t`` at 3.5, two leaves)."""
    tree = {"feature": [2, -2, -2], "threshold": [3.5, -2.0, -2.0], "left": [1, -1, -1], "right": [2, -1, -1],
            "value": [0.0, -1.0, 1.0]}  # fmt: skip
    tree.update({k: v for k, v in edit.items() if k in tree})
    gbdt = {"init": 0.0, "learning_rate": 0.1, "trees": [tree], **{k: v for k, v in edit.items() if k not in tree}}
    return {**json.loads(SHIPPED.read_text()), "kind": "gbdt", "logreg": None, "gbdt": gbdt}


BAD_MODELS = {
    "NaN coefficient": (_logreg(coef=[float("nan"), 0.0, 1.0]), "logreg.coef.0: Input should be a finite number"),
    "infinite intercept": (_logreg(intercept=float("inf")), "logreg.intercept: Input should be a finite number"),
    "NaN mean": (_logreg(mean=[0.0, float("nan"), 0.0]), "logreg.mean.1: Input should be a finite number"),
    "an intercept of 1e40": (_logreg(intercept=1e40), "logreg.intercept: Input should be less than or equal to 1000000000"),
    "scale 0": (_logreg(scale=[1.0, 0.0, 1.0]), "logreg.scale: item 1 is 0"),
    "infinite scale": (_logreg(scale=[1.0, 1.0, float("inf")]), "logreg.scale.2: Input should be a finite number"),
    "a coefficient short": (_logreg(coef=[1.0, 1.0]), "mean, scale and coef need one value per column (3)"),
    "NaN threshold": (_gbdt(threshold=[float("nan"), -2.0, -2.0]), "gbdt.trees.0.threshold.0: Input should be a finite number"),
    "NaN leaf": (_gbdt(value=[0.0, float("nan"), 1.0]), "gbdt.trees.0.value.1: Input should be a finite number"),
    "learning rate 0": (_gbdt(learning_rate=0.0), "gbdt.learning_rate: Input should be greater than 0"),
    "infinite init": (_gbdt(init=float("-inf")), "gbdt.init: Input should be a finite number"),
    "a node its own child": (_gbdt(left=[1, 1, -1], right=[2, 2, -1]), "node 1: children must be both -1"),
    "a split on no feature": (_gbdt(feature=[-2, -2, -2]), "node 0: a split must name a feature"),
}


@pytest.mark.parametrize("case", list(BAD_MODELS))
def test_a_model_that_cannot_fire_is_refused_when_read(case: str, tmp_path: Path) -> None:
    raw, message = BAD_MODELS[case]
    path = tmp_path / "m.json"
    path.write_text(json.dumps(raw))  # json writes NaN and Infinity, as a model gone wrong would be saved
    with pytest.raises(ConfigError, match="m\\.json: not a streamrag trigger model: ") as info:
        load_model(path)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_a_good_gbdt_reads(tmp_path: Path) -> None:
    path = tmp_path / "m.json"
    path.write_text(json.dumps(_gbdt()))
    assert load_model(path).kind == "gbdt"


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("table")
    assert main(["generate", str(d / "T.csv"), "--table", "--questions", "20", "--seed", "3"]) == 0
    return d / "T.csv"


def _simulate(table: Path, model: str, out: Path) -> int:
    return main(["simulate", "--table", str(table), "--scenario", "paper_rq3", "--set", "trigger.kind=learned",
                 "--set", f"trigger.model={model}", "--out", str(out)])  # fmt: skip


@pytest.mark.parametrize("case", ["NaN coefficient", "scale 0"])
def test_simulate_with_a_model_that_never_fires_exits_1_in_one_line(
    case: str, table: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    raw, message = BAD_MODELS[case]
    (tmp_path / "m.json").write_text(json.dumps(raw))
    capsys.readouterr()
    assert _simulate(table, str(tmp_path / "m.json"), tmp_path / "run") == 1
    assert message in _one_line(capsys)


def test_a_model_path_of_dev_zero_is_refused_at_once(table: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    if not os.path.exists("/dev/zero"):
        pytest.skip("no /dev/zero here")
    capsys.readouterr()
    assert _simulate(table, "/dev/zero", tmp_path / "run") == 1  # read without bound before: never returned
    assert "trigger.model: /dev/zero: not a regular file" in _one_line(capsys)


def test_a_model_file_past_the_cap_is_refused_without_reading_it_all(tmp_path: Path) -> None:
    huge = tmp_path / "huge.json"
    with open(huge, "wb") as fh:  # sparse: cap + 1 bytes that take no disk
        fh.truncate(MAX_MODEL_BYTES + 1)
    with pytest.raises(ConfigError, match=r"huge\.json: larger than 8 MiB \(MAX_MODEL_BYTES\)"):
        load_model(huge)
    at_cap = tmp_path / "at_cap.json"
    at_cap.write_bytes(SHIPPED.read_bytes().ljust(MAX_MODEL_BYTES, b" "))  # JSON allows trailing spaces
    assert load_model(at_cap).kind == "logreg"


def test_the_shipped_model_still_reads() -> None:
    assert load_model("frontier").columns == ["top1_stable_streak", "top1_changed", "t"]
