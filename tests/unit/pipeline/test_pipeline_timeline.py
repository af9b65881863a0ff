"""Exact virtual timelines, computed by hand (no tolerances)."""

from __future__ import annotations

import pytest
from _simhelpers import OLD_RULES, compact, const_scenario, full_q, replay, table_q

from streamrag.simulator.results import derive_result


def _row(events, q, rs):
    return derive_result(events, n_words=q.n_words, t_star=q.t_star, L_ms=rs.L_ms, G_ms=rs.G_ms, delta_wps=rs.delta_wps)


def test_interval_trigger_speculative_hit_timeline_calls_first():
    # δ = 2 w/s, n = 6, interval every 3 words, G = 100 ms, L = 300 ms, F = 500 ms;
    # trace-driven with t* = t_suf = 2, heuristic reflector (sufficient iff t ≥ 2);
    # turn_end_order = calls_first: the call fired on the last word starts before the
    # reflector looks.
    #
    # words at 0.5, 1.0, 1.5, 2.0, 2.5, 3.0 s; E = 3.0 s
    # call 1 on prefix 3: fired 1.5, G until 1.6, L until 1.9 → result (t = 3 ≥ 2)
    # call 2 on prefix 6: fired 3.0 (word 6 arrives first, then the trigger fires)
    # end of turn 3.0: the baseline's wake-up was registered first (seq), so it fires
    #   first; then the reflector: call 1 finished and sufficient → decision, call 2
    #   cancelled, response F 3.0 → 3.5
    # baseline: 3.0 → G 3.1 → L 3.4 → F 3.9
    # saved = (3.9 − 3.0) − (3.5 − 3.0) = 0.4 s = G + L
    q = table_q("q1", n=6, t_sc=5, t_suf=2)
    rs = const_scenario(
        delta=2, G=100, L=300, F=500, trigger={"kind": "interval", "words": 3}, extra=["pipeline.turn_end_order=calls_first"]
    )
    events = replay(q, rs)
    assert compact(events) == [
        (500_000, "word", 1),
        (1_000_000, "word", 2),
        (1_500_000, "word", 3),
        (1_500_000, "fire", "streaming", 1, 3, "trigger"),
        (1_500_000, "thread_start", "streaming", 1),
        (1_600_000, "gen_done", "streaming", 1),
        (1_900_000, "tool_done", "streaming", 1, 3, None),
        (2_000_000, "word", 4),
        (2_500_000, "word", 5),
        (3_000_000, "word", 6),
        (3_000_000, "input_end", 6),
        (3_000_000, "fire", "streaming", 2, 6, "trigger"),
        (3_000_000, "thread_start", "streaming", 2),
        (3_000_000, "fire", "baseline", 1, 6, "baseline"),
        (3_000_000, "thread_start", "baseline", 1),
        (3_000_000, "reflect", (1,), (2,)),
        (3_000_000, "check", 1, 3, True, None, None),
        (3_000_000, "decision", "speculative", 1, 3),
        (3_000_000, "cancel", "streaming", 2, "reflector"),
        (3_000_000, "respond", "streaming", 1, 3),
        (3_100_000, "gen_done", "baseline", 1),
        (3_400_000, "tool_done", "baseline", 1, 6, None),
        (3_400_000, "respond", "baseline", 1, 6),
        (3_500_000, "answer_ready", "streaming"),
        (3_900_000, "answer_ready", "baseline"),
    ]
    row = _row(events, q, rs)
    assert (row.baseline_ms, row.streaming_ms, row.saved_ms) == (900.0, 500.0, 400.0)
    assert (row.calls_fired, row.calls_used, row.wasted_calls, row.cancelled_calls) == (2, 1, 1, 1)
    assert not row.misfire
    assert row.used_prefix_t == 3
    # LLM: G of call 1 (100) + call 2 cancelled at once (0) + F (500); tool: call 1's 300
    assert (row.llm_busy_ms, row.tool_busy_ms) == (600.0, 300.0)
    # H = min(L, (6 − 2)/2 s) = 300; H_G = min(G + L, 2000) = 400
    assert (row.H_ms, row.H_G_ms) == (300.0, 400.0)


def test_the_reflector_looks_before_the_last_words_call_starts_and_it_is_not_counted():
    # The same question under the anchor's order (rule e): the call fired on word 6 at
    # E = 3.0 does not start before the reflector's first look; call 1 is sufficient, so
    # call 2 is cancelled unstarted: fired once, nothing cancelled in flight, no G spent.
    q = table_q("q1", n=6, t_sc=5, t_suf=2)
    rs = const_scenario(delta=2, G=100, L=300, F=500, trigger={"kind": "interval", "words": 3})
    events = replay(q, rs)
    assert compact(events)[9:] == [
        (3_000_000, "word", 6),
        (3_000_000, "input_end", 6),
        (3_000_000, "fire", "streaming", 2, 6, "trigger"),
        (3_000_000, "fire", "baseline", 1, 6, "baseline"),
        (3_000_000, "thread_start", "baseline", 1),
        (3_000_000, "reflect", (1,), (2,)),
        (3_000_000, "check", 1, 3, True, None, None),
        (3_000_000, "decision", "speculative", 1, 3),
        (3_000_000, "cancel", "streaming", 2, "unstarted"),
        (3_000_000, "respond", "streaming", 1, 3),
        (3_100_000, "gen_done", "baseline", 1),
        (3_400_000, "tool_done", "baseline", 1, 6, None),
        (3_400_000, "respond", "baseline", 1, 6),
        (3_500_000, "answer_ready", "streaming"),
        (3_900_000, "answer_ready", "baseline"),
    ]
    row = _row(events, q, rs)
    assert (row.saved_ms, row.calls_fired, row.wasted_calls, row.cancelled_calls) == (400.0, 1, 0, 0)
    assert (row.llm_busy_ms, row.tool_busy_ms) == (600.0, 300.0)
    # When the reflector must wait, the held call starts at E and counts.
    q = table_q("q1b", n=6, t_sc=6, t_suf=None)  # t* = 6: only the last call is sufficient
    events = replay(q, rs)
    assert compact(events)[14:18] == [
        (3_000_000, "reflect", (1,), (2,)),
        (3_000_000, "check", 1, 3, False, None, None),
        (3_000_000, "thread_start", "streaming", 2),
        (3_100_000, "gen_done", "baseline", 1),
    ]
    row = _row(events, q, rs)
    assert (row.calls_fired, row.streaming_ms, row.saved_ms) == (2, 900.0, 0.0)


def test_reflector_waits_then_misfires_timeline():
    # δ = 2, n = 7, interval 3 words, G = 100, L = 600, F = 500; t* = 7 (t_sc = 7,
    # not retrieved-gold): no speculative result can be sufficient.
    #
    # call 1 (prefix 3): 1.5 → 1.6 → 2.2;  call 2 (prefix 6): 3.0 → 3.1 → 3.7
    # E = 3.5 (word 7); baseline 3.5 → 3.6 → 4.2 → answer 4.7
    # reflector at 3.5: call 1 insufficient; waits for call 2 (3.7): insufficient;
    # mis-fire: fires on the full query at 3.7 → 3.8 → 4.4 → answer 4.9
    # saved = 1200 − 1400 = −200 ms: exactly the waiting for call 2
    q = table_q("q2", n=7, t_sc=7, t_suf=None)
    rs = const_scenario(delta=2, G=100, L=600, F=500)
    events = replay(q, rs)
    assert compact(events) == [
        (500_000, "word", 1),
        (1_000_000, "word", 2),
        (1_500_000, "word", 3),
        (1_500_000, "fire", "streaming", 1, 3, "trigger"),
        (1_500_000, "thread_start", "streaming", 1),
        (1_600_000, "gen_done", "streaming", 1),
        (2_000_000, "word", 4),
        (2_200_000, "tool_done", "streaming", 1, 3, None),
        (2_500_000, "word", 5),
        (3_000_000, "word", 6),
        (3_000_000, "fire", "streaming", 2, 6, "trigger"),
        (3_000_000, "thread_start", "streaming", 2),
        (3_100_000, "gen_done", "streaming", 2),
        (3_500_000, "word", 7),
        (3_500_000, "input_end", 7),
        (3_500_000, "fire", "baseline", 1, 7, "baseline"),
        (3_500_000, "thread_start", "baseline", 1),
        (3_500_000, "reflect", (1,), (2,)),
        (3_500_000, "check", 1, 3, False, None, None),
        (3_600_000, "gen_done", "baseline", 1),
        (3_700_000, "tool_done", "streaming", 2, 6, None),
        (3_700_000, "check", 2, 6, False, None, None),
        (3_700_000, "decision", "fallback", None, 7),
        (3_700_000, "fire", "streaming", 3, 7, "reflector"),
        (3_700_000, "thread_start", "streaming", 3),
        (3_800_000, "gen_done", "streaming", 3),
        (4_200_000, "tool_done", "baseline", 1, 7, None),
        (4_200_000, "respond", "baseline", 1, 7),
        (4_400_000, "tool_done", "streaming", 3, 7, None),
        (4_400_000, "respond", "streaming", 3, 7),
        (4_700_000, "answer_ready", "baseline"),
        (4_900_000, "answer_ready", "streaming"),
    ]
    row = _row(events, q, rs)
    assert (row.baseline_ms, row.streaming_ms, row.saved_ms) == (1200.0, 1400.0, -200.0)
    assert row.misfire and row.calls_fired == 3 and row.wasted_calls == 2 and row.used_prefix_t == 7


def _streaming_timeline(events, until_us):
    return [
        (e["t_us"], e["kind"])
        for e in events
        if e["kind"] in ("word", "fire", "tool_done", "skip")
        and e.get("arm", "streaming") == "streaming"
        and e["t_us"] <= until_us
    ]


def test_a_completion_at_the_instant_of_a_word_frees_its_slot_for_that_word_at_completion():
    # every_word, cap 1, δ = 1, G = 0, L = 1000: call 1 (prefix 1) finishes at 2.0 s,
    # exactly when word 2 arrives. ``at_completion`` (the engine's order: completions
    # before words): the slot is free and prefix 2 fires at 2.0 (no skip). Word 3 at 3.0 likewise.
    q = table_q("q3", n=3, t_sc=3)
    rs = const_scenario(
        delta=1, G=0, L=1000, F=0, trigger={"kind": "every_word"}, max_threads=1, extra=["pipeline.slot_release=at_completion"]
    )
    assert _streaming_timeline(replay(q, rs), 3_000_000) == [
        (1_000_000, "word"),
        (1_000_000, "fire"),
        (2_000_000, "tool_done"),
        (2_000_000, "word"),
        (2_000_000, "fire"),
        (3_000_000, "tool_done"),
        (3_000_000, "word"),
        (3_000_000, "fire"),
    ]


def test_a_completion_at_the_instant_of_a_word_holds_its_slot_for_that_word_after_words():
    # The same question under the anchor's rule (``after_words``, the default and the
    # paper preset): call 1 still holds the slot when word 2 arrives at 2.0 s, so prefix 2
    # is deferred; word 3 at 3.0 finds the slot free (freed at 2.0, before 3.0) and fires.
    q = table_q("q3", n=3, t_sc=3)
    rs = const_scenario(delta=1, G=0, L=1000, F=0, trigger={"kind": "every_word"}, max_threads=1)
    assert rs.scenario.pipeline.slot_release == "after_words"
    assert _streaming_timeline(replay(q, rs), 3_000_000) == [
        (1_000_000, "word"),
        (1_000_000, "fire"),
        (2_000_000, "tool_done"),
        (2_000_000, "word"),
        (2_000_000, "skip"),
        (3_000_000, "word"),
        (3_000_000, "fire"),
    ]


@pytest.mark.parametrize(("rule", "reason"), [("defer", "deferred"), ("drop", "cap")])
def test_thread_cap_holds_back_opportunities(rule, reason):
    # every_word with cap 2, δ = 4 (0.25 s per word), G = 100, L = 900: each call takes
    # 1 s, so after two fires the next two words meet a full cap until call 1 finishes.
    # words 0.25 0.5 0.75 1.0 1.25 …; call 1 done 1.25 (same instant as word 5: seen
    # first under ``at_completion``)
    q = table_q("q4", n=6, t_sc=6)
    extra = [f"pipeline.capped_fire={rule}", "pipeline.slot_release=at_completion"]
    rs = const_scenario(delta=4, G=100, L=900, F=100, trigger={"kind": "every_word"}, max_threads=2, extra=extra)
    events = replay(q, rs)
    fires = [(e["t_us"], e["prefix_t"]) for e in events if e["kind"] == "fire" and e["arm"] == "streaming"]
    skips = [(e["t_us"], e["prefix_t"], e["reason"]) for e in events if e["kind"] == "skip"]
    assert fires[:4] == [(250_000, 1), (500_000, 2), (1_250_000, 5), (1_500_000, 6)]
    assert skips == [(750_000, 3, reason), (1_000_000, 4, reason)]
    row = _row(events, q, rs)
    assert row.skipped_fires == 2


def test_a_capped_interval_fire_is_deferred_and_the_interval_counts_from_the_actual_fire():
    # interval 3 words, cap 1, δ = 2, G = 100, L = 1900: call on prefix 3 fired at 1.5 s
    # runs until 3.5 s. Word 6 (3.0 s) meets the full cap.
    # defer (the anchor's), at_completion: word 7 at 3.5 s sees the completion first (same
    #   instant) and fires prefix 7; the interval counts from 7, so the next fire is prefix 10.
    # defer, after_words (the anchor's tie order): word 7 still sees call 1 in flight, the
    #   fire waits for word 8 (4.0 s); counting from 8, prefix 11 is due at 5.5 s, but
    #   call 2 runs until 6.0 s and 11 is the last word: no third fire.
    # drop: the opportunity at 6 is lost and the interval restarts at 6: next is prefix 9.
    q = table_q("q9", n=11, t_sc=11)
    fires = {}
    for rule, release in (("defer", "at_completion"), ("defer", "after_words"), ("drop", "at_completion")):
        rs = const_scenario(
            delta=2,
            G=100,
            L=1900,
            F=100,
            max_threads=1,
            extra=[f"pipeline.capped_fire={rule}", "pipeline.turn_end_order=calls_first", f"pipeline.slot_release={release}"],
        )
        events = replay(q, rs)
        fires[rule, release] = [(e["t_us"], e["prefix_t"]) for e in events if e["kind"] == "fire" and e["by"] == "trigger"]
    assert fires["defer", "at_completion"] == [(1_500_000, 3), (3_500_000, 7), (5_500_000, 11)]
    assert fires["defer", "after_words"] == [(1_500_000, 3), (4_000_000, 8)]
    assert fires["drop", "at_completion"] == [(1_500_000, 3), (4_500_000, 9)]


def test_replace_trigger_kills_the_in_flight_call():
    # replace every 0.5 s, δ = 2: ticks at 0.5, 1.0, 1.5, 2.0 see prefixes 1..4.
    # top-k sets: {0,1,2} for prefixes 1-2, {3,4,5} for 3-4. G = 100, L = 1200.
    # tick 0.5: fire prefix 1 (call 1: G until 0.6, L until 1.8);
    # tick 1.0: same top-k set → nothing;
    # tick 1.5: top-k changed → kill call 1 (still in its tool call), fire prefix 3;
    # tick 2.0: unchanged → nothing.
    topk = [[0, 1, 2], [1, 0, 2], [3, 4, 5], [5, 4, 3]]
    q = full_q("q5", topk, gold={3})
    rs = const_scenario(delta=2, G=100, L=1200, F=100, trigger={"kind": "replace", "seconds": 0.5}, reflector={"kind": "gold"})
    events = replay(q, rs)
    compact_ev = [c for c in compact(events) if c[1] in ("fire", "cancel") and c[2] == "streaming"]
    assert compact_ev == [
        (500_000, "fire", "streaming", 1, 1, "trigger"),
        (1_500_000, "cancel", "streaming", 1, "replaced"),
        (1_500_000, "fire", "streaming", 2, 3, "trigger"),
    ]
    # call 2 (prefix 3, holds gold 3) ends at 1.5 + 1.3 = 2.8 s; E = 2.0 → wait → F 0.1
    answer = next(e["t_us"] for e in events if e["kind"] == "answer_ready" and e["arm"] == "streaming")
    assert answer == 2_900_000
    row = _row(events, q, rs)
    assert row.cancelled_calls == 1 and not row.misfire
    # LLM: G of calls 1 and 2 (100 + 100) + F (100); tool: call 1 from 0.6 until killed
    # at 1.5 (900 ms) + call 2's full 1200 ms
    assert (row.llm_busy_ms, row.tool_busy_ms) == (300.0, 2100.0)


def test_end_of_turn_delay_and_check_cost():
    # topk_match with a 50 ms check, 200 ms end-of-turn delay, δ = 2, n = 4, every_word.
    # prefix top-k: {7,8,9} from prefix 2 on; full query top-k {7,8,9}.
    # words at 0.5 1.0 1.5 2.0 (E); end of turn 2.2; check until 2.25.
    # G = 100, L = 300: call 2 (prefix 2) done 1.4 → matches → answer 2.25 + F 0.5 = 2.75
    # baseline: 2.2 → 2.3 → 2.6 → 3.1. Perceived from E = 2.0: 1100 vs 750 → saved 350.
    topk = [[1, 2, 3], [9, 8, 7], [7, 9, 8], [7, 8, 9]]
    q = full_q("q6", topk)
    rs = const_scenario(
        delta=2, G=100, L=300, F=500, trigger={"kind": "every_word"},
        reflector={"kind": "topk_match", "check_ms": 50}, extra=["input.end_of_turn_ms=200"],
    )  # fmt: skip
    events = replay(q, rs)
    by_kind = {(e["kind"], e.get("arm")): e["t_us"] for e in events}
    assert by_kind[("reflect", None)] == 2_200_000
    assert by_kind[("decision", None)] == 2_250_000
    assert by_kind[("answer_ready", "streaming")] == 2_750_000
    assert by_kind[("answer_ready", "baseline")] == 3_100_000
    decision = next(e for e in events if e["kind"] == "decision")
    assert (decision["call"], decision["prefix_t"]) == (2, 2)  # earliest matching call
    row = _row(events, q, rs)
    assert (row.baseline_ms, row.streaming_ms, row.saved_ms) == (1100.0, 750.0, 350.0)


def test_seconds_interval_trigger_ticks_see_the_word_of_the_same_instant():
    # interval seconds = 1.0 with δ = 2: ticks at 1.0, 2.0, 3.0 coincide with words 2, 4, 6
    # (word first, then tick): prefixes 2, 4, 6 fire.
    q = table_q("q7", n=6, t_sc=6)
    rs = const_scenario(delta=2, trigger={"kind": "interval", "seconds": 1.0})
    events = replay(q, rs)
    fires = [(e["t_us"], e["prefix_t"]) for e in events if e["kind"] == "fire" and e["by"] == "trigger"]
    assert fires == [(1_000_000, 2), (2_000_000, 4), (3_000_000, 6)]


def test_heuristic_full_mode_rescoring_judging_the_newest_result():
    # top chunks per prefix: 0, 0, 5, 5, 5, 5. Full-query score/coverage: chunk 0 scores
    # 3.0 but covers 0.2 (insufficient); chunk 5 scores 2.5, covers 0.5 (sufficient).
    topk = [[0, 1, 2], [0, 1, 2], [5, 0, 1], [5, 0, 1], [5, 1, 0], [5, 1, 0]]
    q = full_q("q8", topk, scores={0: 3.0, 5: 2.5}, coverage={0: 0.2, 5: 0.5})
    rs = const_scenario(delta=2, G=100, L=300, F=500, trigger={"kind": "every_word"}, max_threads=None, extra=OLD_RULES)
    events = replay(q, rs)
    checks = [(e["call"], e["prefix_t"], e["sufficient"], e["score"], e["coverage"]) for e in events if e["kind"] == "check"]
    # at E = 3.0 calls 1-5 finished (prefix 5: 2.5 → 2.9), call 6 (prefix 6: 3.0 → 3.4)
    # in flight. The anchor judges only the best finished result: call 1 (chunk 0, the
    # highest score; ties keep completion order) fails on coverage, so the arm waits for
    # call 6, whose top chunk 5 is sufficient at 3.4 s. Calls 2-5 are never judged.
    assert checks == [(1, 1, False, 3.0, 0.2), (6, 6, True, 2.5, 0.5)]
    decision = next(e for e in events if e["kind"] == "decision")
    assert (decision["call"], decision["t_us"]) == (6, 3_400_000)
    assert [e["call"] for e in events if e["kind"] == "cancel"] == []


def test_heuristic_rejudges_the_best_of_all_completed_results_as_the_anchor_does():
    # The same question under the anchor's rule (b): after call 6 completes (3.4 s) the
    # reflector judges the best of *all* completed results, still call 1 (score 3.0 >
    # 2.5), already known insufficient — call 6, sufficient, is never the best. Nothing
    # left in flight: the full query is fired again (rule c) at 3.4 → 3.8, answer 4.3.
    topk = [[0, 1, 2], [0, 1, 2], [5, 0, 1], [5, 0, 1], [5, 1, 0], [5, 1, 0]]
    q = full_q("q8", topk, scores={0: 3.0, 5: 2.5}, coverage={0: 0.2, 5: 0.5})
    rs = const_scenario(delta=2, G=100, L=300, F=500, trigger={"kind": "every_word"}, max_threads=None)
    events = replay(q, rs)
    checks = [(e["call"], e["prefix_t"], e["sufficient"]) for e in events if e["kind"] == "check"]
    assert checks == [(1, 1, False)]  # each call is judged once; call 6 is never the best
    decision = next(e for e in events if e["kind"] == "decision")
    assert (decision["outcome"], decision["call"], decision["t_us"]) == ("fallback", None, 3_400_000)
    answer = next(e["t_us"] for e in events if e["kind"] == "answer_ready" and e["arm"] == "streaming")
    assert answer == 4_300_000
    row = _row(events, q, rs)
    # baseline 3.0 → 3.4 → 3.9: saved −400 ms = the refired G + L; the call on prefix 6
    # (the full query) had just returned, and is not reused (rule c)
    assert (row.saved_ms, row.misfire, row.calls_fired, row.used_prefix_t) == (-400.0, True, 7, 6)


@pytest.mark.parametrize(("fallback", "saved_ms", "fired"), [("refire", -400.0, 7), ("reuse", 0.0, 6)])
def test_fallback_refires_the_full_query_or_reuses_a_finished_call_on_it(fallback, saved_ms, fired):
    # No result is sufficient (all coverage 0.1); every_word: call 6 on the full query
    # (fired at E = 3.0, held, started after the first look) returns at 3.4.
    topk = [[0, 1, 2]] * 6
    q = full_q("q10", topk, scores={0: 9.0}, coverage={0: 0.1})
    rs = const_scenario(
        delta=2, G=100, L=300, F=500, trigger={"kind": "every_word"}, max_threads=None, extra=[f"reflector.fallback={fallback}"]
    )
    row = _row(replay(q, rs), q, rs)
    assert (row.saved_ms, row.calls_fired, row.misfire) == (saved_ms, fired, True)


def test_coverage_counts_distinct_tokens_or_occurrences():
    # A query with a repeated word: the top chunk holds 2 of its 4 distinct tokens (0.5)
    # but only 2 of its 6 occurrences (0.33 < 0.4): sufficient only for distinct coverage.
    topk = [[4, 1, 2]] * 3
    q = full_q("q11", topk, scores={4: 5.0}, coverage={4: 0.5}, occurrences={4: 2 / 6})
    verdicts = {}
    for rule in ("distinct", "occurrences"):
        rs = const_scenario(delta=2, trigger={"kind": "every_word"}, extra=[f"reflector.coverage={rule}"])
        checks = [e for e in replay(q, rs) if e["kind"] == "check"]
        verdicts[rule] = (checks[0]["sufficient"], checks[0]["coverage"])
    assert verdicts == {"distinct": (True, 0.5), "occurrences": (False, 2 / 6)}
