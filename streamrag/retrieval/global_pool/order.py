"""The ranking order, compiled (numba): the rule itself and the selections built on it.

:func:`before` is the exact ranking rule (score descending, chunk id ascending);
:func:`sort_best` takes the k best by it with a heap, :func:`kth_smallest` an order
statistic by quickselect, :func:`gather` reads scores. Plain loops where numpy calls
would be: numba compiles them in a fraction of the time its ``argsort`` and
``partition`` take. Shared by the pool kernel (:mod:`~streamrag.retrieval.global_pool.kernel`)
and the block-max kernel (:mod:`~streamrag.retrieval.global_pool.blockmax`).

numba's on-disk cache of a kernel is keyed by the kernel's own file only, not by the
files of the functions it calls (numba issue 1833): after editing this module, touch
``kernel.py`` and ``blockmax.py`` (or delete their ``__pycache__/*.nbi``) so that their
cached machine code is rebuilt with the new code.
"""

from __future__ import annotations

import numpy as np
from numba import njit as _njit

__all__ = ["before", "gather", "kth_smallest", "sift_down", "sort_best"]

# Compiled on first call and cached on disk (numba writes next to this file, or to a
# per-user cache when that is read-only); nogil lets threads rank concurrently.
njit = _njit(cache=True, nogil=True)


@njit
def before(s1: float, c1: int, s2: float, c2: int) -> bool:
    """(s1, c1) ranks before (s2, c2): score descending, id ascending."""
    return s1 > s2 or (s1 == s2 and c1 < c2)


@njit
def sift_down(heap_s: np.ndarray, heap_c: np.ndarray, m: int, i: int) -> None:
    """Restore the heap below i: the root holds the entry ranked last of the m kept."""
    while True:
        child = 2 * i + 1
        if child >= m:
            return
        if child + 1 < m and before(heap_s[child], heap_c[child], heap_s[child + 1], heap_c[child + 1]):
            child += 1  # the child ranked later
        if not before(heap_s[i], heap_c[i], heap_s[child], heap_c[child]):
            return
        heap_s[i], heap_s[child] = heap_s[child], heap_s[i]
        heap_c[i], heap_c[child] = heap_c[child], heap_c[i]
        i = child


@njit
def sort_best(ids: np.ndarray, scores: np.ndarray, k: int, out: np.ndarray) -> None:
    """out[:k] = the k best of (distinct) ``ids`` by (score desc, id asc); k ≤ len(ids).

    A heap of the k best so far, its root the one ranked last (O(n log k)), emptied
    root first into out[k−1], out[k−2], …. Plain loops: numba compiles them in a
    fraction of the time its argsort and partition take.
    """
    if k == 0:
        return
    heap_s = np.empty(k, np.float64)
    heap_c = np.empty(k, np.int64)
    m = 0
    for i in range(ids.shape[0]):
        s, c = scores[i], ids[i]
        if m < k:  # push: sift up
            j = m
            m += 1
            while j > 0:
                parent = (j - 1) // 2
                if not before(heap_s[parent], heap_c[parent], s, c):
                    break
                heap_s[j], heap_c[j] = heap_s[parent], heap_c[parent]
                j = parent
            heap_s[j], heap_c[j] = s, c
        elif before(s, c, heap_s[0], heap_c[0]):
            heap_s[0], heap_c[0] = s, c
            sift_down(heap_s, heap_c, m, 0)
    while m > 0:
        m -= 1
        out[m] = heap_c[0]
        heap_s[0], heap_c[0] = heap_s[m], heap_c[m]
        sift_down(heap_s, heap_c, m, 0)


@njit
def kth_smallest(values: np.ndarray, r: int) -> float:
    """The value at position r of ``values`` sorted ascending (quickselect; reorders ``values``).

    The same value ``np.partition(values, r)[r]`` gives: an order statistic is one value,
    whatever the order of the ties around it.
    """
    lo, hi = 0, values.shape[0] - 1
    while lo < hi:
        a, b, c = values[lo], values[(lo + hi) // 2], values[hi]
        pivot = max(min(a, b), min(max(a, b), c))  # median of three
        i, j = lo, hi
        while i <= j:
            while values[i] < pivot:
                i += 1
            while values[j] > pivot:
                j -= 1
            if i <= j:
                values[i], values[j] = values[j], values[i]
                i += 1
                j -= 1
        if r <= j:
            hi = j
        elif r >= i:
            lo = i
        else:  # j < r < i: values[r] equals the pivot
            return values[r]
    return values[r]


@njit
def gather(ids: np.ndarray, acc: np.ndarray) -> np.ndarray:
    """acc[ids], a new array."""
    out = np.empty(ids.shape[0], np.float64)
    for i in range(ids.shape[0]):
        out[i] = acc[ids[i]]
    return out
