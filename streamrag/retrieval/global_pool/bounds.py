"""The global-scope scorer's two pruning constants, shared by its numpy code
(:mod:`streamrag.retrieval.global_pool.numpy_pool`) and its compiled twin
(:mod:`streamrag.retrieval.global_pool.kernel`), which numba reads as compile-time constants.
A module of their own so that neither scorer imports the other at import time."""

from __future__ import annotations

# The refresh threshold θ is the pool's score at rank |pool| / this (see NumpyPool._threshold).
THETA_RANK_DIVISOR = 16
# Impact floors are lowered by this share of |θ| + |bound| + 1, covering float rounding.
FLOOR_SLACK = 1e-9
# The block-max scorer (blocks, blockmax): chunks per block = 2**BLOCK_SHIFT,
# and how many of a long term's largest impacts are kept (a first word's θ for k ≤ TOP_N).
BLOCK_SHIFT = 6
TOP_N = 64
# Blocks per superblock = 2**SUPER_SHIFT: the scan skips a superblock on one bound.
SUPER_SHIFT = 6
