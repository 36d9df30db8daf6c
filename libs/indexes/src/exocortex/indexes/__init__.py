"""Vector and keyword index projections and their adapters.

Import the adapters from their own modules (or use :mod:`.factory`); this package only re-exports
the engine-neutral interface so importing it never loads an engine.
"""

from exocortex.indexes.base import (
    IndexDocument,
    IndexFilter,
    IndexHit,
    KeywordIndex,
    Vector,
    VectorIndex,
)

__all__ = ["IndexDocument", "IndexFilter", "IndexHit", "KeywordIndex", "Vector", "VectorIndex"]
