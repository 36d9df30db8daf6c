"""Pure text transforms applied to every memory before anything else sees it."""

from __future__ import annotations

import hashlib
import re
from typing import Any

# Candidates only: whether a candidate really is a tag is decided by the scanner below, so no
# pattern here can backtrack over the rest of the text.
_TAG_START = re.compile(r"<(/?)private", re.IGNORECASE)
_CLOSE_TAIL = re.compile(r"\s*>")
_WORD_CHAR = re.compile(r"\w")
_MANY_NEWLINES = re.compile(r"\n{3,}")
_WHITESPACE = re.compile(r"\s+")


def remove_private(text: str) -> str:
    """Remove every ``<private>…</private>`` block, leaving the rest exactly as it was.

    Tags are matched in any case, the opening one with optional attributes or whitespace
    (``<private class="x">``, ``<PRIVATE >``), the closing one with optional whitespace
    (``</private >``). Blocks nest: text is public again only once every opened block is closed,
    so an inner closing tag never reveals the outer block's tail. An opening tag that is never
    closed (or whose ``>`` never comes) hides everything after it, so a forgotten closing tag
    never leaks the rest. A closing tag with no block open is removed and changes nothing else.

    One pass over the text: each candidate is looked at once and the search for an opening
    tag's ``>`` only moves forward, so adversarial input (thousands of openers, no ``>``) stays
    linear.
    """
    public: list[str] = []
    depth = 0
    pos = 0  # where the text not yet copied or dropped begins
    # The first '>' after the last opener searched from (-1: there is none); None until the
    # first search, and again once an opener lies past it.
    gt: int | None = None
    for match in _TAG_START.finditer(text):
        start = match.start()
        if start < pos:
            continue  # inside a tag already consumed (e.g. in an opener's attributes)
        after = match.end()
        if match.group(1):
            tail = _CLOSE_TAIL.match(text, after)
            if tail is None:
                continue  # "</privateer>" and the like: ordinary text
            if depth == 0:
                public.append(text[pos:start])  # a stray closer: dropped, nothing revealed
            else:
                depth -= 1
            pos = tail.end()
            continue
        if _WORD_CHAR.match(text, after):
            continue  # "<privately" is a word, not a tag
        if depth == 0:
            public.append(text[pos:start])
        if gt is None or (gt != -1 and gt < after):
            gt = text.find(">", after)
        if gt == -1:
            return "".join(public)  # an opener that never ends hides the rest
        depth += 1
        pos = gt + 1
    if depth == 0:
        public.append(text[pos:])
    return "".join(public)


def strip_private(content: str) -> str:
    """Remove every private block (see :func:`remove_private`), collapse blank-line runs, trim."""
    return _MANY_NEWLINES.sub("\n\n", remove_private(content)).strip()


def strip_private_field(value: str) -> str:
    """A one-line field (title, name, alias, tag, uri) without its private blocks, trimmed."""
    return remove_private(value).strip()


def strip_private_json(value: Any) -> Any:
    """A JSON value with private blocks removed from every string in it, keys included; an
    entry whose key is wholly private is dropped (its value would say what the key hid)."""
    if isinstance(value, str):
        return remove_private(value)
    if isinstance(value, list):
        return [strip_private_json(v) for v in value]
    if isinstance(value, dict):
        out: dict[str, Any] = {}
        for key, item in value.items():
            clean_key = remove_private(str(key))
            if clean_key.strip() or not str(key).strip():
                out[clean_key] = strip_private_json(item)
        return out
    return value


def content_hash(content: str, *, normalize_whitespace: bool = True) -> str:
    """sha256 of the content, lower-cased with whitespace collapsed (the dedup key)."""
    text = (
        _WHITESPACE.sub(" ", content.lower()).strip() if normalize_whitespace else content.strip()
    )
    return hashlib.sha256(text.encode("utf-8")).hexdigest()
