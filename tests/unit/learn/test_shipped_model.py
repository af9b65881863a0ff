"""The shipped learned-trigger model (``trigger.model = "frontier"``): found by name, hashed
by content in sweep keys, trained by a documented command on generated data that is not
the frontier's, and reproduced by that command (to the last bits, which follow the BLAS kernels)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from streamrag.analysis.features.table import read_feature_table
from streamrag.base.errors import ConfigError
from streamrag.cli import main
from streamrag.pipeline.learned import list_models, load_model

ROOT = Path(__file__).resolve().parents[3]
SHIPPED = ROOT / "sim" / "models" / "frontier.json"
REPRODUCE = [
    ["generate", "T1.csv", "--table", "--questions", "1371", "--seed", "1"],
    ["generate", "T0.csv", "--table", "--questions", "1371", "--seed", "0"],
    ["train-trigger", "table:T1.csv", "table:T0.csv", "--features", "retrieval_stability,position", "--out", "M"],
]
"""The README's command for the shipped model (``M/logreg.json`` is ``sim/models/frontier.json``)."""


def test_the_shipped_model_is_found_by_name_and_an_unknown_name_is_one_line() -> None:
    assert "frontier" in list_models()
    model = load_model("frontier")
    assert model.kind == "logreg" and model.context == "prefix"
    assert model.columns == ["top1_stable_streak", "top1_changed", "t"]  # what synthetic evidence and any ranking give
    with pytest.raises(
        ConfigError, match=r"no shipped model 'nope' \(shipped: .*frontier.*a model file is a path ending in \.json\)"
    ):
        load_model("nope")


def test_the_shipped_model_was_trained_on_seed_1_and_evaluated_on_the_frontiers_seed_0() -> None:
    prov = load_model("frontier").provenance
    assert prov["command"].startswith("streamrag train-trigger table:T1.csv table:T0.csv --features retrieval_stability,position")
    assert prov["train_table"] == "table:T1.csv" and prov["test_table"] == "table:T0.csv"
    assert prov["train_sha256"] != prov["test_sha256"]
    assert prov["tau_cv"] == 0.45  # the τ its cross-validation on the training table chose


def test_sweep_keys_hash_a_shipped_model_by_its_content(tmp_path: Path) -> None:
    from streamrag.simulator.file_settings import anchor_file_setting, file_setting_sha256

    assert anchor_file_setting("trigger.model", "frontier", tmp_path) == "frontier"  # a name, not a path
    assert file_setting_sha256("trigger.model", "frontier") == hashlib.sha256(SHIPPED.read_bytes()).hexdigest()
    copy = tmp_path / "m.json"
    copy.write_bytes(SHIPPED.read_bytes())
    assert file_setting_sha256("trigger.model", str(copy)) == file_setting_sha256("trigger.model", "frontier")
    assert file_setting_sha256("latency.profile", "arora2025") is None  # a built-in profile is a name


def test_a_generated_table_gives_rankings_features_only_and_the_anchor_set_says_what_is_missing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["generate", "T.csv", "--table", "--questions", "30", "--seed", "3"]) == 0
    capsys.readouterr()
    table = read_feature_table("table:T.csv")
    assert table.has("top1_stable_streak") and table.has("t")
    assert not table.has("named_entity_detected") and not table.has("question_word_type")  # no words, no tagger
    assert np.isnan(table.columns["named_entity_detected"]).all()
    pytest.importorskip("sklearn", reason="train-trigger needs the learn extra")
    assert main(["train-trigger", "table:T.csv", "table:T.csv", "--out", "M"]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "column 'named_entity_detected' (group entity)" in err[0]
    assert "--features retrieval_stability,position" in err[0]
    (tmp_path / "T.prefixes.parquet").unlink()
    assert main(["train-trigger", "table:T.csv", "table:T.csv", "--features", "position", "--out", "M"]) == 1
    assert "no per-prefix evidence beside it" in capsys.readouterr().err


def _same_model(got: object, want: object, path: str = "") -> list[str]:
    """Where two model files differ: every key and string exactly, every float to 1e-9 relative.

    The fit is deterministic, but its last bits follow the BLAS kernels of the machine
    (an lbfgs solve on AMD and on Intel CPUs differs in the 15th digit); a changed table,
    feature, τ or solver setting moves the coefficients far more than that.
    """
    if isinstance(want, float) and isinstance(got, float):
        return [] if got == pytest.approx(want, rel=1e-9, abs=1e-12) else [f"{path}: {got!r} != {want!r}"]
    if isinstance(want, dict) and isinstance(got, dict):
        if got.keys() != want.keys():
            return [f"{path}: keys {sorted(got)} != {sorted(want)}"]
        return [d for k in want for d in _same_model(got[k], want[k], f"{path}.{k}")]
    if isinstance(want, list) and isinstance(got, list) and len(got) == len(want):
        return [d for i, (g, w) in enumerate(zip(got, want, strict=True)) for d in _same_model(g, w, f"{path}[{i}]")]
    return [] if got == want else [f"{path}: {got!r} != {want!r}"]


def test_the_documented_command_retrains_the_shipped_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    sklearn = pytest.importorskip("sklearn", reason="train-trigger needs the learn extra")
    trained_with = json.loads(SHIPPED.read_text())["provenance"]["sklearn_version"]
    if sklearn.__version__ != trained_with:
        pytest.skip(f"the shipped model was fitted with scikit-learn {trained_with}, this is {sklearn.__version__}")
    monkeypatch.chdir(tmp_path)  # the command's relative paths are what the provenance records
    for argv in REPRODUCE:
        assert main(argv) == 0
    got = json.loads((tmp_path / "M" / "logreg.json").read_text(encoding="utf-8"))
    assert _same_model(got, json.loads(SHIPPED.read_text(encoding="utf-8"))) == []


def test_the_model_comparison_sees_a_change_beyond_the_last_bits() -> None:
    model = json.loads(SHIPPED.read_text(encoding="utf-8"))
    assert _same_model(model, model) == []
    moved = json.loads(SHIPPED.read_text(encoding="utf-8"))
    intercept = moved["logreg"]["intercept"]
    moved["logreg"]["intercept"] = intercept * (1 + 1e-6)
    assert _same_model(moved, model) != []
    moved["logreg"]["intercept"] = intercept * (1 + 1e-13)
    assert _same_model(moved, model) == []
