"""The HotpotQA reader (both layouts) and the clean-versus-string-grounded gold table, on a sample we wrote."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from streamrag.analysis.studies.dual_gold import DUAL
from streamrag.base.columns import declared_dtypes
from streamrag.base.errors import RecordError
from streamrag.cli import main
from streamrag.data.hotpotqa import read_hotpotqa

# Original release layout: a JSON array. q1's answer is also in a paragraph that is not a
# supporting fact (string gold {1, 2}, clean gold {2}); q3's supporting title is absent
# (skipped, as the anchor's loader does).
ORIGINAL = [
    {
        "_id": "q1", "question": "who directed jaws", "answer": "Steven Spielberg", "type": "bridge", "level": "easy",
        "supporting_facts": [["Jaws (film)", 1]],
        "context": [
            ["Shark", ["A shark is a fish.", "Sharks live in the sea."]],
            ["Steven Spielberg", ["Who is Steven Spielberg?", "Steven Spielberg is a filmmaker."]],
            ["Jaws (film)", ["Jaws is a thriller.", "Jaws was directed by Steven Spielberg, directed in 1974."]],
            ["Sea", ["The sea is wide."]],
        ],
    },
    {
        "_id": "q3", "question": "what is it", "answer": "x", "type": "bridge", "level": "hard",
        "supporting_facts": [["Absent", 0]], "context": [["Other", ["Nothing here."]]],
    },
]  # fmt: skip

# Hugging Face layout, JSON lines: a yes/no comparison, its answer in no paragraph.
HF = {
    "id": "q2", "question": "were scott derrickson and ed wood of the same nationality", "answer": "yes",
    "type": "comparison", "level": "medium",
    "supporting_facts": {"title": ["Scott Derrickson", "Ed Wood"], "sent_id": [0, 0]},
    "context": {"title": ["Scott Derrickson", "Ed Wood", "Film"],
                "sentences": [["Scott Derrickson is an American director."], ["Ed Wood was an American filmmaker."],
                              ["A film is a movie."]]},
}  # fmt: skip


def _files(tmp_path: Path) -> tuple[Path, Path]:
    original = tmp_path / "hotpot_dev_distractor_v1.json"
    original.write_text(json.dumps(ORIGINAL), encoding="utf-8")
    hf = tmp_path / "hotpot.jsonl"
    hf.write_text(json.dumps(HF) + "\n", encoding="utf-8")
    return original, hf


def test_reader_both_layouts(tmp_path: Path) -> None:
    original, hf = _files(tmp_path)
    (q1,) = read_hotpotqa(original)  # q3 skipped: no supporting paragraph
    assert q1.interaction_id == "q1" and q1.question_type == "bridge" and q1.level == "easy"
    assert q1.passages[2] == "Jaws is a thriller. Jaws was directed by Steven Spielberg, directed in 1974."
    assert q1.gold == frozenset({2})
    (q2,) = read_hotpotqa(hf)
    assert q2.gold == frozenset({0, 1}) and len(q2.passages) == 3


def test_reader_names_record_and_field(tmp_path: Path) -> None:
    bad = [dict(ORIGINAL[0]), {k: v for k, v in ORIGINAL[0].items() if k != "context"} | {"_id": "q9"}]
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(bad), encoding="utf-8")
    with pytest.raises(RecordError, match=r"bad\.json.*2.*context"):
        list(read_hotpotqa(path))


def test_dual_gold_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    combined = tmp_path / "both.jsonl"
    combined.write_text("".join(json.dumps(x) + "\n" for x in [ORIGINAL[0], HF, ORIGINAL[1]]), encoding="utf-8")
    out = tmp_path / "out"
    assert main(["analyze", "--hotpotqa", str(combined), "--k", "1", "--out", str(out)]) == 0
    with open(out / "dual_gold.csv", encoding="utf-8") as fh:
        rows = {r["interaction_id"]: r for r in csv.DictReader(fh)}
    assert set(rows) == {"q1", "q2"}
    q1, q2 = rows["q1"], rows["q2"]
    # q1, k = 1: "who" reaches only paragraph 1 (answer-bearing, not a supporting fact): the
    # string arm hits at word 1; "directed" (twice in paragraph 2) brings the clean gold at word 2.
    assert (q1["n_gold_clean"], q1["n_gold_string"]) == ("1", "2")
    assert (q1["t_suf_string"], q1["t_suf_clean"]) == ("1", "2")
    assert q1["phi_suf_clean"] == repr(2 / 3)
    typed = DUAL.read_csv(out / "dual_gold.csv")
    assert declared_dtypes(typed) == dict(DUAL.columns) and str(typed["retrieved_gold_clean"].dtype) == "boolean"
    # q2: "yes" is in no paragraph: string gold is empty, clean gold is retrieved
    assert (q2["n_gold_string"], q2["retrieved_gold_string"], q2["t_suf_string"]) == ("0", "False", "")
    assert q2["retrieved_gold_clean"] == "True"
    summary = json.loads((out / "dual_gold.json").read_text(encoding="utf-8"))
    assert summary["n_questions"] == 2 and summary["n_string_ungroundable"] == 1
    assert summary["string"] == {"n": 1, "mean_phi_suf": 1 / 3, "median_phi_suf": 1 / 3, "share_t_suf_1": 1.0}
    assert summary["clean"]["n"] == 2
    assert (summary["n_retrieved_gold_both"], summary["n_string_earlier"], summary["n_string_later"]) == (1, 1, 0)
    assert "string-grounded: n 1" in capsys.readouterr().out
