"""Who stops gaining under load: P(D ≤ 0) for every distinct timeline of a population at once.

D is a session's paired difference, baseline − streaming answer latency, with X = G + L
per call, V_b the baseline's wait and V_s each streaming call's wait (all independent,
except that the call on the full query shares its X with the baseline). Three kinds of
timeline (:class:`~streamrag.simulator.predict.saving.Timeline`) give three sums:

- **a deciding call before the last word** (``others``): streaming answers once the
  first deciding result is in, no sooner than the reflector's first look ``check``:
  ``P = Σ_b P(B = b)·[b ≤ check or Π_j P(Y_j − d_j ≥ b)]``, B = X + V_b the baseline and
  Y = X + V_s each call;
- **the held call on the full query decides** (``last``): its X is the baseline's, so the
  sum runs over X and V_b jointly, the call's own wait compared with V_b;
- **a mis-fire**: D = V_b − V_s − R with R = max(check, max_j (Y_j − d_j)⁺), the refire
  waiting V_s.

Each sum is one array expression over the atoms and every timeline of its kind (the
products over a timeline's calls are segment reductions over the calls of all), so the
load model's population share costs a few array operations per offered load, not a
Python call per timeline.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from streamrag.simulator.predict.atoms import Atoms
from streamrag.simulator.predict.saving import Timeline

_AT_CHECK_MS = 1e-6
"""A baseline answer this close after the first look counts as at it (ms)."""


class _Segments:
    """Some timelines' call offsets laid end to end, for products over each timeline's calls."""

    def __init__(self, offsets: list[np.ndarray]) -> None:
        sizes = np.array([o.size for o in offsets], dtype=np.int64)
        self.filled = np.flatnonzero(sizes > 0)
        self.flat = np.concatenate([offsets[i] for i in self.filled]) if self.filled.size else np.zeros(0)
        self.starts = np.concatenate([[0], np.cumsum(sizes[self.filled])[:-1]]).astype(np.int64)
        self.n = len(offsets)

    def product(self, per_offset: np.ndarray) -> np.ndarray:
        """Per row of ``per_offset`` (rows × offsets laid end to end), the product over each
        timeline's offsets (1 for a timeline without any): rows × timelines."""
        out = np.ones((per_offset.shape[0], self.n))
        if self.filled.size:
            out[:, self.filled] = np.multiply.reduceat(per_offset, self.starts, axis=1)
        return out


class LineBatch:
    """The distinct timelines of a population, grouped by kind (module docstring)."""

    def __init__(self, lines: Sequence[Timeline]) -> None:
        first: dict[tuple[object, ...], Timeline] = {}
        for line in lines:
            first.setdefault(line.key, line)
        slot = {key: i for i, key in enumerate(first)}
        self.inverse = np.array([slot[line.key] for line in lines], dtype=np.int64)
        distinct = list(first.values())
        self.n = len(distinct)
        kinds: dict[str, list[int]] = {"others": [], "last": [], "misfire": []}
        own: dict[int, int] = {}
        for i, line in enumerate(distinct):
            full = [j for j, t in enumerate(line.fired_t) if t == line.n_words]
            if not line.deciding.any():
                kinds["misfire"].append(i)
            elif full and line.deciding[full[0]]:
                kinds["last"].append(i)
                own[i] = full[0]
            else:
                kinds["others"].append(i)
        self.others, self.last, self.misfire = (np.array(kinds[k], dtype=np.int64) for k in ("others", "last", "misfire"))
        self._checks = np.array([line.check_ms for line in distinct])
        self._others = _Segments([distinct[i].offsets_ms[distinct[i].deciding] for i in kinds["others"]])
        self._last = _Segments([_deciding_but(distinct[i], own[i]) for i in kinds["last"]])
        self._last_own = np.array([distinct[i].offsets_ms[own[i]] for i in kinds["last"]])
        self._misfire = _Segments([distinct[i].offsets_ms for i in kinds["misfire"]])

    def p_not_gaining(self, x: Atoms, vb: Atoms, vs: Atoms, y: Atoms, base: Atoms) -> np.ndarray:
        """P(D ≤ 0) of every distinct timeline (in first-seen order), with ``y`` = X + V_s
        and ``base`` = X + V_b."""
        out = np.empty(self.n)
        if self.others.size:
            b = base.values_ms
            check = self._checks[self.others]
            prod = self._others.product(y.at_least(b[:, None] + self._others.flat[None, :]))
            out[self.others] = base.probs @ np.where(b[:, None] <= check[None, :] + _AT_CHECK_MS, 1.0, prod)
        if self.last.size:
            b_all = x.values_ms[:, None] + vb.values_ms[None, :]  # one row per atom of X_n
            check = self._checks[self.last]
            prod = self._last.product(y.at_least(b_all.ravel()[:, None] + self._last.flat[None, :]))
            prod = prod.reshape(*b_all.shape, -1)
            own = vs.at_least(vb.values_ms[:, None] + self._last_own[None, :])  # X_n + V_n − d_n ≥ X_n + V_b
            gaining = np.where(b_all[:, :, None] <= check[None, None, :] + _AT_CHECK_MS, 1.0, prod * own[None, :, :])
            out[self.last] = x.probs @ np.einsum("b,xbl->xl", vb.probs, gaining)
        if self.misfire.size:
            need = (vb.values_ms[:, None] - vs.values_ms[None, :]).ravel()  # D ≤ 0 ⇔ R ≥ V_b − V_s
            check = np.maximum(self._checks[self.misfire], 0.0)
            miss = self._misfire.product(1.0 - y.at_least(need[:, None] + self._misfire.flat[None, :]))
            p_r = np.where(need[:, None] <= check[None, :] + _AT_CHECK_MS, 1.0, 1.0 - miss)
            out[self.misfire] = vb.probs @ np.einsum("bvl,v->bl", p_r.reshape(vb.values_ms.size, vs.values_ms.size, -1), vs.probs)
        return out

    def share(self, per_distinct: np.ndarray) -> float:
        """The mean over the population's sessions of a per-distinct-timeline value."""
        return float(np.mean(per_distinct[self.inverse]))


def _deciding_but(line: Timeline, j: int) -> np.ndarray:
    """The offsets of ``line``'s deciding calls other than call ``j``."""
    keep = line.deciding.copy()
    keep[j] = False
    return line.offsets_ms[keep]
