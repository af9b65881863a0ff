"""Random streams: one per (question, component), all from one seed.

``stream(seed, question_id, component)`` is a generator seeded by
``SeedSequence(seed, spawn_key=(h₀, h₁, c))`` where ``(h₀, h₁)`` is a 64-bit BLAKE2b
hash of the question id and ``c`` a 32-bit hash of the component name. Hence:

- a question's draws do not depend on which other questions run, their order, or the
  worker process that runs it (1 vs many workers give identical results);
- adding a component (a new stage, a new cadence option) never changes the draws of
  the existing ones;
- there is no global seeding and no registry of components.
"""

from __future__ import annotations

import hashlib

import numpy as np


def _hash32s(text: str, n_words: int) -> tuple[int, ...]:
    digest = hashlib.blake2b(text.encode("utf-8"), digest_size=4 * n_words).digest()
    return tuple(int.from_bytes(digest[4 * i : 4 * i + 4], "little") for i in range(n_words))


def stream(seed: int, question_id: str, component: str) -> np.random.Generator:
    """The generator of ``component`` (e.g. ``"latency.L"``) for one question."""
    key = _hash32s(question_id, 2) + _hash32s(component, 1)
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(int(seed), spawn_key=key)))
