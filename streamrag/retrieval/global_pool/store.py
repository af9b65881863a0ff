"""A :class:`GlobalIndex` on disk: one ``.npy`` file per array, JSON metadata, memory-mapped on load.

Layout of an index folder::

    meta.json         format, version, BM25 parameters, tokenizer, shapes and dtypes, key
    terms.json        the V terms, in term-id order
    indptr.npy        int64 (V + 1,)
    chunk_idx.npy     int32 (P,)
    impact.npy        float64 (P,)
    doc_len.npy       int32 (N,)
    idf.npy  max_impact.npy  head_impact.npy     float64 (V,)

:func:`save_index` writes everything into a temporary sibling folder and renames it into
place, so a reader sees the old index or the new one, never a mix. :func:`load_index`
maps the arrays read-only (``np.load(mmap_mode="r")``): opening a million-chunk index
costs milliseconds, pages are read as queries touch them and are shared between
processes. ``key`` is an opaque string chosen by the writer (e.g. a hash of the corpus
and the settings) so callers can tell whether a stored index is the one they need.
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import numpy as np

from streamrag.base.errors import DataFileError
from streamrag.retrieval.bm25 import BM25Params
from streamrag.retrieval.global_pool.index import HEAD_RANK, GlobalIndex
from streamrag.retrieval.tokenize import RegexTokenizer

__all__ = ["FORMAT", "FORMAT_VERSION", "load_index", "read_key", "save_index"]

FORMAT = "streamrag-global-index"
FORMAT_VERSION = 1
_ARRAYS: dict[str, str] = {
    "indptr": "int64",
    "chunk_idx": "int32",
    "impact": "float64",
    "doc_len": "int32",
    "idf": "float64",
    "max_impact": "float64",
    "head_impact": "float64",
}


def save_index(index: GlobalIndex, path: str | os.PathLike[str], *, key: str = "") -> Path:
    """Write ``index`` to the folder ``path`` atomically (replacing an index already there)."""
    target = Path(path)
    tokenizer = index.tokenizer
    if not isinstance(tokenizer, RegexTokenizer):
        raise ValueError(f"only a RegexTokenizer can be saved with an index, not {type(tokenizer).__name__}")
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent))
    try:
        arrays: dict[str, Any] = {}
        for name, dtype in _ARRAYS.items():
            array = np.asarray(getattr(index, name), dtype=dtype)
            np.save(tmp / f"{name}.npy", array, allow_pickle=False)
            arrays[name] = {"dtype": dtype, "shape": list(array.shape)}
        (tmp / "terms.json").write_text(json.dumps(list(index.terms), ensure_ascii=False), encoding="utf-8")
        meta = {
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "key": key,
            "n_docs": index.n_docs,
            "n_terms": index.n_terms,
            "n_postings": index.n_postings,
            "head_rank": HEAD_RANK,
            "params": index.params.model_dump(),
            "tokenizer": {"pattern": tokenizer.pattern, "lowercase": tokenizer.lowercase},
            "arrays": arrays,
        }
        # meta.json last: its presence marks a complete folder.
        (tmp / "meta.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
        for file in tmp.iterdir():
            with open(file, "rb") as fh:
                os.fsync(fh.fileno())
        os.chmod(tmp, 0o755)
        _swap_in(tmp, target)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return target


def _swap_in(tmp: Path, target: Path) -> None:
    """Rename ``tmp`` to ``target``; an existing ``target`` is moved aside first, then removed."""
    if not target.exists():
        os.replace(tmp, target)
        return
    old = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".old", dir=target.parent))
    os.rmdir(old)
    os.replace(target, old)
    os.replace(tmp, target)
    shutil.rmtree(old, ignore_errors=True)


def _read_meta(folder: Path) -> dict[str, Any]:
    meta_path = folder / "meta.json"
    if not folder.is_dir():
        raise DataFileError(f"{folder}: no such index folder")
    try:
        meta = json.loads(meta_path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DataFileError(f"{meta_path}: missing (not an index folder, or an interrupted write)") from None
    except (OSError, ValueError) as exc:
        raise DataFileError(f"{meta_path}: unreadable ({exc})") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise DataFileError(f"{meta_path}: field 'format': expected {FORMAT!r}")
    if meta.get("version") != FORMAT_VERSION:
        raise DataFileError(f"{meta_path}: field 'version': {meta.get('version')!r}, this streamrag reads {FORMAT_VERSION}")
    if meta.get("head_rank") != HEAD_RANK:
        raise DataFileError(f"{meta_path}: field 'head_rank': {meta.get('head_rank')!r}, expected {HEAD_RANK}; rebuild the index")
    return meta


def read_key(path: str | os.PathLike[str]) -> str | None:
    """The ``key`` a stored index was saved with; None when ``path`` holds no readable index."""
    try:
        return str(_read_meta(Path(path)).get("key", ""))
    except DataFileError:
        return None


def load_index(path: str | os.PathLike[str], *, mmap: bool = True) -> GlobalIndex:
    """Open an index folder written by :func:`save_index` (arrays memory-mapped read-only by default).

    Raises :class:`~streamrag.base.errors.DataFileError` naming the file and field when the
    folder is incomplete, of another format version, or inconsistent.
    """
    folder = Path(path)
    meta = _read_meta(folder)
    arrays: dict[str, np.ndarray] = {}
    for name, dtype in _ARRAYS.items():
        file = folder / f"{name}.npy"
        try:
            array = np.load(file, mmap_mode="r" if mmap else None, allow_pickle=False)
        except FileNotFoundError:
            raise DataFileError(f"{file}: missing") from None
        except (OSError, ValueError) as exc:
            raise DataFileError(f"{file}: unreadable ({exc})") from None
        expected = meta.get("arrays", {}).get(name, {})
        if str(array.dtype) != dtype or list(array.shape) != expected.get("shape"):
            raise DataFileError(
                f"{file}: dtype {array.dtype} shape {list(array.shape)}, meta.json says {dtype} {expected.get('shape')}"
            )
        arrays[name] = array
    terms_path = folder / "terms.json"
    try:
        terms = json.loads(terms_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise DataFileError(f"{terms_path}: unreadable ({exc})") from None
    n_terms, n_docs, n_postings = meta.get("n_terms"), meta.get("n_docs"), meta.get("n_postings")
    if not isinstance(terms, list) or len(terms) != n_terms:
        raise DataFileError(f"{terms_path}: expected a list of {n_terms} terms")
    shapes_ok = (
        arrays["indptr"].shape == (n_terms + 1,)
        and arrays["chunk_idx"].shape == (n_postings,)
        and arrays["doc_len"].shape == (n_docs,)
        and (n_terms == 0 or int(arrays["indptr"][-1]) == n_postings)
    )
    if not shapes_ok:
        raise DataFileError(f"{folder / 'meta.json'}: fields 'n_terms', 'n_docs', 'n_postings' do not match the arrays")
    try:
        params = BM25Params.model_validate(meta.get("params"))
        tok = meta["tokenizer"]
        tokenizer = RegexTokenizer(tok["pattern"], lowercase=bool(tok["lowercase"]))
    except (ValueError, KeyError, TypeError) as exc:
        raise DataFileError(f"{folder / 'meta.json'}: field 'params' or 'tokenizer': {exc}") from None
    return GlobalIndex(**arrays, terms=terms, params=params, tokenizer=tokenizer)
