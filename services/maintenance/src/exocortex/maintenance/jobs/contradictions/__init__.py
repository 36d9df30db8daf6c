"""Contradictions: batch detection over a whole namespace (the same table enrichment feeds with
its per-memory candidates), listing, and resolving or dismissing them."""
