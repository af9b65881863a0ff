"""Global scope end to end: pool grounding, BEIR folders, the real CRAG pool, the CLI, the simulator."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from streamrag.analysis.global_scope.analyze import analyze_pool, analyze_pool_per_question
from streamrag.analysis.global_scope.gold import PoolGrounder, question_gold
from streamrag.base.errors import RecordError
from streamrag.cli import main
from streamrag.data.crag import CragRecord
from streamrag.data.grounding import gold_in_normalized, normalize
from streamrag.data.pools.beir import read_beir
from streamrag.data.pools.corpus import PoolBuilder, PoolQuestion, PoolSource
from streamrag.retrieval.global_pool.index import GlobalIndex
from streamrag.retrieval.kinds import RetrieverEnv
from streamrag.simulator.questions import questions_from_analyses

DEMO = Path(__file__).resolve().parents[3] / "streamrag" / "data" / "demo" / "demo_questions.jsonl"
VOCAB = ["the", "a", "new", "york", "newyork", "renew", "yorker", "of", "42", "4", "2", "bob", "dylan", "is"]

text = st.lists(st.sampled_from([*VOCAB, "New-York", "4,2", "Bob's", "THE"]), max_size=15).map(" ".join)
answer = st.lists(st.sampled_from([*VOCAB, "i don't know", "yes"]), min_size=1, max_size=3).map(" ".join)


@settings(max_examples=200, deadline=None)
@given(chunks=st.lists(text, min_size=1, max_size=12), answers=st.lists(answer, min_size=1, max_size=3),
       mode=st.sampled_from(["exact", "relaxed"]))  # fmt: skip
def test_pool_grounder_equals_scanning_every_chunk(chunks: list[str], answers: list[str], mode: str) -> None:
    grounder = PoolGrounder(GlobalIndex.build(chunks), chunks)
    assert grounder.gold(answers, mode) == gold_in_normalized([normalize(c) for c in chunks], answers, mode)


def _tiny_pool() -> PoolSource:
    builder = PoolBuilder()
    builder.add_text("d0", "the capital of france is paris and it is large")
    builder.add_text("d1", "paris hilton is an heiress")
    builder.add_text("d2", "berlin is the capital of germany")
    q = PoolQuestion(CragRecord(interaction_id="q1", query="what is the capital of france", answer="paris"),
                     own_docs=("d1",), labeled_docs=("d0",))  # fmt: skip
    return PoolSource(builder.build(), [q], "tiny")


def test_gold_rules() -> None:
    source = _tiny_pool()
    index = GlobalIndex.build(source.pool.chunks)
    grounder = PoolGrounder(index, source.pool.chunks)
    q = source.questions[0]
    gold = {rule: question_gold(q, rule, "exact", pool=source.pool, grounder=grounder) for rule in ("answer", "own", "labeled")}
    assert gold == {"answer": frozenset({0, 1}), "own": frozenset({1}), "labeled": frozenset({0})}
    row = next(analyze_pool(source, gold="own")).row
    assert (row["n_passages"], row["n_gold"], row["gold_density"]) == (3, 1, 1 / 3)


def _beir(folder: Path, corpus: list[dict], queries: list[dict], qrels: str) -> Path:
    (folder / "qrels").mkdir(parents=True)
    (folder / "corpus.jsonl").write_text("".join(json.dumps(d) + "\n" for d in corpus))
    (folder / "queries.jsonl").write_text("".join(json.dumps(q) + "\n" for q in queries))
    (folder / "qrels" / "test.tsv").write_text(qrels)
    return folder


@pytest.fixture
def beir_dir(tmp_path: Path) -> Path:
    corpus = [{"_id": f"d{i}", "title": f"title {i}", "text": f"filler words number {i} " * 3} for i in range(20)]
    corpus[7]["text"] = "the eiffel tower is in paris"
    corpus[12]["text"] = "mount everest is the highest mountain"
    queries = [{"_id": "q1", "text": "where is the eiffel tower"}, {"_id": "q2", "text": "highest mountain on earth"},
               {"_id": "q3", "text": "not judged"}]  # fmt: skip
    return _beir(tmp_path / "beir", corpus, queries, "query-id\tcorpus-id\tscore\nq1\td7\t1\nq2\td12\t2\nq2\td3\t0\n")


def test_beir_gold_comes_from_qrels(beir_dir: Path) -> None:
    source = read_beir(beir_dir)
    assert [q.interaction_id for q in source.questions] == ["q1", "q2"]
    assert source.pool.n_docs == 20 and source.questions[1].labeled_docs == ("d12",)  # score 0 is not relevant
    rows = [a.row for a in analyze_pool(source, gold="labeled")]
    assert [r["retrieved_gold"] for r in rows] == [True, True]
    assert rows[0]["n_gold"] == 1 and rows[0]["t_suf"] is not None


def test_beir_distractor_sample_is_seeded_and_keeps_gold(beir_dir: Path) -> None:
    a = read_beir(beir_dir, distractors=5, seed=1)
    b = read_beir(beir_dir, distractors=5, seed=1)
    c = read_beir(beir_dir, distractors=5, seed=2)
    assert a.pool.doc_ids == b.pool.doc_ids and len(a.pool.doc_ids) == 7
    assert {"d7", "d12"} <= set(a.pool.doc_ids)
    assert a.pool.doc_ids == sorted(a.pool.doc_ids, key=lambda d: int(d[1:]))  # corpus order
    assert a.pool.doc_ids != c.pool.doc_ids
    assert read_beir(beir_dir, distractors=0).pool.doc_ids == ["d7", "d12"]


@pytest.mark.parametrize(
    ("file", "content", "message"),
    [
        (
            "corpus.jsonl",
            '{"_id": "d0", "text": "x"}\n{"title": "no id", "text": "y"}\n',
            r"corpus\.jsonl:2: field '_id': missing",
        ),
        ("corpus.jsonl", '{"_id": "d0", "text": 3}\n', r"corpus\.jsonl:1: field 'text': expected a string, got int"),
        ("corpus.jsonl", '{"_id": "d0", "text": "x"}\n{"_id": "d0", "text": "y"}\n', r"corpus\.jsonl:2: field '_id': duplicate"),
        ("corpus.jsonl", '{"_id": "d0", "text": "x"\n', r"corpus\.jsonl:1: not valid JSON"),
        ("queries.jsonl", '{"_id": "q1"}\n', r"queries\.jsonl:1: field 'text': missing"),
        ("qrels/test.tsv", "query-id\tcorpus-id\tscore\nq1\td0\tmany\n", r"test\.tsv:2: field 'score': 'many' is not a number"),
        ("qrels/test.tsv", "q1\td0\n", r"test\.tsv:1: field 'score': missing"),
    ],
)
def test_beir_errors_name_file_line_and_field(tmp_path: Path, file: str, content: str, message: str) -> None:
    folder = _beir(tmp_path / "b", [{"_id": "d0", "text": "x"}], [{"_id": "q1", "text": "x y"}], "q1\td0\t1\n")
    (folder / file).write_text(content)
    with pytest.raises(RecordError, match=message):
        read_beir(folder)


def test_cli_global_scope_on_beir(beir_dir: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    code = main(["analyze", "--scope", "global", "--corpus", str(beir_dir), "--out", str(out), "--no-figures",
                 "--index-dir", str(tmp_path / "index")])  # fmt: skip
    assert code == 0
    table = pd.read_csv(out / "stabilization.csv")
    assert list(table["interaction_id"]) == ["q1", "q2"] and table["retrieved_gold"].all()
    summary = json.loads((out / "summary.json").read_text())
    assert summary["parameters"]["analysis"]["scope"] == "global"
    assert summary["parameters"]["analysis"]["gold"] == "labeled"
    # A second run reuses the saved index (same content key) and writes the same table.
    assert main(["analyze", "--scope", "global", "--corpus", str(beir_dir), "--out", str(tmp_path / "again"),
                 "--no-figures", "--index-dir", str(tmp_path / "index")]) == 0  # fmt: skip
    assert (tmp_path / "again" / "stabilization.csv").read_bytes() == (out / "stabilization.csv").read_bytes()
    capsys.readouterr()
    bad = tmp_path / "bad"
    assert main(["analyze", "--corpus", str(beir_dir), "--gold", "answer", "--scope", "global", "--out", str(bad)]) == 1
    assert "no answer strings" in capsys.readouterr().err
    assert main(["analyze", str(DEMO), "--corpus", str(beir_dir), "--out", str(bad)]) == 1


def test_cli_global_scope_on_a_crag_file(tmp_path: Path, demo_analysis: Path) -> None:
    out = tmp_path / "g"
    assert main(["analyze", str(DEMO), "--scope", "global", "--split", "all", "--out", str(out), "--no-figures"]) == 0
    table = pd.read_csv(out / "stabilization.csv")
    reference = pd.read_csv(demo_analysis / "stabilization.csv")  # the same questions, per-question scope
    assert list(table["interaction_id"]) == list(reference["interaction_id"])
    assert (table["n_passages"] == reference["n_passages"].sum()).all()  # every question ranks the whole pool


def test_global_scope_threads_give_the_same_rows(tmp_path: Path) -> None:
    # --jobs 2: a second thread ranks questions ahead (with the compiled kernel; without
    # numba the scorer holds the GIL and one thread ranks). The outputs are the same.
    outs = []
    for jobs in ("1", "2"):
        out = tmp_path / f"jobs{jobs}"
        assert main(["analyze", str(DEMO), "--scope", "global", "--split", "all", "--out", str(out), "--no-figures",
                     "--jobs", jobs]) == 0  # fmt: skip
        outs.append(out)
    for name in ("stabilization.csv", "prefixes.parquet"):
        assert (outs[0] / name).read_bytes() == (outs[1] / name).read_bytes()


def test_global_sim_questions_run_in_the_simulator() -> None:
    from streamrag.simulator.scenario import load_scenario
    from streamrag.simulator.simulate import simulate

    qs = questions_from_analyses(analyze_pool(_tiny_pool()), 3)
    questions = qs.questions
    assert qs.n_skipped == 0 and questions[0].gold_hit is not None and questions[0].gold_hit.all()
    run = simulate(questions, load_scenario("paper_rq3", ["select.population='all'"]))
    assert len(run.rows) == 1


def test_cli_simulate_global_scope(beir_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "sim"
    code = main(["simulate", str(beir_dir), "--scenario", "paper_rq3", "--set", "data.scope='global'",
                 "--set", "select.population='all'", "--out", str(out)])  # fmt: skip
    assert code == 0
    results = pd.read_csv(out / "results.csv")
    assert list(results["interaction_id"]) == ["q1", "q2"]
    assert (out / "trace.jsonl").exists()


@pytest.fixture(scope="module")
def crag_pool(crag_dir: Path) -> PoolSource:
    from streamrag.data.pools.crag_pages import load_crag_pool

    return load_crag_pool(crag_dir)


def test_real_crag_pool(crag_pool: PoolSource) -> None:
    pool, questions = crag_pool.pool, crag_pool.questions
    assert (pool.n_docs, len(questions)) == (379, 2709)  # 10 + 250 + 119 documents; 2,706 v4 + 3 sample-only
    assert sum(1 for q in questions if q.own_docs) == 73  # 10 sample + 15 audio + 50 finance − 2 shared
    assert sum(1 for q in questions if q.labeled_docs) == 64
    # Chunk counts of two sample records, pinned by the per-question parity tests.
    assert pool.chunk_ids(["sample/55b219e5-ba31-4318-a73d-551f0fb9c546"]).shape[0] == 110
    assert pool.chunk_ids(["sample/db078969-dcfd-4bd3-8d07-ee8ceceebafd"]).shape[0] == 80
    fin = next(q for q in questions if q.interaction_id.startswith("161a89f3"))
    assert "Oracle" in fin.record.alt_ans and "finance/206114bd" in fin.labeled_docs


def test_real_pool_per_question_and_global(crag_pool: PoolSource) -> None:
    covered = PoolSource(crag_pool.pool, [q for q in crag_pool.questions if q.own_docs][:12], "covered")
    per_q = [a.row for a in analyze_pool_per_question(covered)]
    glob = [a.row for a in analyze_pool(covered, gold="own")]
    assert [r["interaction_id"] for r in per_q] == [r["interaction_id"] for r in glob]
    assert all(r["n_passages"] == crag_pool.pool.n_chunks for r in glob)
    assert all(np.isfinite(r["phi_sc"]) for r in glob)


def test_global_equals_per_question_on_real_sample_pages(crag_pool: PoolSource) -> None:
    from streamrag.retrieval import BM25Index, prefix_rankings
    from streamrag.retrieval.global_pool.scorer import global_prefix_rankings

    pool = crag_pool.pool
    sample = [q for q in crag_pool.questions if any(d.startswith("sample/") for d in q.own_docs)]
    for q in sample[:5]:
        chunks = [pool.chunks[i] for i in pool.chunk_ids([f"sample/{q.interaction_id}"]).tolist()]
        per_question = prefix_rankings(BM25Index.build(chunks), q.record.query, k=5)
        glob = global_prefix_rankings(GlobalIndex.build(chunks), q.record.query, k=5)
        np.testing.assert_array_equal(glob.topk, per_question.topk)


def test_crag_pool_missing_file_is_named(tmp_path: Path) -> None:
    from streamrag.base.errors import DataFileError
    from streamrag.data.pools.crag_pages import load_crag_pool

    with pytest.raises(DataFileError, match=r"dev_data\.jsonl\.bz2: no such file"):
        load_crag_pool(tmp_path)


def _demo_pool() -> PoolSource:
    from streamrag.analysis.entry import open_source
    from streamrag.data.selection import Selection

    return open_source(DEMO, selection=Selection(split=None))


def test_dense_global_scope_ranks_by_exact_cosine_over_the_pool() -> None:
    from streamrag.analysis.stabilize import AnalysisSettings
    from streamrag.retrieval import HashingEmbedder
    from streamrag.retrieval.dense.retriever import cosine_scores, embed_corpus, to_grid
    from streamrag.retrieval.ranking import full_ranking

    source = _demo_pool()
    embedder = HashingEmbedder(dim=64)
    settings = AnalysisSettings(retriever="dense")
    analyses = list(analyze_pool(source, settings, env=RetrieverEnv(embedder=embedder)))
    corpus = embed_corpus(source.pool.chunks, embedder)
    for analysis in analyses[:5]:
        query = next(q.record.query for q in source.questions if q.record.interaction_id == analysis.row["interaction_id"])
        words = query.split()
        grid = to_grid(embedder.embed([" ".join(words[:t]) for t in range(1, len(words) + 1)]))
        scores = cosine_scores(grid, corpus)  # from scratch: every prefix against every chunk
        expected = np.stack([full_ranking(row)[:5] for row in scores])
        assert np.array_equal(analysis.rankings.topk, expected)
        top = int(analysis.rankings.topk[-1, 0])
        assert analysis.rankings.final_scores[top] == scores[-1, top]
        assert analysis.row["n_passages"] == source.pool.n_chunks


def test_dense_global_scope_through_the_cli_and_the_simulator(tmp_path: Path) -> None:
    from streamrag.analysis.stabilize import AnalysisSettings
    from streamrag.retrieval import HashingEmbedder
    from streamrag.simulator.scenario import load_scenario
    from streamrag.simulator.simulate import simulate

    env = RetrieverEnv(embedder=HashingEmbedder(dim=64))
    qs = questions_from_analyses(analyze_pool(_demo_pool(), AnalysisSettings(retriever="dense"), env=env), 3)
    questions = qs.questions
    assert qs.n_skipped == 0 and {q.scale for q in questions} == {"cosine"}
    run = simulate(questions, load_scenario("paper_rq3", ["select.population='all'"]))
    assert len(run.rows) == len(questions)


def test_a_repeated_question_in_the_crag_pool_folder_is_one_line(crag_dir: Path, tmp_path: Path) -> None:
    from streamrag.base.errors import RecordError
    from streamrag.data.pools.crag_pages import load_crag_pool

    folder = tmp_path / "crag"
    folder.mkdir()
    for item in crag_dir.iterdir():  # the real files, linked, not copied
        if item.name != "crag_v4_questions.jsonl":
            (folder / item.name).symlink_to(item)
    lines = (crag_dir / "crag_v4_questions.jsonl").read_text(encoding="utf-8").splitlines()[:3]
    (folder / "crag_v4_questions.jsonl").write_text("\n".join([*lines, lines[1]]) + "\n", encoding="utf-8")
    with pytest.raises(
        RecordError, match=r"crag_v4_questions.jsonl:4: field 'interaction_id': .* repeats an earlier line \(first on line 2\)"
    ):
        load_crag_pool(folder)
