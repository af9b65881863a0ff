"""A retriever of one's own: a class that scores one question's chunks, named by a setting.

The class a user writes (the :class:`ChunkScorer` role) takes the question's chunk texts
and scores them for a query::

    class WordOverlap:
        def __init__(self, chunks: Sequence[str]) -> None:  # chunk i is chunks[i]
            self.words = [set(c.lower().split()) for c in chunks]

        def score(self, query: str) -> list[float]:  # one finite number per chunk
            q = set(query.lower().split())
            return [float(len(q & w)) for w in self.words]

It is selected by its target — ``path/to/file.py:WordOverlap`` (a file, nothing to
install) or ``package.module:WordOverlap`` (importable) — wherever a retriever is:
``--retriever TARGET`` (``analyze``, ``simulate``), ``--set data.retriever=TARGET``,
``retriever="TARGET"`` in :func:`streamrag.analyze`, or ``{kind = "python", target =
"TARGET"}`` (retriever kind ``python``, :mod:`streamrag.retrieval.kinds`). A relative
path is taken from the current folder, and recorded absolute.

:class:`PythonRetriever` turns the class into a :class:`~streamrag.retrieval.base.Retriever`:
one instance per question, ``score`` called once per word prefix ``q[1:t]`` (the first t
words joined by one space, as the dense retriever embeds them), and each prefix ranked
by the rule of every retriever — score descending, ties by the lower chunk id. Per-question
scope only: the class sees one question's chunks, never a pool.

**Scale.** The heuristic reflector judges a result by the full query's score of its top
chunk against a threshold set for a known scale. A class whose scores are on one says
so with a class attribute, ``scale = "bm25"`` (``reflector.score_threshold``) or
``scale = "cosine"`` (``reflector.cosine_threshold``; scores outside [−1, 1] are refused),
and its own full-query scores are judged. A class that declares none ranks, but its
scores are on no known scale, so no threshold is applied to them: the reflector judges
its top chunk by that chunk's BM25 score of the full query (the lexical index of the same
chunks, as the 40 % coverage rule always is), and the evidence says ``score_scale = bm25``.

Every failure is one line naming the target (a :class:`~streamrag.base.errors.ConfigError`):
a module that does not import, a missing class, a class without ``score`` or whose
constructor does not take the chunks, a constructor or ``score`` that raises, and a
``score`` that returns anything but one finite number per chunk.
"""

from __future__ import annotations

import importlib
import importlib.util
import inspect
import itertools
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from types import ModuleType
from typing import Any, Literal, Protocol, runtime_checkable

import numpy as np

from streamrag.base.digest import file_sha256
from streamrag.base.errors import ConfigError
from streamrag.retrieval.bm25 import BM25Index
from streamrag.retrieval.prefix import PrefixRankings
from streamrag.retrieval.ranking import check_rankable, rank_topk_rows
from streamrag.retrieval.tokenize import word_tokens

__all__ = ["ChunkScorer", "PythonRetriever", "Target", "declared_scale", "load_target"]

SCALES = ("bm25", "cosine")


@runtime_checkable
class ChunkScorer(Protocol):
    """Role: score one question's chunks for a query — the retriever a user writes.

    ``ChunkScorer(chunks)``: constructed once per question with the question's chunk
    texts (chunk id = position). ``score(query)`` returns one finite number per chunk,
    higher = more relevant (a list, a tuple or a 1-D numpy array). Optional class
    attribute ``scale``: ``"bm25"`` or ``"cosine"`` when the scores are on that scale
    (module docstring).
    """

    def score(self, query: str) -> Sequence[float]: ...


class Target:
    """A parsed target: ``where:name`` with ``where`` a file (``….py``, or a path with a
    separator) or a module, and ``name`` the class (``Outer.Inner`` allowed)."""

    __slots__ = ("name", "path", "text", "where")

    def __init__(self, text: str) -> None:
        where, sep, name = text.rpartition(":")  # the last colon: a Windows drive keeps its own
        if not sep or not where.strip() or not all(part.isidentifier() for part in name.split(".")):
            raise ConfigError(f"retriever {text!r}: give package.module:Class or path/to/file.py:Class")
        self.where, self.name = where, name
        is_file = where.endswith(".py") or "/" in where or os.sep in where
        self.path = Path(where).expanduser().resolve() if is_file else None
        self.text = f"{self.path}:{name}" if self.path is not None else text
        if self.path is None and not all(part.isidentifier() for part in where.split(".")):
            raise ConfigError(f"retriever {text!r}: {where!r} is neither a module name nor a .py file")
        if self.path is None and where.split(".")[0] == "streamrag":
            raise ConfigError(
                f"retriever {text!r}: name your own class; streamrag's retrievers are kinds (bm25, dense, rank_bm25)"
            )

    def fail(self, problem: str) -> ConfigError:
        return ConfigError(f"retriever {self.text}: {problem}")


def _file_module(target: Target, path: Path, sha256: str | None) -> ModuleType:
    """The module of a user's file, loaded once per content (a changed file loads anew)."""
    if not path.is_file():
        raise target.fail(f"{path}: no such file")
    name = f"streamrag_user_retriever_{sha256 or file_sha256(path)}"
    module = sys.modules.get(name)
    if module is not None:
        return module
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise target.fail(f"{path} cannot be loaded as Python")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # what a class's own module lookups (dataclasses, pickling) expect
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[name]
        raise target.fail(f"importing {path.name} raised {_said(exc)}") from None
    return module


def _module(target: Target) -> ModuleType:
    try:
        return importlib.import_module(target.where)
    except ModuleNotFoundError as exc:
        if exc.name is not None and (target.where == exc.name or target.where.startswith(exc.name + ".")):
            raise target.fail(f"no module named {exc.name!r} (install it, or give its file: path/to/file.py:Class)") from None
        raise target.fail(f"importing {target.where} raised {_said(exc)}") from None
    except Exception as exc:
        raise target.fail(f"importing {target.where} raised {_said(exc)}") from None


def load_target(text: str, sha256: str | None = None) -> tuple[Target, type]:
    """The target and its class, checked against the :class:`ChunkScorer` role.

    ``sha256``: the file's digest when known (its module is then found without reading
    the file again)."""
    target = Target(text)
    module = _module(target) if target.path is None else _file_module(target, target.path, sha256)
    found: Any = module
    for part in target.name.split("."):
        found = getattr(found, part, None)
        if found is None:
            raise target.fail(f"{target.where} has no class {target.name}")
    if not isinstance(found, type):
        raise target.fail(f"{target.name} = {_short(repr(found))} is not a class")
    if not callable(getattr(found, "score", None)):
        raise target.fail(f"{target.name} has no score(query) method (a retriever class scores the chunks it was given)")
    try:
        inspect.signature(found).bind(["chunk"])
    except TypeError as exc:
        raise target.fail(f"{target.name}(chunks) must take one argument, the question's chunks: {exc}") from None
    except ValueError:  # no signature to read (a class implemented in C): its first call tells
        pass
    declared_scale(target, found)
    return target, found


def declared_scale(target: Target, cls: type) -> Literal["bm25", "cosine"] | None:
    """The class attribute ``scale``: ``bm25``, ``cosine`` or None (declared none)."""
    scale = getattr(cls, "scale", None)
    if scale is not None and scale not in SCALES:
        raise target.fail(f"scale = {scale!r}: declare bm25 or cosine, or leave it out (scores on no known scale)")
    return scale


def source_sha256(target: Target, cls: type) -> str | None:
    """SHA-256 of the file that defines the class (None: none, e.g. a notebook's class)."""
    if target.path is not None:
        return file_sha256(target.path)
    try:
        source = inspect.getsourcefile(cls)
    except TypeError:  # a built-in class
        return None
    return file_sha256(source) if source is not None and Path(source).is_file() else None


def _said(exc: BaseException) -> str:
    """An exception in one line: its type and the first line of its message."""
    lines = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {lines[0]}" if lines else type(exc).__name__


class PythonRetriever:
    """A user's :class:`ChunkScorer` over one question's chunks; satisfies
    :class:`~streamrag.retrieval.base.Retriever` (module docstring).

    ``index``: the BM25 index of the same chunks — its tokenizer gives ``final_tokens``
    (coverage) and, when the class declares no scale, ``final_scores``.
    """

    __slots__ = ("_index", "_scale", "_scorer", "_target", "n_chunks")

    def __init__(self, target: Target, cls: type, chunks: Sequence[str], index: BM25Index) -> None:
        self._target, self._index, self.n_chunks = target, index, len(chunks)
        self._scale = declared_scale(target, cls)
        try:
            self._scorer = cls(list(chunks))
        except Exception as exc:
            raise target.fail(f"{target.name}(chunks) raised {_said(exc)}") from None

    def _scores(self, prefix: str) -> np.ndarray:
        """The class's scores of ``prefix``: float64 (N,), checked."""
        try:
            given = self._scorer.score(prefix)
        except Exception as exc:
            raise self._target.fail(f"score({_short(prefix)}) raised {_said(exc)}") from None
        what = f"score({_short(prefix)}) returned"
        if isinstance(given, str | bytes) or not hasattr(given, "__len__"):
            raise self._target.fail(f"{what} a {type(given).__name__}, not one number per chunk ({self.n_chunks})")
        raw = np.asarray(given)
        if raw.dtype.kind not in "iuf":  # bool, str, None, objects: no scores
            raise self._target.fail(f"{what} {raw.dtype} values, not numbers ({_short(repr(given))})")
        if raw.shape != (self.n_chunks,):
            raise self._target.fail(f"{what} shape {raw.shape} for {self.n_chunks} chunks: one number per chunk")
        scores = raw.astype(np.float64)
        bad = np.flatnonzero(~np.isfinite(scores))
        if bad.size:
            raise self._target.fail(f"{what} {scores[bad[0]]} for chunk {bad[0]}: scores must be finite")
        if self._scale == "cosine" and (scores.min() < -1.0 or scores.max() > 1.0):
            raise self._target.fail(f"{what} values outside [−1, 1] but the class declares scale = 'cosine'")
        return scores

    def rank(self, query: str, *, k: int = 3) -> PrefixRankings:
        """Top-k of every prefix ``q[1:t]``: the class's scores, ranked (score desc, id asc)."""
        words = query.split()
        k_eff = check_rankable(query, len(words), self.n_chunks, k)
        matrix = np.stack([self._scores(" ".join(words[:t])) for t in range(1, len(words) + 1)])
        topk = rank_topk_rows(matrix, k_eff)
        tokens = tuple(itertools.chain.from_iterable(word_tokens(query, self._index.tokenizer)))
        final = matrix[-1].copy() if self._scale is not None else self._index.score(tokens)
        topk.flags.writeable = False
        final.flags.writeable = False
        return PrefixRankings(n_words=len(words), k=k, topk=topk, final_scores=final, final_tokens=tokens)

    def __repr__(self) -> str:
        return f"PythonRetriever({self._target.text}, n_chunks={self.n_chunks})"


def _short(text: str, limit: int = 40) -> str:
    return repr(text if len(text) <= limit else text[: limit - 1] + "…")
