"""Changing what is stored: memory updates, archive and restore, deletes, bulk edits, links,
entity edits and settings."""
