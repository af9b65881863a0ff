"""``reflector.threshold = "calibrated"``: the heuristic reflector judges with the threshold
the rule sets from the run's sample; without a sample it is refused in one line."""

from __future__ import annotations

import numpy as np
import pytest

from streamrag.base.errors import ConfigError
from streamrag.base.threshold import ScoreSample, calibrate
from streamrag.pipeline.question import SimQuestion
from streamrag.pipeline.reflectors import EvidenceArrays, HeuristicReflectorConfig, reflector_model

SAMPLE = ScoreSample.of([0.9, 0.1, 0.7, 0.3, 0.5], [5.0, 3.0, 2.0, 1.9, 0.5])  # c = 3 → τ = 0.5


def _question(scores: list[float], sample: ScoreSample | None, scale: str = "cosine") -> SimQuestion:
    n = len(scores)
    return SimQuestion(
        "q", n, n, None, topk=np.zeros((n, 1), dtype=np.int32), top_score=np.array(scores),
        coverage_distinct=np.ones(n), coverage_occurrences=np.ones(n), gold_hit=np.zeros(n, dtype=bool),
        scale=scale, threshold_sample=sample,  # type: ignore[arg-type]
    )  # fmt: skip


def test_the_calibrated_threshold_judges_and_the_fixed_one_is_unchanged() -> None:
    q = _question([0.45, 0.5, 0.6], SAMPLE)
    calibrated = HeuristicReflectorConfig(threshold="calibrated").build(q)
    assert calibrated.score_threshold == 0.5  # type: ignore[attr-defined]
    assert [calibrated.judge(t).sufficient for t in (1, 2, 3)] == [False, True, True]
    fixed = HeuristicReflectorConfig().build(q)  # cosine scale: the anchor's 0.4
    assert fixed.score_threshold == 0.4 and all(fixed.judge(t).sufficient for t in (1, 2, 3))  # type: ignore[attr-defined]
    # score_threshold is the reference the rule reads: 3.5 accepts c = 1 of BM25's, so τ = 0.9
    assert HeuristicReflectorConfig(threshold="calibrated", score_threshold=3.5).build(q).score_threshold == 0.9  # type: ignore[attr-defined]


def test_outputs_name_the_calibrated_threshold() -> None:
    config = HeuristicReflectorConfig(threshold="calibrated")
    expected = calibrate(SAMPLE, 2.0)
    assert expected is not None
    assert reflector_model(config, evidence_source="per-prefix evidence", sample=SAMPLE) == (
        f"heuristic on per-prefix evidence, {expected.describe()}"
    )
    assert reflector_model(HeuristicReflectorConfig(), evidence_source="per-prefix evidence", sample=SAMPLE) == (
        "heuristic on per-prefix evidence"
    )


def test_without_a_sample_it_is_refused_in_one_line() -> None:
    config = HeuristicReflectorConfig(threshold="calibrated")
    with pytest.raises(ConfigError, match=r"^reflector\.threshold: 'calibrated' is set from an analysis") as caught:
        config.build(_question([1.0], None))
    assert "\n" not in str(caught.value)
    with pytest.raises(ConfigError, match=r"reflector\.threshold"):  # a live run judges real results: no sample
        config.on(EvidenceArrays(np.array([1.0]), np.array([1.0])))
    with pytest.raises(ConfigError, match=r"reflector\.threshold"):
        config.build(_question([1.0], ScoreSample.of([], [])))
