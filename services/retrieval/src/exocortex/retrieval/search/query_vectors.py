"""Query vectors kept for repeated queries, valid only for the model that made them.

Agents ask the same things again and again; a kept vector saves the query's embedding (about a
third of a search's CPU). A vector is only right for the model that made it, so every entry
belongs to one model, named by what can change it: the encoder's own fingerprint (the model
file, and for the local copy its precision) and the settings that choose the model. When any of
them changes, the kept vectors are dropped at once and the next searches embed their queries
again, with the new model.
"""

from __future__ import annotations

from collections.abc import Mapping

from exocortex.core.domain.vectors import Vector
from exocortex.retrieval.search.lru import LruCache
from exocortex.retrieval.search.query_encoder import QueryEmbedder

# The settings that name the embedding model: a change of either means new vectors.
MODEL_SETTINGS = ("embedding.model", "embedding.dimensions")

ModelKey = tuple[str, ...]


def model_key(embedder: QueryEmbedder, settings: Mapping[str, str]) -> ModelKey:
    """What the vectors of ``embedder`` depend on, as it stands now. The embedding service's
    client learns its fingerprint from every reply, so a model swapped behind it shows here on
    the first query it embeds."""
    fingerprint = str(getattr(embedder, "fingerprint", ""))
    return (fingerprint, *(settings.get(name, "") for name in MODEL_SETTINGS))


class QueryVectors:
    """A bounded LRU of query text → vector, for one model at a time."""

    def __init__(self, max_entries: int) -> None:
        self._max = max_entries
        self._model: ModelKey | None = None
        self._vectors: LruCache[str, Vector] = LruCache(max_entries)

    def get(self, model: ModelKey, text: str) -> Vector | None:
        if model != self._model:
            return None
        return self._vectors.get(text)

    def put(self, model: ModelKey, text: str, vector: Vector) -> None:
        if model != self._model:
            # Another model: nothing kept so far can be served any more.
            self._model = model
            self._vectors = LruCache(self._max)
        self._vectors.put(text, vector)

    def __len__(self) -> int:
        return len(self._vectors)
