"""Archival of stale, abandoned and expired memories (never deleted)."""
