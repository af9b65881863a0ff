"""The global-scope scorer's two pruning constants, shared by its numpy code
(:mod:`streamrag.retrieval.global_prefix`) and its compiled twin
(:mod:`streamrag.retrieval.global_kernel`), which numba reads as compile-time constants.
A module of their own so that neither scorer imports the other at import time."""

from __future__ import annotations

# The refresh threshold θ is the pool's score at rank |pool| / this (see global_prefix._threshold).
THETA_RANK_DIVISOR = 16
# Impact floors are lowered by this share of |θ| + |bound| + 1, covering float rounding.
FLOOR_SLACK = 1e-9
