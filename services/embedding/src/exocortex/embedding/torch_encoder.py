"""The model run by sentence-transformers on torch: supports any sentence-transformers model."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from exocortex.core.domain.vectors import Vector
from exocortex.encoders import ModelInfo, fingerprint_model, model_name

SMALL_BATCH = 4


class TorchEncoder:
    """A sentence-transformers model loaded from a local directory; never from a hub."""

    # It changes torch's global thread count per call, so calls must not overlap.
    concurrent_calls = False

    def __init__(self, path: Path, *, threads: int) -> None:
        import torch
        from sentence_transformers import SentenceTransformer

        self._torch = torch
        self._threads = max(1, threads)
        torch.set_num_threads(self._threads)
        self._model = SentenceTransformer(str(path), device="cpu", local_files_only=True)
        dim = self._model.get_embedding_dimension()
        self.info = ModelInfo(
            name=model_name(path), dimensions=int(dim or 0), fingerprint=fingerprint_model(path)
        )

    def encode(self, texts: list[str]) -> list[Vector]:
        # One thread for a handful of short texts (a search query): splitting a tiny matrix
        # across threads costs more in synchronisation than it saves, and collapses badly when
        # the cores are busy. Batches get every configured thread.
        wanted = 1 if len(texts) <= SMALL_BATCH else self._threads
        if self._torch.get_num_threads() != wanted:
            self._torch.set_num_threads(wanted)
        matrix = self._model.encode(
            texts,
            batch_size=64,
            normalize_embeddings=True,
            convert_to_numpy=True,
            show_progress_bar=False,
        )
        array = np.asarray(matrix, dtype=np.float32)
        return [array[i] for i in range(array.shape[0])]
