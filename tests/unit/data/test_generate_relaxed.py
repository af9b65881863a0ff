"""The generator's relaxed-grounding answers (``relaxed_share``): exact and relaxed grounding differ on them."""

from __future__ import annotations

import numpy as np

from streamrag.data.chunking import chunk_pages
from streamrag.data.crag import CragRecord
from streamrag.data.generated._questions import relaxed_form
from streamrag.data.generated.records import GeneratorSettings, generate_record
from streamrag.data.grounding import chunk_is_gold, gold_chunks, normalize


def test_relaxed_form_needs_the_relaxed_rule() -> None:
    rng = np.random.default_rng(0)
    for answer in ("universal pictures", "the lord of the rings", "march 5, 2001", "$12.3 billion", "alpha beta gamma"):
        form = relaxed_form(rng, answer)
        assert form is not None
        candidate = normalize(answer)
        assert not chunk_is_gold(f"x {form} y", [candidate], "exact"), (answer, form)
        assert chunk_is_gold(f"x {form} y", [candidate], "relaxed"), (answer, form)
    for answer in ("yes", "437", "of the", "new new"):
        assert relaxed_form(rng, answer) is None


def test_relaxed_share_changes_only_the_planted_answer() -> None:
    base = GeneratorSettings(n_questions=60, page_words=60)
    relaxed = base.model_copy(update={"relaxed_share": 1.0})
    n_differ = 0
    for i in range(60):
        a, b = generate_record(base, i), generate_record(relaxed, i)
        assert (a["query"], a["answer"], a["alt_ans"], a["interaction_id"]) == (
            b["query"],
            b["answer"],
            b["alt_ans"],
            b["interaction_id"],
        )
        record = CragRecord.model_validate(b)
        chunks = chunk_pages(record.search_results)
        exact, loose = gold_chunks(chunks, record.answers, "exact"), gold_chunks(chunks, record.answers, "relaxed")
        assert exact <= loose
        n_differ += exact != loose
        if a == b:
            continue
        assert loose  # a reworded answer is still found by the relaxed rule
    assert n_differ >= 3
    assert generate_record(base.model_copy(update={"relaxed_share": 0.0}), 7) == generate_record(base, 7)
