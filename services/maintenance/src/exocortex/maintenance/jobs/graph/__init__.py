"""Graph upkeep: co-retrieval links, co_occurs densification, orphan entity pruning."""
