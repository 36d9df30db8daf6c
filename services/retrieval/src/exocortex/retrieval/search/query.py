"""What a search asks for, as the search service takes it (the servicer builds it from the
request), and the limits it is checked against."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from exocortex.api.limits import QUERY_MAX, SEARCH_LIMIT_MAX, TOKENS_MAX, TOKENS_MIN
from exocortex.core import scope
from exocortex.core.domain.tags import alias_map, expand_aliases
from exocortex.core.domain.text import strip_private
from exocortex.core.errors import InvalidArgument
from exocortex.indexes.base import IndexFilter

# The REST API's bounds (declared once in exocortex.api.limits), checked again for gRPC callers.
MAX_LIMIT = SEARCH_LIMIT_MAX
MAX_QUERY_CHARS = QUERY_MAX
MAX_LINKED = 10
MIN_TOKENS, MAX_TOKENS = TOKENS_MIN, TOKENS_MAX


@dataclass(frozen=True)
class SearchQuery:
    """A search. Zero means "not given" for ``limit`` (10), ``max_tokens`` (no budget) and
    ``linked_limit`` (no linked context); None means no such filter."""

    query: str
    namespace: str = ""
    limit: int = 0
    offset: int = 0
    max_tokens: int = 0
    compact: bool = False
    linked_limit: int = 0
    tags: tuple[str, ...] = ()
    content_type: str | None = None
    source: str | None = None
    after: datetime | None = None
    before: datetime | None = None
    min_importance: float | None = None
    min_score: float | None = None
    include_metadata: bool = False
    # The caller's own paraphrase, searched on both sides.
    expanded_query: str = ""
    # Who asked (the snapshot, the context graph), recorded with the search event.
    purpose: str = ""


def validate(q: SearchQuery) -> tuple[str, int]:
    """The query text to search (without its private blocks) and the page size."""
    # A private block in a query is never searched for, embedded or recorded as a miss.
    query = strip_private(q.query)
    if not query:
        if q.query.strip():
            raise InvalidArgument(
                "query is empty after removing <private> blocks; search for public text",
                field="query",
            )
        raise InvalidArgument("query must not be empty", field="query")
    if len(query) > MAX_QUERY_CHARS:
        raise InvalidArgument(f"query is longer than {MAX_QUERY_CHARS} characters", field="query")
    limit = q.limit or 10
    if not 1 <= limit <= MAX_LIMIT:
        raise InvalidArgument(f"limit must be between 1 and {MAX_LIMIT}", field="limit")
    if q.offset < 0:
        raise InvalidArgument("offset must not be negative", field="offset")
    if q.max_tokens and not MIN_TOKENS <= q.max_tokens <= MAX_TOKENS:
        raise InvalidArgument(
            f"max_tokens must be between {MIN_TOKENS} and {MAX_TOKENS}", field="max_tokens"
        )
    if not 0 <= q.linked_limit <= MAX_LINKED:
        raise InvalidArgument(f"linked_limit must be 0..{MAX_LINKED}", field="linked_limit")
    if q.after is not None and q.before is not None and q.after >= q.before:
        raise InvalidArgument("after must be earlier than before", field="after")
    return query, limit


def index_filter(
    q: SearchQuery,
    namespace: str | None,
    settings: dict[str, str],
    exclude_metadata: bool,
) -> IndexFilter:
    """The filter both indexes apply to their hits: the query's filters within the caller's
    namespace scope, its tags widened by the tag aliases."""
    allowed = scope.current_scope()
    return IndexFilter(
        namespace=namespace,
        # No namespace named by a caller limited to several: any of theirs.
        namespaces_any=tuple(sorted(allowed)) if namespace is None and allowed else (),
        tags_any=tuple(expand_aliases(q.tags, alias_map(settings))) if q.tags else (),
        content_type=q.content_type,
        source=q.source,
        created_after=q.after,
        created_before=q.before,
        min_importance=q.min_importance,
        exclude_metadata=exclude_metadata,
    )


def search_namespace(requested: str) -> str | None:
    """The namespace a search keeps to: the one named (which the caller's scope must allow),
    else the caller's only namespace, else None (every namespace the caller may see: the index
    filter then lists them)."""
    if requested:
        return scope.require(requested)
    allowed = scope.current_scope()
    if allowed is not None and len(allowed) == 1:
        return next(iter(allowed))
    return None
