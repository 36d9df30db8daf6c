"""Exocortex."""
