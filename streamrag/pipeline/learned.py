"""The learned trigger: fire when a saved model's P(t ≥ t_suf | features of prefix t) ≥ τ.

The anchor study's "Component A" (its ``experiments/train_trigger.py``) fits a logistic
regression and gradient-boosted trees on per-word features and fires at the first word t
with P ≥ τ. ``streamrag train-trigger`` fits the same models and saves each as JSON — the
scaler and coefficients of the logistic regression, the trees of the GBDT as arrays —
never as a pickle; this module reads that file and evaluates the model in numpy, so
running a saved model needs no scikit-learn (a test checks our probabilities equal
scikit-learn's ``predict_proba``):

- logistic regression: ``P = 1 / (1 + exp(−(((x − mean) / scale) · coef + intercept)))``;
- GBDT (binomial deviance): ``P = 1 / (1 + exp(−(init + lr · Σ_trees tree(x))))``, a tree
  sending x left iff ``float32(x[feature]) ≤ threshold`` (scikit-learn compares in float32).

Every feature reads the words heard so far (:mod:`streamrag.analysis.features.compute`), so in
simulation the probability of every prefix is computed once when the question's trigger
is built, from the question's per-prefix ``features``; a column the model names but the
question lacks (entity columns without the tagger's output, a trace-driven question) is a
ConfigError. On live input without a known question (:meth:`LearnedTriggerConfig.online`)
P(t) is computed when word t is heard, from the features of the words heard so far
(:mod:`streamrag.simulator.heard`: a local ranking of each prefix, the same rule).

Modes (``mode``):

- ``single`` (the anchor's): one opportunity, at the first t with P(t) ≥ τ;
- ``rearm``: an opportunity at every *upward crossing*: the trigger starts armed, an
  opportunity at an armed t with P(t) ≥ τ disarms it, and a later t with P(t) < τ arms it
  again — so it fires again only after P dropped below τ and rose back.

The shared rules of :mod:`streamrag.pipeline.triggers` (one fire per prefix, the thread
cap, deferral) apply to its opportunities as to every trigger's.
"""

from __future__ import annotations

import hashlib
import json
import os
import stat
from collections.abc import Callable
from functools import lru_cache
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Annotated, Any, ClassVar, Literal

import numpy as np
from pydantic import Field, ValidationError, field_validator, model_validator

from streamrag.base.config.bundled import models_dir, names_in
from streamrag.base.errors import ConfigError
from streamrag.base.validation import SettingsModel, problem
from streamrag.pipeline.question import Need, SimQuestion

__all__ = [
    "MAX_MODEL_BYTES",
    "MODEL_FORMAT",
    "GBDTParams",
    "LearnedTrigger",
    "LearnedTriggerConfig",
    "LogRegParams",
    "TreeArrays",
    "TriggerModel",
    "feature_matrix",
    "load_model",
    "predict_proba",
]

MODEL_FORMAT: Literal["streamrag.trigger-model/1"] = "streamrag.trigger-model/1"
LEAF = -1
"""``left``/``right`` of a leaf (scikit-learn's TREE_LEAF)."""
MAX_MODEL_BYTES = 8 << 20
"""The largest model file read (8 MiB). ``train-trigger``'s GBDT (100 trees of depth 3)
writes about 0.1 MiB. A file past the cap is refused after reading cap + 1 bytes, and
anything but a regular file (``/dev/zero``, a pipe) before it is opened: neither is read
without bound."""
MAX_PARAMETER = 1e9
"""The largest magnitude a saved model's number may have: its features are word counts,
positions and flags (at most MAX_QUERY_WORDS), so a scaler value, coefficient, threshold
or log-odds beyond 10⁹ is a damaged file, never a fit (and would saturate every decision)."""
FiniteFloat = Annotated[float, Field(allow_inf_nan=False, ge=-MAX_PARAMETER, le=MAX_PARAMETER)]
"""A number a model file gives: NaN or ±∞ would make every probability NaN, and a trigger
comparing NaN ≥ τ never fires — a model that runs and silently does nothing."""


class _Frozen(SettingsModel):
    """Frozen, no unknown key, no boolean for a number (:class:`~streamrag.base.validation.SettingsModel`)."""


class LogRegParams(_Frozen):
    """A standardized logistic regression: scaler ``mean``/``scale``, ``coef``, ``intercept``."""

    mean: list[FiniteFloat]
    scale: list[FiniteFloat]
    coef: list[FiniteFloat]
    intercept: FiniteFloat

    @field_validator("scale")
    @classmethod
    def _nonzero(cls, scale: list[float]) -> list[float]:
        zero = [i for i, v in enumerate(scale) if v == 0.0]
        if zero:
            raise ValueError(f"item {zero[0]} is 0: a feature is divided by its scale (a constant feature has scale 1)")
        return scale


class TreeArrays(_Frozen):
    """One regression tree as parallel node arrays (node 0 the root; a leaf has left = right = −1)."""

    feature: list[int]
    threshold: list[FiniteFloat]
    left: list[int]
    right: list[int]
    value: list[FiniteFloat]

    @model_validator(mode="after")
    def _consistent(self) -> TreeArrays:
        n = len(self.feature)
        if not n or any(len(a) != n for a in (self.threshold, self.left, self.right, self.value)):
            raise ValueError("a tree's node arrays must be non-empty and of one length")
        for i, (f, lc, rc) in enumerate(zip(self.feature, self.left, self.right, strict=True)):
            # children after their node (scikit-learn's order): a walk from the root ends
            if (lc == LEAF) != (rc == LEAF) or any(c != LEAF and not i < c < n for c in (lc, rc)):
                raise ValueError(f"node {i}: children must be both -1 (a leaf) or both later nodes (< {n})")
            if lc != LEAF and f < 0:
                raise ValueError(f"node {i}: a split must name a feature (≥ 0), got {f}")
        return self


class GBDTParams(_Frozen):
    """Binomial-deviance gradient boosting: ``init`` (raw log-odds), ``learning_rate``, ``trees``."""

    init: FiniteFloat
    learning_rate: FiniteFloat = Field(gt=0)
    trees: list[TreeArrays]


class TriggerModel(_Frozen):
    """A saved trigger model (``train-trigger`` writes it; see the module docstring)."""

    format: Literal["streamrag.trigger-model/1"] = MODEL_FORMAT
    kind: Literal["logreg", "gbdt"]
    columns: list[str]
    """The question's feature columns, in the model's input order; ``name=level`` is the
    one-hot indicator of a categorical column (``question_word_type=who``)."""
    context: Literal["prefix", "full"]
    """Whether the entity and question-word columns read the prefix (online) or the full query."""
    target: Literal["suf", "sc"] = "suf"
    logreg: LogRegParams | None = None
    gbdt: GBDTParams | None = None
    provenance: dict[str, Any] = Field(default_factory=dict)
    """How it was trained: table path and digest, rows, scikit-learn version, parameters."""

    @model_validator(mode="after")
    def _params(self) -> TriggerModel:
        params = self.logreg if self.kind == "logreg" else self.gbdt
        if params is None or (self.logreg is not None and self.gbdt is not None):
            raise ValueError(f"a {self.kind} model needs its {self.kind!r} parameters and no others")
        m = len(self.columns)
        if self.logreg is not None and any(len(a) != m for a in (self.logreg.mean, self.logreg.scale, self.logreg.coef)):
            raise ValueError(f"logreg: mean, scale and coef need one value per column ({m})")
        if self.gbdt is not None and any(f >= m for tree in self.gbdt.trees for f in tree.feature):
            raise ValueError(f"gbdt: a split names a feature beyond the {m} columns")
        return self


def save_model(model: TriggerModel, path: str | os.PathLike[str]) -> Path:
    """Write a model as JSON, atomically."""
    from streamrag.base.atomic import write_text_atomic

    out = Path(path)
    write_text_atomic(out, json.dumps(model.model_dump(mode="json"), indent=1) + "\n")
    return out


def is_model_path(value: str) -> bool:
    """True when a ``trigger.model`` value names a file rather than a shipped model: it
    ends in ``.json`` or holds a path separator (the rule of ``latency.profile``)."""
    return value.endswith(".json") or "/" in value or os.sep in value


def list_models() -> list[str]:
    """Names of the shipped models (``sim/models/NAME.json``: ``trigger.model = "NAME"``)."""
    return names_in(models_dir(), ".json")


def _shipped(name: str) -> Traversable:
    resource = models_dir() / f"{name}.json"
    if not resource.is_file():
        known = ", ".join(list_models()) or "none"
        raise ConfigError(f"trigger.model: no shipped model {name!r} (shipped: {known}; a model file is a path ending in .json)")
    return resource


def model_sha256(name_or_path: str) -> str:
    """SHA-256 of the model's bytes, a shipped model's included (sweep keys follow content)."""
    if is_model_path(name_or_path):
        return hashlib.sha256(_read_capped(Path(name_or_path))).hexdigest()
    return hashlib.sha256(_shipped(name_or_path).read_bytes()).hexdigest()


def load_model(name_or_path: str | os.PathLike[str]) -> TriggerModel:
    """Read a saved model — a file (cached by path, size and modification time), or a
    shipped one by name; a bad file is a one-line ConfigError."""
    text = os.fspath(name_or_path)
    if not is_model_path(text):
        return _load_shipped(text)
    p = Path(text)
    try:
        st = p.stat()
    except OSError as exc:
        raise ConfigError(f"trigger.model: cannot read {p}: {exc.strerror}") from None
    return _load(str(p.resolve()), st.st_size, st.st_mtime_ns)


def _read_capped(p: Path) -> bytes:
    """The bytes of model file ``p``: a regular file (a pipe or a device is refused before
    it is opened: opening a pipe waits for a writer) of at most :data:`MAX_MODEL_BYTES`
    (cap + 1 bytes are read, never more)."""
    try:
        if not stat.S_ISREG(p.stat().st_mode):
            raise ConfigError(f"trigger.model: {p}: not a regular file (a model is the JSON file train-trigger wrote)")
        with open(p, "rb") as fh:
            data = fh.read(MAX_MODEL_BYTES + 1)
    except OSError as exc:
        raise ConfigError(f"trigger.model: cannot read {p}: {exc.strerror}") from None
    if len(data) > MAX_MODEL_BYTES:
        raise ConfigError(f"trigger.model: {p}: larger than {MAX_MODEL_BYTES >> 20} MiB (MAX_MODEL_BYTES): not a trigger model")
    return data


@lru_cache(maxsize=16)
def _load(path: str, size: int, mtime_ns: int) -> TriggerModel:
    return _validated(_read_capped(Path(path)), path)


@lru_cache(maxsize=4)
def _load_shipped(name: str) -> TriggerModel:
    return _validated(_shipped(name).read_bytes(), f"shipped model {name!r}")


def _validated(data: bytes, origin: str) -> TriggerModel:
    try:
        return TriggerModel.model_validate_json(data)
    except ValidationError as exc:
        e = exc.errors(include_url=False)[0]
        where = ".".join(map(str, e["loc"])) or "(file)"
        raise ConfigError(f"{origin}: not a streamrag trigger model: {where}: {problem(e)}") from None


def feature_matrix(columns: list[str], features: dict[str, np.ndarray], *, where: str = "") -> np.ndarray:
    """float64 (n, len(columns)): the model's inputs from per-prefix feature arrays."""
    out = []
    for col in columns:
        name, _, level = col.partition("=")
        values = features.get(name)
        if values is None:
            have = ", ".join(sorted(features)) or "none"
            hint = (
                " (top1_margin, top1_coverage_prefix and the entity columns are computed with the tagger: "
                "data.entity_predictor = true, or analyze --features)"
            )
            raise ConfigError(
                f"trigger.kind 'learned': {where}the model reads {name!r}, which is not computed (have: {have}){hint}"
            )
        out.append((values == level).astype(np.float64) if level else np.asarray(values, dtype=np.float64))
    return np.column_stack(out) if out else np.zeros((0, 0))


def _expit(z: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-z))


def _tree_values(tree: TreeArrays, x32: np.ndarray) -> np.ndarray:
    feature = np.asarray(tree.feature)
    threshold = np.asarray(tree.threshold)
    left, right = np.asarray(tree.left), np.asarray(tree.right)
    node = np.zeros(x32.shape[0], dtype=np.int64)
    rows = np.arange(x32.shape[0])
    while True:
        inner = left[node] != LEAF
        if not inner.any():
            break
        go_left = x32[rows, np.maximum(feature[node], 0)] <= threshold[node]
        node = np.where(inner, np.where(go_left, left[node], right[node]), node)
    return np.asarray(tree.value)[node]


def predict_proba(model: TriggerModel, x: np.ndarray) -> np.ndarray:
    """P(label = 1) of each row of ``x`` (float64 (n, len(columns)))."""
    if model.logreg is not None:
        lr = model.logreg
        z = ((x - np.asarray(lr.mean)) / np.asarray(lr.scale)) @ np.asarray(lr.coef) + lr.intercept
        return _expit(z)
    gb = model.gbdt
    assert gb is not None  # the validator guarantees one of the two
    x32 = x.astype(np.float32)
    raw = np.full(x.shape[0], gb.init, dtype=np.float64)
    for tree in gb.trees:
        raw += gb.learning_rate * _tree_values(tree, x32)
    return _expit(raw)


class LearnedTrigger:
    """Opportunities from P(t) of each prefix heard (see the module docstring).

    ``p_of(t)`` gives P of prefix t: a lookup in precomputed probabilities (simulation),
    or the model on the features of the words heard so far (live input,
    :meth:`LearnedTriggerConfig.online`). The state before each word is kept, so that a
    word heard again at a position already heard — live input revised every word from
    it on — is decided from the state before that position, as if the withdrawn words
    had never been heard: the decisions are a function of the words heard, revisions
    included."""

    tick_us: int | None = None
    kills_in_flight = False
    __slots__ = ("_armed", "_p_of", "rearm", "tau")

    def __init__(self, p_of: Callable[[int], float], tau: float, rearm: bool) -> None:
        self._p_of = p_of
        self.tau = tau
        self.rearm = rearm
        self._armed = [True]
        """Armed before word t, at index t − 1 (the trigger starts armed)."""

    def on_word(self, t: int) -> bool:
        del self._armed[t:]  # a revision: the state of the withdrawn words goes with them
        armed, high = self._armed[t - 1], self._p_of(t) >= self.tau
        fire = armed and high
        self._armed.append(False if fire else armed or (self.rearm and not high))
        return fire

    def on_tick(self, t: int) -> bool:
        return False

    def fired(self, t: int) -> None:
        return None


class LearnedTriggerConfig(_Frozen):
    """A saved model (``train-trigger``), its threshold τ and its mode."""

    kind: Literal["learned"] = "learned"
    needs: ClassVar[frozenset[Need]] = frozenset({"rankings"})
    """Per-prefix evidence (its feature columns): a bare table cannot run it."""
    ranks_online: ClassVar[bool] = True
    """Live input without a known question runs it from a local ranking of each prefix
    heard (:meth:`online`; the Speculator's ``ranker``)."""
    model: str
    """The model JSON ``streamrag train-trigger`` wrote (a path), or a shipped model's
    name (``frontier``: :func:`list_models`)."""
    tau: float = Field(default=0.5, ge=0.0, le=1.0)
    """The threshold τ (a probability): a prefix t is an opportunity when the model's
    P(t ≥ t_suf) ≥ τ."""
    mode: Literal["single", "rearm"] = "single"
    """``single`` (the anchor's): one opportunity, at the first t with P ≥ τ; ``rearm``:
    one at every upward crossing of τ."""

    def probabilities(self, q: SimQuestion) -> np.ndarray:
        """P(t) of every prefix of ``q`` under the model."""
        model = load_model(self.model)
        if q.features is None:
            raise ConfigError(
                f"trigger.kind: 'learned' needs per-prefix features, but question {q.interaction_id!r} is "
                "trace-driven (a table only gives t*); replay it with its prefixes.parquet or from the data"
            )
        x = feature_matrix(model.columns, q.features, where=f"question {q.interaction_id!r}: ")
        return predict_proba(model, x)

    def build(self, q: SimQuestion) -> LearnedTrigger:
        p = self.probabilities(q).tolist()
        return LearnedTrigger(lambda t: p[t - 1], self.tau, self.mode == "rearm")

    def online(self, features_of: Callable[[int], dict[str, np.ndarray]]) -> LearnedTrigger:
        """The trigger on live input, without a known question: ``features_of(t)`` gives
        the per-prefix features of prefixes 1 … t of the words heard so far (the rule of
        :func:`streamrag.analysis.features.compute.prefix_features`, computed from a local
        ranking of each prefix: :mod:`streamrag.simulator.heard`); P(t) is the model on
        row t. A model reading right context (``context = "full"``) is a ConfigError."""
        model = load_model(self.model)
        if model.context != "prefix":
            raise ConfigError(
                f"trigger.model: {self.model} reads the full query (context 'full': the anchor's entity and question-word "
                "rule), which live input has not heard yet; train on online features (analyze --features)"
            )

        def p_of(t: int) -> float:
            x = feature_matrix(model.columns, features_of(t), where=f"prefix {t}: ")
            return float(predict_proba(model, x[t - 1 : t])[0])

        return LearnedTrigger(p_of, self.tau, self.mode == "rearm")

    def online_inputs(self) -> frozenset[str]:
        """The per-prefix inputs beside the top-1 that the model's columns read, as
        :class:`~streamrag.simulator.heard.HeardFeatures` names them (``margin``,
        ``coverage_prefix``, ``ne_first``, ``words``): computed live only when read."""
        names = {c.partition("=")[0] for c in load_model(self.model).columns}
        wanted = {"top1_margin": "margin", "top1_coverage_prefix": "coverage_prefix",
                  "named_entity_detected": "ne_first", "words_since_first_ne": "ne_first",
                  "question_word_type": "words"}  # fmt: skip
        return frozenset(wanted[n] for n in names if n in wanted)
