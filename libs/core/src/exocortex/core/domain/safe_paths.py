"""File names built from data (ids, titles, entity names) and the paths they lead to.

Every file the product writes under a name that comes from stored or imported data (the
Obsidian vault on the server and in ``exo``, backups) is named by ``file_stem`` and placed by
``safe_child``: a name is one path component, never absolute, never ``.`` or ``..``, without
separators, NUL or control characters, never a name Windows reserves, and the path it gives
is checked, after following symbolic links, to stay inside its folder. A row with an odd id
(an old export, a row written by hand) therefore cannot place a file anywhere else.
"""

from __future__ import annotations

import re
from pathlib import Path

# Separators, characters Windows or Obsidian refuse in a name, and control characters.
_UNSAFE = re.compile(r'[\\/:*?"<>|#^\[\]\x00-\x1f\x7f]+')
_SPACES = re.compile(r"\s+")
# Names Windows gives to devices, with any extension (``CON.md`` is the console too).
_RESERVED = re.compile(r"^(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³])(\..*)?$", re.IGNORECASE)
NAME_MAX = 255


class UnsafeName(ValueError):
    """A file name that would leave its folder, or that no file system takes as one name."""


def file_stem(text: str, *, limit: int = 100, fallback: str = "untitled") -> str:
    """A readable file name stem for ``text``: unsafe characters become spaces, runs of
    whitespace one space, leading and trailing dots and spaces go, at most ``limit``
    characters, a reserved device name gets a leading ``_``, and ``fallback`` when nothing
    is left. The result always passes ``check_name`` (with any ``.ext`` added)."""
    cleaned = _SPACES.sub(" ", _UNSAFE.sub(" ", text)).strip(" .")
    cleaned = cleaned[: max(1, min(limit, NAME_MAX - 16))].rstrip(" .")
    if not cleaned:
        cleaned = fallback
    if _RESERVED.match(cleaned):
        cleaned = "_" + cleaned
    return cleaned


def check_name(name: str) -> str:
    """``name`` when it is one safe path component, else ``UnsafeName`` saying why."""
    if not name:
        raise UnsafeName("a file name must not be empty")
    if "\x00" in name:
        raise UnsafeName("a file name must not contain NUL")
    if name in (".", ".."):
        raise UnsafeName(f"{name!r} is not a file name")
    if "/" in name or "\\" in name:
        raise UnsafeName(f"a file name must not contain a path separator: {name!r}")
    if any(ord(c) < 32 or ord(c) == 127 for c in name):
        raise UnsafeName(f"a file name must not contain control characters: {name!r}")
    if len(name.encode("utf-8")) > NAME_MAX:
        raise UnsafeName(f"a file name is at most {NAME_MAX} bytes")
    if _RESERVED.match(name) or name != name.rstrip(" ."):
        raise UnsafeName(f"{name!r} is a name some systems reserve")
    return name


def safe_child(folder: Path, *names: str) -> Path:
    """``folder / names[0] / names[1] …`` after checking each name with ``check_name``, and
    that the path, symbolic links followed, is inside ``folder`` (itself resolved), so a link
    planted in the folder cannot lead a write out of it either."""
    if not names:
        raise UnsafeName("no file name given")
    path = folder
    for name in names:
        path = path / check_name(name)
    root = folder.resolve()
    if not path.resolve().is_relative_to(root) or path.resolve() == root:
        raise UnsafeName(f"{'/'.join(names)!r} leads out of {str(folder)!r}")
    return path
