"""A retriever of one's own (issue 44): a class in the user's file, selected by
``--retriever FILE.py:Class``, ranks every prefix; its failures are one line naming it."""

from __future__ import annotations

import csv
import hashlib
import json
from pathlib import Path

import numpy as np
import pytest
from _inputs import OVERLAP, one_error_line, record, run_cli, write_jsonl

import streamrag
from streamrag.data.ingest import ingest


def overlap_top1(chunks: list[str], query: str) -> list[int]:
    """Its top-1 of every prefix, recomputed here: most shared words, then the lower chunk id."""
    words = [set(c.lower().split()) for c in chunks]
    q = query.split()
    out = []
    for t in range(1, len(q) + 1):
        prefix = {w.lower() for w in q[:t]}
        out.append(min(range(len(chunks)), key=lambda i: (-len(prefix & words[i]), i)))
    return out


def t_sc_by_hand(top1: list[int]) -> int:
    """The first prefix from which top-1 no longer changes."""
    t = len(top1)
    while t > 1 and top1[t - 2] == top1[-1]:
        t -= 1
    return t


@pytest.fixture
def overlap(tmp_path: Path) -> Path:
    path = tmp_path / "overlap.py"
    path.write_text(OVERLAP, encoding="utf-8")
    assert len(OVERLAP.splitlines()) <= 30
    return path


def _table(folder: Path) -> list[dict[str, str]]:
    with open(folder / "stabilization.csv", newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _docs_example() -> str:
    """The first Python block of docs/retrievers.md."""
    text = (Path(__file__).resolve().parents[3] / "docs" / "retrievers.md").read_text(encoding="utf-8")
    return text.split("```python\n", 1)[1].split("```", 1)[0]


@pytest.mark.parametrize("source", ["test", "docs"])
def test_the_hand_computed_question(tmp_path: Path, overlap: Path, capsys: pytest.CaptureFixture[str], source: str) -> None:
    # chunks: 0 "acme robotics was founded in boston by jane doe." 1 "robots are built in many
    # cities, not only boston." 2 "who knows what the weather in boston will be?"; query "who
    # founded acme robotics in boston". Shared words per prefix: "who" → (0, 0, 1): chunk 2;
    # "who founded" → (1, 0, 1): a tie, the lower id, chunk 0; every longer prefix adds to
    # chunk 0 alone ("boston." with its full stop is not "boston"). top-1 = 2 0 0 0 0 0, t_sc = 2.
    if source == "docs":
        assert len(_docs_example().splitlines()) <= 30
        overlap.write_text(_docs_example(), encoding="utf-8")
    data = write_jsonl(tmp_path / "d.jsonl", [record(0)])
    (question,) = ingest(data)
    assert question.chunks[0] == "acme robotics was founded in boston by jane doe."  # type: ignore[union-attr]
    assert overlap_top1(question.chunks, record(0)["query"]) == [2, 0, 0, 0, 0, 0]  # type: ignore[union-attr]
    code, _, err = run_cli(
        ["analyze", data, "--retriever", f"{overlap}:WordOverlap", "--out", tmp_path / "a", "--no-figures"], capsys
    )
    assert code == 0, err
    (row,) = _table(tmp_path / "a")
    assert (row["t_sc"], row["n_words"]) == ("2", "6")


def test_analyze_demo_ranks_with_the_users_class_on_any_number_of_jobs(
    tmp_path: Path, overlap: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = f"{overlap}:WordOverlap"
    for jobs in ("1", "2"):
        argv = ["analyze", "demo", "--retriever", target, "--out", tmp_path / f"j{jobs}", "--no-figures", "--jobs", jobs]
        code, out, err = run_cli(argv, capsys)
        assert code == 0, err
        assert "[retriever python]" in out
    table = _table(tmp_path / "j1")
    assert (tmp_path / "j1" / "stabilization.csv").read_bytes() == (tmp_path / "j2" / "stabilization.csv").read_bytes()

    by_id = {q.record.interaction_id: q for q in ingest(streamrag.demo_path())}  # type: ignore[union-attr]
    assert len(table) == len(by_id) == 32
    for row in table:
        question = by_id[row["interaction_id"]]
        assert int(row["t_sc"]) == t_sc_by_hand(overlap_top1(question.chunks, question.record.query)), row["interaction_id"]

    code, _, err = run_cli(["analyze", "demo", "--out", tmp_path / "bm25", "--no-figures"], capsys)
    assert code == 0, err
    assert [r["t_sc"] for r in table] != [r["t_sc"] for r in _table(tmp_path / "bm25")]  # the class ran, not BM25

    analysis = json.loads((tmp_path / "j1" / "summary.json").read_text())["parameters"]["analysis"]
    digest = hashlib.sha256(OVERLAP.encode()).hexdigest()
    assert analysis["retriever"] == {"kind": "python", "target": f"{overlap.resolve()}:WordOverlap", "sha256": digest}

    frame = streamrag.analyze(streamrag.demo_path(), retriever=target, split=None)  # the public API, the same table
    assert frame["t_sc"].tolist() == [int(r["t_sc"]) for r in table]


def test_simulate_with_the_users_class_by_set_or_by_option(
    tmp_path: Path, overlap: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(overlap.parent)  # a relative path is taken from the current folder
    runs = {
        "set": ["--set", "data.retriever=overlap.py:WordOverlap"],
        "option": ["--retriever", "overlap.py:WordOverlap"],
    }
    for name, given in runs.items():
        code, _, err = run_cli(["simulate", "demo", "--scenario", "paper_rq3", *given, "--out", tmp_path / name], capsys)
        assert code == 0, err
    assert (tmp_path / "set" / "results.csv").read_bytes() == (tmp_path / "option" / "results.csv").read_bytes()
    manifest = json.loads((tmp_path / "set" / "manifest.json").read_text())
    retriever = manifest["scenario"]["scenario"]["data"]["retriever"]
    assert retriever == {
        "kind": "python",
        "target": f"{overlap.resolve()}:WordOverlap",
        "sha256": hashlib.sha256(OVERLAP.encode()).hexdigest(),
    }

    code, _, err = run_cli(
        ["analyze", "demo", "--retriever", "overlap.py:WordOverlap", "--out", tmp_path / "a", "--no-figures"], capsys
    )
    assert code == 0, err
    t_suf = {r["interaction_id"]: r["t_suf"] for r in _table(tmp_path / "a")}
    with open(tmp_path / "set" / "results.csv", newline="", encoding="utf-8") as fh:
        results = list(csv.DictReader(fh))
    replayed = [r for r in results if not r["skip_reason"]]  # paper_rq3 replays the retrieved-gold questions
    assert len(replayed) == sum(1 for t in t_suf.values() if t) and all(
        r["t_star"] == t_suf[r["interaction_id"]] for r in replayed
    )


def test_a_retriever_file_named_in_a_scenario_or_grid_file_is_relative_to_that_file(
    tmp_path: Path, overlap: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)  # not the folder of overlap.py: only the files' own folder finds it
    (tmp_path / "s.toml").write_text(
        'name = "mine"\n\n[data.retriever]\nkind = "python"\ntarget = "overlap.py:WordOverlap"\n', encoding="utf-8"
    )
    code, _, err = run_cli(["simulate", "demo", "--scenario", tmp_path / "s.toml", "--out", tmp_path / "s"], capsys)
    assert code == 0, err
    manifest = json.loads((tmp_path / "s" / "manifest.json").read_text())
    assert manifest["scenario"]["scenario"]["data"]["retriever"]["target"] == f"{overlap.resolve()}:WordOverlap"
    (tmp_path / "g.toml").write_text(
        'kind = "simulate"\ninput = "demo"\nscenario = "paper_rq3"\n\n[axes]\n"data.retriever" = ["overlap.py:WordOverlap"]\n',
        encoding="utf-8",
    )
    code, _, err = run_cli(["sweep", tmp_path / "g.toml", "--out", tmp_path / "g"], capsys)
    assert code == 0, err
    given = ["--retriever", f"{overlap}:WordOverlap"]
    code, _, err = run_cli(["simulate", "demo", "--scenario", "paper_rq3", *given, "--out", tmp_path / "r"], capsys)
    assert code == 0, err
    (point,) = (tmp_path / "g" / "points").iterdir()
    assert (point / "results.csv").read_bytes() == (tmp_path / "r" / "results.csv").read_bytes()


# --- the scale the reflector judges ----------------------------------------------------------


SCALED = """\
class Cosine:
    scale = "cosine"

    def __init__(self, chunks):
        self.n = len(chunks)

    def score(self, query):
        return [1.0 / (1 + i) for i in range(self.n)]
"""


def test_a_declared_scale_is_judged_as_declared_and_none_by_the_chunks_bm25(tmp_path: Path, overlap: Path) -> None:
    from streamrag.retrieval.bm25 import BM25Index
    from streamrag.retrieval.kinds import RetrieverEnv, retriever_config

    (tmp_path / "scaled.py").write_text(SCALED, encoding="utf-8")
    chunks = ["acme robotics was founded in boston", "robots in boston", "the weather"]
    index = BM25Index.build(chunks)
    query = "who founded acme robotics"

    plain = retriever_config(f"{overlap}:WordOverlap")
    assert plain.scale == "bm25"  # no threshold meets scores on no known scale: the top chunk's BM25 is judged
    rankings = plain.retriever(chunks, index, RetrieverEnv()).rank(query, k=2)
    assert rankings.topk.tolist() == [[0, 1], [0, 1], [0, 1], [0, 1]]
    assert np.array_equal(rankings.final_scores, index.score(index.tokenizer(query)))

    cosine = retriever_config(f"{tmp_path / 'scaled.py'}:Cosine")
    assert cosine.scale == "cosine"
    rankings = cosine.retriever(chunks, index, RetrieverEnv()).rank(query, k=3)
    assert rankings.final_scores.tolist() == [1.0, 0.5, 1 / 3]  # its own scores, judged by reflector.cosine_threshold


# --- hostile: one line naming the target, never a traceback -----------------------------------


BAD = """\
class Raises:
    def __init__(self, chunks):
        self.n = len(chunks)

    def score(self, query):
        raise ZeroDivisionError("boom")


class Text(Raises):
    def score(self, query):
        return "1 2 3"


class Short(Raises):
    def score(self, query):
        return [1.0]


class Nones(Raises):
    def score(self, query):
        return [None] * self.n


class Infinite(Raises):
    def score(self, query):
        return [float("inf")] * self.n


class NoScore:
    def __init__(self, chunks):
        pass


class NoChunks:
    def score(self, query):
        return []


class Broken(Raises):
    def __init__(self, chunks):
        raise RuntimeError("no model file")
"""


@pytest.mark.parametrize(
    ("where", "name", "says"),
    [
        ("missing_module_xyz", "Cls", "no module named 'missing_module_xyz'"),
        ("missing.py", "Cls", "missing.py: no such file"),
        ("bad.py", "Missing", "bad.py has no class Missing"),
        ("bad.py", "NoScore", "NoScore has no score(query) method"),
        ("bad.py", "NoChunks", "NoChunks(chunks) must take one argument"),
        ("bad.py", "Broken", "Broken(chunks) raised RuntimeError: no model file"),
        ("bad.py", "Raises", "raised ZeroDivisionError: boom"),
        ("bad.py", "Text", "returned a str, not one number per chunk"),
        ("bad.py", "Short", "returned shape (1,)"),
        ("bad.py", "Nones", "returned object values, not numbers"),
        ("bad.py", "Infinite", "returned inf for chunk 0: scores must be finite"),
    ],
)
def test_a_bad_retriever_is_one_line_naming_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], where: str, name: str, says: str
) -> None:
    (tmp_path / "bad.py").write_text(BAD, encoding="utf-8")
    target = f"{tmp_path / where}:{name}" if where.endswith(".py") else f"{where}:{name}"
    shown = f"{tmp_path / where}:{name}" if where.endswith(".py") else target
    for argv in (
        ["analyze", "demo", "--retriever", target, "--out", tmp_path / "a", "--no-figures"],
        ["simulate", "demo", "--scenario", "paper_rq3", "--set", f"data.retriever={target}", "--out", tmp_path / "s"],
    ):
        code, _, err = run_cli(argv, capsys)
        line = one_error_line(err)
        assert code == 1 and f"retriever {shown}: " in line and says in line, line


def test_where_it_does_not_apply_it_is_refused_in_one_line(
    tmp_path: Path, overlap: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = f"{overlap}:WordOverlap"
    simulate = ["simulate", "demo", "--scenario", "paper_rq3", "--retriever", target, "--out", tmp_path / "s"]
    cases = {
        "ranks in per-question scope only, not global": [
            ["analyze", "demo", "--scope", "global", "--retriever", target, "--out", tmp_path / "a", "--no-figures"],
            [*simulate, "--set", "data.scope=global"],
        ],
        "compare_retrievers ranks word prefixes": [
            ["analyze", "demo", "--compare-retrievers", target, "--asr-revisions", "0.2", "--out", tmp_path / "a"]
        ],
        "ranked incrementally with BM25 only": [[*simulate, "--set", "data.asr.p=0.2"]],
    }
    for says, runs in cases.items():
        for argv in runs:
            code, _, err = run_cli(argv, capsys)
            assert code == 1 and says in one_error_line(err)


def test_a_changed_file_is_not_taken_for_the_recorded_one(tmp_path: Path, overlap: Path) -> None:
    from pydantic import ValidationError

    from streamrag.retrieval.kinds import retriever_config

    recorded = retriever_config(f"{overlap}:WordOverlap").model_dump()
    assert retriever_config(recorded) == retriever_config(f"{overlap}:WordOverlap")  # a round trip keeps it
    overlap.write_text(OVERLAP + "\n# edited\n", encoding="utf-8")
    with pytest.raises(ValidationError, match="the file changed"):
        retriever_config(recorded)
