"""Paths into the server's import folder (``EXO_IMPORT_ROOT``).

Over the API a client sends a document's content; the server reads files from its own disk only
inside a folder its operator named. A requested path is checked here, before any file system
call, so the gateway and ingest refuse the same requests with the same words; ingest then
resolves symbolic links and checks the result again (:func:`confine`).
"""

from __future__ import annotations

import glob
import os
from pathlib import Path, PurePath

from exocortex.core.errors import InvalidArgument, PermissionDenied

# Characters that make a file name a pattern (as the standard library's glob reads them).
GLOB_CHARS = frozenset("*?[")

SEND_CONTENT = (
    "the server does not read files from its own disk: send the document's text as `content` "
    "(with a `name`), or ask the operator to set EXO_IMPORT_ROOT"
)
SEND_TRANSCRIPT = (
    "the server does not read files from its own disk: send the transcript's text as "
    "`transcript`, or ask the operator to set EXO_IMPORT_ROOT"
)


def has_glob(path: str) -> bool:
    return any(c in GLOB_CHARS for c in path)


def relative_import_path(root: PurePath, raw: str, *, field: str) -> PurePath:
    """``raw`` as a path relative to ``root``, without touching the disk.

    Refused: ``~`` (whose home?), ``..`` anywhere (even one that would stay inside: a path that
    climbs is never what an import means), an absolute path outside ``root``, and a pattern in a
    directory part (only the file name may be a glob, so a pattern cannot walk the tree).
    """
    text = raw.strip()
    if not text:
        raise InvalidArgument("the path is empty", field=field)
    if text.startswith("~"):
        raise InvalidArgument(
            "a path with `~` is not allowed; give it relative to the import folder", field=field
        )
    if "\x00" in text:
        raise InvalidArgument("the path contains a NUL character", field=field)
    path = PurePath(text)
    if ".." in path.parts:
        raise InvalidArgument("a path with `..` is not allowed", field=field)
    if path.is_absolute():
        if not path.is_relative_to(root):
            raise InvalidArgument("the path is outside the import folder", field=field)
        path = path.relative_to(root)
    if any(has_glob(part) for part in path.parts[:-1]):
        raise InvalidArgument("only the file name part of a path may be a pattern", field=field)
    if not path.parts:
        raise InvalidArgument("the path names the import folder itself, not a file", field=field)
    return path


def confine(root: Path, raw: str, *, field: str) -> list[Path]:
    """The existing files ``raw`` names inside ``root`` (a glob may name several), each fully
    resolved. A match whose real location (after symbolic links) is outside ``root`` refuses
    the whole request: silently dropping it would hide an attempt to read through a link."""
    real_root = root.resolve(strict=True)
    # An absolute path may be spelled under the root as configured or as resolved.
    spelled = PurePath(raw.strip())
    base = root if spelled.is_absolute() and spelled.is_relative_to(root) else real_root
    relative = relative_import_path(base, raw, field=field)
    candidate = real_root / relative
    if has_glob(relative.name):
        # Sorted so a re-ingest walks the files in the same order; hidden files are not matched.
        pattern = os.path.join(glob.escape(str(candidate.parent)), relative.name)
        matches = [Path(m) for m in sorted(glob.glob(pattern))]
    else:
        matches = [candidate]
    found: list[Path] = []
    for match in matches:
        real = Path(os.path.realpath(match))
        if not real.is_relative_to(real_root):
            raise PermissionDenied(
                "the path leads outside the import folder (through a symbolic link)", field=field
            )
        if real.is_file():
            found.append(real)
    return found
