"""The caller's namespace scope, carried with each request from the gateway to every service.

The gateway authorises a request against the caller's API key, then sets :data:`caller_scope`
to the namespaces that key may use (``None``: every namespace). gRPC clients opened with
:func:`exocortex.core.rpc.client.open_channel` send it as the ``x-exo-namespaces`` metadata
entry, and every gRPC server sets it again for the handler (``core/rpc/server.py``), as with the
correlation id. Repositories and services then filter every read and check every write against
it, so a key limited to some namespaces cannot reach another even through a gateway bug: the
gateway's check is the first line, this is the second.

Work that no caller started (consumers, the projector, jobs) runs with no scope: every
namespace.
"""

from __future__ import annotations

import json
from contextvars import ContextVar
from typing import Any

from exocortex.core.db.arrays import TextArray
from exocortex.core.errors import InvalidArgument, PermissionDenied

SCOPE_HEADER = "x-exo-namespaces"

# None: every namespace. A frozenset: only these.
caller_scope: ContextVar[frozenset[str] | None] = ContextVar("caller_scope", default=None)


def current_scope() -> frozenset[str] | None:
    return caller_scope.get()


def allows(namespace: str) -> bool:
    scope = caller_scope.get()
    return scope is None or namespace in scope


def scoped_list() -> list[str] | None:
    """The scope as a sorted list for SQL (``namespace = ANY(%s)``), or None for every one."""
    scope = caller_scope.get()
    return None if scope is None else sorted(scope)


def sql_filter(*aliases: str) -> tuple[str, tuple[Any, ...]]:
    """A SQL condition (to AND in) limiting ``alias.namespace`` to the caller's scope for each
    alias (``m`` when none is given), with its parameters; ``("TRUE", ())`` when the caller may
    see every namespace. Every read or write of user data that starts from an id or an edge adds
    it, so an id from another namespace reads as missing.

    An object that joins two rows (a link, a contradiction, a relationship) names the alias of
    each end: it is in scope only when both ends are, so a caller who may see one end only
    neither lists it nor acts on it."""
    namespaces = scoped_list()
    if namespaces is None:
        return "TRUE", ()
    names = aliases or ("m",)
    allowed = TextArray(namespaces)
    condition = " AND ".join(f"{alias}.namespace = ANY(%s)" for alias in names)
    return f"({condition})", (allowed,) * len(names)


def sql_filter_memories(ids: str) -> tuple[str, tuple[Any, ...]]:
    """A SQL condition (to AND in) that every memory whose id is in the SQL array expression
    ``ids`` lies within the caller's scope (ids that no longer exist, and NULLs, are ignored),
    with its parameters; ``("TRUE", ())`` when the caller may see every namespace. For objects
    whose ends are a list of memories (a consolidation's members) or a nullable reference (the
    memory that stated an entity relationship)."""
    namespaces = scoped_list()
    if namespaces is None:
        return "TRUE", ()
    return (
        "NOT EXISTS (SELECT 1 FROM memories scope_end WHERE scope_end.id = ANY("
        + ids
        + ") AND NOT scope_end.namespace = ANY(%s))",
        (TextArray(namespaces),),
    )


def require(namespace: str, field: str = "namespace") -> str:
    """Refuse a write to (or a read naming) a namespace outside the caller's scope."""
    if not allows(namespace):
        raise PermissionDenied(f"this API key may not use namespace {namespace!r}", field=field)
    return namespace


def default_namespace() -> str | None:
    """The namespace a read that names none keeps to: None (every namespace) for a caller who
    may see all, the caller's only namespace, else a refusal asking to name one."""
    scope = caller_scope.get()
    if scope is None:
        return None
    if len(scope) == 1:
        return next(iter(scope))
    raise PermissionDenied(
        "this API key is limited to several namespaces: name one with `namespace`",
        field="namespace",
    )


def encode(scope: frozenset[str]) -> str:
    return json.dumps(sorted(scope), separators=(",", ":"))


def decode(raw: str | bytes) -> frozenset[str]:
    """Parse the metadata value. A malformed value is refused rather than read as "no scope":
    failing open would turn a bug anywhere upstream into a leak."""
    try:
        value = json.loads(raw)
    except ValueError as err:
        raise InvalidArgument(f"malformed {SCOPE_HEADER} metadata") from err
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise InvalidArgument(f"malformed {SCOPE_HEADER} metadata")
    return frozenset(value)
