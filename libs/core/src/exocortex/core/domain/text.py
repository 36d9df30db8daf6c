"""Pure text transforms applied to every memory before anything else sees it."""

from __future__ import annotations

import hashlib
import re

_PRIVATE = re.compile(r"<private>.*?(?:</private>|$)", re.IGNORECASE | re.DOTALL)
_MANY_NEWLINES = re.compile(r"\n{3,}")
_WHITESPACE = re.compile(r"\s+")


def strip_private(content: str) -> str:
    """Remove every ``<private>…</private>`` block (an unclosed block runs to the end, so a
    forgotten closing tag never leaks the rest), collapse blank-line runs, trim."""
    stripped = _PRIVATE.sub("", content)
    return _MANY_NEWLINES.sub("\n\n", stripped).strip()


def content_hash(content: str, *, normalize_whitespace: bool = True) -> str:
    """sha256 of the content, lower-cased with whitespace collapsed (the dedup key)."""
    text = (
        _WHITESPACE.sub(" ", content.lower()).strip() if normalize_whitespace else content.strip()
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
