"""Names that pick a resource from files or a registry, checked before the lookup.

A time zone name is a path under the tz database: ``ZoneInfo`` opens it as a file, so a name
that is too long, names a folder (``America``) or is not a normalised relative path fails with
an ``OSError`` or ``ValueError`` from the file system rather than "not found". Every such name
is therefore bounded and matched against what the registry can hold before it is looked up, and
every failure is the same clear ``InvalidArgument`` naming the field.
"""

from __future__ import annotations

import re
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from exocortex.core.errors import InvalidArgument

# The longest IANA name is 32 characters (``America/Argentina/ComodRivadavia``); leave room.
MAX_TIME_ZONE_CHARS = 64
# IANA names: ASCII components of letters, digits, ``_``, ``+`` and ``-`` joined by ``/``.
_ZONE_NAME = re.compile(r"[A-Za-z0-9_+\-]+(?:/[A-Za-z0-9_+\-]+)*")
DEFAULT_TIME_ZONE = "UTC"


def time_zone(name: str | None, field: str = "timezone") -> ZoneInfo:
    """The zone ``name`` (UTC when empty), or ``InvalidArgument`` naming ``field``."""
    if not name:
        return ZoneInfo(DEFAULT_TIME_ZONE)
    if len(name) > MAX_TIME_ZONE_CHARS:
        raise InvalidArgument(
            f"{field} is not a time zone: at most {MAX_TIME_ZONE_CHARS} characters "
            "(use an IANA name such as Europe/Paris)",
            field=field,
        )
    if not _ZONE_NAME.fullmatch(name):
        raise InvalidArgument(
            f"unknown time zone {name!r} (use an IANA name such as Europe/Paris)", field=field
        )
    try:
        return ZoneInfo(name)
    except (ZoneInfoNotFoundError, ValueError, OSError) as exc:
        # OSError: a folder of the tz database (``America``) or an unreadable entry.
        raise InvalidArgument(
            f"unknown time zone {name!r} (use an IANA name such as Europe/Paris)", field=field
        ) from exc
