"""The embedding service: texts → vectors with a local sentence-transformers model."""
