"""The keyed gateway of the threat model (see exocortex.testing.keyed)."""

from exocortex.testing.keyed import ADMIN, RO, RW, Keyed, keyed

__all__ = ["ADMIN", "RO", "RW", "Keyed", "keyed"]
