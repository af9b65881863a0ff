"""Benchmark: what the learned trigger costs per word heard on live input (no known question).

Each word a live turn hears, the ``learned`` trigger ranks the new prefix with the local
ranker (a BM25 tool over the corpus, as ``streamrag live`` judges with), computes the
prefix's features by the analyzer's rule and evaluates the model (:mod:`streamrag.simulator.heard`).
This times exactly that — ``LearnedTrigger.on_word(t)`` for every word of every demo
question, in order, on fresh turns — for the shipped model (t and the top-1 stability:
one ranking per word) and, when the ``ner`` extra is installed, a model that also reads
the entity columns, the margin and the prefix coverage (the tagger on each prefix too).
Reports the median, P90 and max per word in ms and the load average (a shared machine).

Usage: ``python benchmarks/bench_learned_live.py [--repeat 3]``; writes
``benchmarks/out/bench_learned_live.json``.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
from _common import load_average, save


def _per_word_ms(config: Any, queries: list[str], ranker: Any, repeat: int) -> list[float]:
    from streamrag.engine.clock import RealClock
    from streamrag.simulator.heard import online_trigger

    clock = RealClock()
    out = []
    for _ in range(repeat):
        for query in queries:
            words: list[str] = []
            trigger = online_trigger(config, words, ranker)
            for t, word in enumerate(query.split(), start=1):
                words.append(word)
                start = clock.now_us()
                trigger.on_word(t)
                out.append((clock.now_us() - start) / 1000)
    return out


def _stats(ms: list[float]) -> dict[str, float]:
    a = np.array(ms)
    return {"n_words": int(a.size), "median_ms": round(float(np.median(a)), 4),
            "p90_ms": round(float(np.percentile(a, 90)), 4), "max_ms": round(float(a.max()), 4)}  # fmt: skip


def main() -> None:
    from streamrag.analysis.studies.entity import ner_unavailable_reason
    from streamrag.data.crag import read_records
    from streamrag.data.demo import demo_path
    from streamrag.engine.clock import RealClock
    from streamrag.live.backends import BM25Tool
    from streamrag.pipeline.learned import LearnedTriggerConfig, LogRegParams, TriggerModel, save_model

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    queries = [r.query for r in read_records(demo_path())]
    ranker = BM25Tool.from_corpus("demo", RealClock())
    load = load_average()
    result: dict[str, Any] = {"questions": len(queries), "corpus_chunks": len(ranker.chunks), "repeat": args.repeat,
                              "load_avg_1min_before": load}  # fmt: skip
    shipped = LearnedTriggerConfig(model="frontier", tau=0.45)
    _per_word_ms(shipped, queries[:2], ranker, 1)  # warm up: imports, the model's first load
    result["shipped"] = _stats(_per_word_ms(shipped, queries, ranker, args.repeat))
    print(f"shipped model (t, top-1 stability): {result['shipped']}")
    if ner_unavailable_reason() is None:
        columns = ["t", "top1_stable_streak", "top1_changed", "named_entity_detected", "words_since_first_ne",
                   "top1_margin", "top1_coverage_prefix", "question_word_type=what"]  # fmt: skip
        m = len(columns)
        model = TriggerModel(kind="logreg", columns=columns, context="prefix",
                             logreg=LogRegParams(mean=[0.0] * m, scale=[1.0] * m, coef=[0.1] * m, intercept=-1.0))  # fmt: skip
        with tempfile.TemporaryDirectory() as d:
            path = save_model(model, Path(d) / "m.json")
            config = LearnedTriggerConfig(model=str(path), tau=0.5)
            _per_word_ms(config, queries[:2], ranker, 1)  # warm up: the tagger's first load
            result["all_groups"] = _stats(_per_word_ms(config, queries, ranker, args.repeat))
        print(f"every feature group (tagger, margin, coverage): {result['all_groups']}")
    else:
        result["all_groups"] = f"skipped: {ner_unavailable_reason()}"
    result["load_avg_1min_after"] = load_average()
    print(f"wrote {save('bench_learned_live', result)}")


if __name__ == "__main__":
    main()
