"""The streamed table replay (issue 28): the table read row by row, its evidence batch by
batch, the outputs written as questions are replayed — the same bytes as the run held in
memory, whatever the batch size, row groups, order of the evidence, selection or jobs."""

from __future__ import annotations

import json
import subprocess
import sys

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from streamrag.analysis.evidence import prefixes as evidence
from streamrag.analysis.evidence import read as evidence_read
from streamrag.analysis.evidence.prefixes import evidence_path_for
from streamrag.analysis.evidence.read import EvidenceCursor, iter_evidence, read_evidence
from streamrag.base.errors import EmptySelectionError, InputError
from streamrag.cli import main
from streamrag.simulator import table_run
from streamrag.simulator.question_select import select
from streamrag.simulator.questions import questions_from_table
from streamrag.simulator.run_output import write_run
from streamrag.simulator.scenario import load_scenario
from streamrag.simulator.simulate import simulate
from streamrag.simulator.table_run import simulate_table

OUTPUTS = ("trace.jsonl", "results.csv", "summary.json")


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    out = tmp_path_factory.mktemp("gen") / "g.csv"
    assert main(["-q", "generate", str(out), "--questions", "300", "--seed", "3", "--table"]) == 0
    return out


def _in_memory(table, rs, out, *, ids=None, engine=False, jobs=1):
    sel = rs.scenario.selection(ids)
    qs = select(questions_from_table(table), population=sel.population, limit=sel.limit, ids=ids)
    run = simulate(qs, rs, engine=engine, jobs=jobs)
    write_run(out, run, rs, manifest=b"{}\n", counts=qs.counts)
    return {name: (out / name).read_bytes() for name in OUTPUTS}


def _streamed(table, rs, out, **kwargs):
    simulate_table(table, rs, out, manifest=lambda *_: b"{}\n", **kwargs)
    return {name: (out / name).read_bytes() for name in OUTPUTS}


def test_the_evidence_writer_bounds_its_row_groups_and_the_reader_streams_them(table, tmp_path, monkeypatch) -> None:
    whole = read_evidence(evidence_path_for(table))
    monkeypatch.setattr(evidence, "ROW_GROUP_ROWS", 1000)
    path = evidence.write_evidence(evidence.evidence_frame(whole.items()), tmp_path / "e.parquet")
    meta = pq.ParquetFile(path).metadata
    n_rows = sum(ev.n_words for ev in whole.values())
    assert meta.num_row_groups == -(-n_rows // 1000) > 1
    assert max(meta.row_group(i).num_rows for i in range(meta.num_row_groups)) == 1000
    # Batches smaller than a question and of odd sizes: questions split between batches are carried over.
    for batch in (1, 7, 1000):
        streamed = list(iter_evidence(path, batch_rows=batch))
        assert [qid for qid, _ in streamed] == list(whole)
        for qid, ev in streamed:
            assert (ev.top_ids == whole[qid].top_ids).all() and (ev.top1_score == whole[qid].top1_score).all()
            assert (ev.gold_rank == whole[qid].gold_rank).all() and ev.n_words == whole[qid].n_words


def test_streaming_the_evidence_imports_neither_pandas_nor_pyarrow_compute(table) -> None:
    # Either import costs about as much as reading the evidence of 1,371 questions
    # (benchmarks/bench_simulate.py); batches of 7 rows carry questions over, so the
    # reader meets tables of several chunks.
    code = (
        "import sys; from streamrag.analysis.evidence.read import iter_evidence; "
        f"n = sum(1 for _ in iter_evidence({str(evidence_path_for(table))!r}, batch_rows=7)); "
        "print(n, sorted(m for m in ('pandas', 'pyarrow.compute') if m in sys.modules))"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.split(maxsplit=1)
    assert out == ["300", "[]\n"]


def test_an_evidence_file_of_one_row_group_still_reads(table, tmp_path) -> None:
    old = tmp_path / "old.prefixes.parquet"
    pq.write_table(pq.read_table(evidence_path_for(table)), old, row_group_size=1 << 20)
    assert pq.ParquetFile(old).metadata.num_row_groups == 1
    assert [q for q, _ in iter_evidence(old)] == list(read_evidence(evidence_path_for(table)))


def test_the_cursor_reads_ahead_only_as_far_as_asked() -> None:
    read: list[str] = []

    def questions():
        for qid in "abcd":
            read.append(qid)
            yield qid, qid.upper()

    cursor = EvidenceCursor(questions())  # type: ignore[arg-type]
    assert cursor.get("a") == "A" and read == ["a"]
    assert cursor.get("c") == "C" and read == ["a", "b", "c"]
    assert cursor.get("b") == "B" and read == ["a", "b", "c"]  # waited in memory
    assert cursor.get("x") is None and read == list("abcd")


def test_non_contiguous_prefixes_are_refused_as_before(table, tmp_path) -> None:
    t = pq.read_table(evidence_path_for(table))
    first = t.slice(0, 3)
    bad = tmp_path / "bad.parquet"
    pq.write_table(pa.concat_tables([t, first]).replace_schema_metadata(t.schema.metadata), bad)
    qid = first.column("interaction_id")[0].as_py()
    with pytest.raises(Exception, match=f"the prefixes of question {qid!r} are not contiguous"):
        read_evidence(bad)


@pytest.mark.parametrize(
    ("overrides", "ids", "engine", "jobs"),
    [
        (["select.population=all"], None, False, 1),
        ([], None, False, 1),  # retrieved-gold only: the others are skipped rows
        (["select.population=all", "select.limit=40"], None, True, 1),
        (["select.population=all"], "ids", False, 2),
        ([], None, True, 2),
    ],
)
def test_the_streamed_replay_writes_the_bytes_of_the_run_in_memory(table, tmp_path, monkeypatch, overrides, ids, engine, jobs):
    monkeypatch.setattr(table_run, "BLOCK", 7)  # blocks end inside the selection, not at its end
    monkeypatch.setattr(evidence_read, "BATCH_ROWS", 50)
    rs = load_scenario("paper_rq3", overrides)
    chosen = None
    if ids:
        entries = questions_from_table(table).entries
        chosen = [e.interaction_id for e in entries[::3]]
    expected = _in_memory(table, rs, tmp_path / "memory", ids=chosen, engine=engine, jobs=jobs)
    got = _streamed(table, rs, tmp_path / "stream", ids=chosen, engine=engine, jobs=jobs)
    assert got == expected
    summary = json.loads(got["summary.json"])
    assert summary["replay"] == ("engine" if engine else "closed_form")


def test_a_table_whose_evidence_is_in_another_order_replays_the_same(table, tmp_path) -> None:
    t = pq.read_table(evidence_path_for(table))
    reversed_ev = tmp_path / "rev.parquet"
    ids = t.column("interaction_id").to_pylist()
    order = sorted(range(len(ids)), key=lambda i: (ids[i][::-1], i))  # questions reordered, prefixes in order
    pq.write_table(t.take(order).replace_schema_metadata(t.schema.metadata), reversed_ev)
    rs = load_scenario("paper_rq3", ["select.population=all"])
    expected = _streamed(table, rs, tmp_path / "a")
    assert _streamed(table, rs, tmp_path / "b", evidence=reversed_ev) == expected


def test_a_selection_error_at_the_end_of_the_stream_leaves_nothing(table, tmp_path) -> None:
    rs = load_scenario("paper_rq3", [])
    out = tmp_path / "run"
    with pytest.raises(InputError, match=r"--ids: question 'nope' not in \S*\.csv"):
        simulate_table(table, rs, out, manifest=lambda *_: b"{}\n", ids=["nope"])
    assert not out.exists()
    gold = next(q.interaction_id for q in questions_from_table(table).questions if q.retrieved_gold)
    rs = load_scenario("paper_rq3", ["select.population=fallback"])
    with pytest.raises(EmptySelectionError, match="no question to simulate"):
        simulate_table(table, rs, out, manifest=lambda *_: b"{}\n", ids=[gold])
    assert not out.exists()


def test_a_bad_row_at_the_end_of_the_table_leaves_the_earlier_run_as_it_was(table, tmp_path, capsys) -> None:
    argv = ["-q", "simulate", "--scenario", "paper_rq3", "--set", "select.population=all", "--out", str(tmp_path / "run")]
    assert main([*argv, "--table", str(table)]) == 0
    before = {p.name: p.read_bytes() for p in (tmp_path / "run").iterdir()}
    bad = tmp_path / "bad.csv"
    lines = table.read_text(encoding="utf-8").splitlines(keepends=True)
    bad.write_text("".join(lines) + lines[-1].replace(lines[-1].split(",")[0], "late", 1).replace(",", ",x,", 1), "utf-8")
    assert main([*argv, "--table", str(bad), "--evidence", str(evidence_path_for(table)), "--force"]) != 0
    err = capsys.readouterr().err
    assert f"{bad}:{len(lines) + 1}: expected" in err
    assert {p.name: p.read_bytes() for p in (tmp_path / "run").iterdir()} == before
