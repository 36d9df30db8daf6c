"""Analytics: read-only reports on how memory is used (access, usefulness, tags, producers,
quality, embeddings, decay candidates, search misses and knowledge gaps)."""
