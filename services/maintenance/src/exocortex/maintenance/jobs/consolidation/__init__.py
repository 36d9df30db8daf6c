"""Consolidation: clusters of similar active memories become one summary memory; the sources
are superseded by it (archived, never deleted)."""
