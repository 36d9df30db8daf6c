"""Repair: re-embedding rows with no vector or another model's, pruning the published outbox,
and (through retrieval) rebuilding the projections."""
