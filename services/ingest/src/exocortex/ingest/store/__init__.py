"""Storing memories: validation and preparation, hash and semantic dedup (variants, merge mode),
chunking, embedding, bulk import, and the rows and events committed together."""
