"""What a PATCH changes: the checked, normalised columns and tags of one memory update (no
I/O)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from exocortex.core.domain.keywords import memory_keywords
from exocortex.core.domain.metadata import infer_is_metadata
from exocortex.core.domain.tags import normalize_tags
from exocortex.core.domain.text import content_hash
from exocortex.core.errors import InvalidArgument
from exocortex.ingest.store import validation
from exocortex.ingest.store.config import WriteConfig
from exocortex.ingest.store.model import Row
from exocortex.ingest.store.prepare import ATTRIBUTION, clean_content
from exocortex.ingest.update.model import MemoryChanges

CLEARABLE = ("expires_at", "source_uri", *ATTRIBUTION)


@dataclass
class Patch:
    columns: dict[str, Any] = field(default_factory=dict)
    tags: list[str] | None = None
    content_changed: bool = False
    # The metadata keys sent (``None`` deletes one); merged into the row the patch is built on,
    # which the writer rebuilds on the locked row when another write came first.
    metadata_changes: dict[str, Any] | None = None
    explicit_is_metadata: bool = False
    # The new text's token vectors, from the run that made its vector (see store/tokens.py).
    tokens: bytes | None = None


def merge_metadata(current: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    merged = {**current, **changes}
    return {k: v for k, v in merged.items() if v is not None}


def build_patch(req: MemoryChanges, current: Row, config: WriteConfig, *, max_chars: int) -> Patch:
    """The columns and tags ``req`` changes on ``current``, checked and normalised."""
    patch = Patch()
    cols = patch.columns
    for name in req.clear_fields:
        if name not in CLEARABLE:
            raise InvalidArgument(
                f"only {', '.join(CLEARABLE)} can be cleared", field=name or "clear_fields"
            )
        cols[name] = None
    if req.content is not None:
        content = clean_content(req.content, max_chars)
        if content != current["content"]:
            cols["content"] = content
            cols["content_hash"] = content_hash(
                content, normalize_whitespace=config.normalize_whitespace
            )
            patch.content_changed = True
    if req.content_type is not None:
        cols["content_type"] = validation.check_choice(
            req.content_type, validation.CONTENT_TYPES, "content_type"
        )
    if req.tags is not None:
        validation.check_tags(list(req.tags))
        patch.tags = normalize_tags(req.tags, config.aliases)
    if req.importance is not None:
        cols["importance"] = validation.check_range(req.importance, 0, 1, "importance")
    if req.valence is not None:
        cols["valence"] = validation.check_range(req.valence, -1, 1, "valence")
    if req.expires_at is not None:
        cols["expires_at"] = req.expires_at
    if req.source_uri is not None:
        cols["source_uri"] = validation.optional_text(req.source_uri)
    if req.namespace is not None:
        cols["namespace"] = validation.check_namespace(req.namespace)
    for key, value in req.attribution.given().items():
        cols[key] = validation.optional_text(value)
    metadata = current["metadata"]
    if req.metadata_patch_json:
        patch.metadata_changes = validation.parse_metadata(req.metadata_patch_json)
        metadata = merge_metadata(metadata, patch.metadata_changes)
        cols["metadata"] = metadata
    if req.is_active is not None and req.is_active != current["is_active"]:
        cols["is_active"] = req.is_active
        if req.is_active:
            cols["superseded_by"] = None
    if req.is_metadata is not None:
        cols["is_metadata"] = req.is_metadata
        patch.explicit_is_metadata = True
    elif patch.tags is not None or req.metadata_patch_json:
        cols["is_metadata"] = infer_is_metadata(
            explicit=None,
            benchmark=False,
            tags=patch.tags if patch.tags is not None else current["tags"],
            metadata=metadata,
            settings=config.raw,
        )
    if patch.content_changed or patch.tags is not None:
        cols["keywords"] = memory_keywords(
            cols["content"] if "content" in cols else current["content"],
            patch.tags if patch.tags is not None else current["tags"],
            config.entity_confidence,
        )
    return patch
