"""Entity backfill: memories enrichment never finished, and memories the entity extractor of
today finds names in but none are linked, are handed to enrichment again."""
