"""Tags: near-duplicate detection (alias suggestions), merges into the alias map, and the
auto-merge of near-certain pairs."""
