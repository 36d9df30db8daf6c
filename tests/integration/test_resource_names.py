"""Parameters that name a resource looked up in files (time zones, read from the tz database)
are bounded and checked: a name that is too long, names a folder of the database, is not a
normalised relative path or is not ASCII is a 400 naming the parameter, never a 5xx."""

from __future__ import annotations

import httpx
import pytest

BAD_ZONES = [
    "A" * 300,  # longer than any file name: ``ZoneInfo`` fails with "File name too long"
    "America",  # a folder of the tz database, not a zone
    "../../etc/passwd",
    "/UTC",
    "Europe/",
    "Ëurope/Pärïs",
    "\u202eUTC",
    "🕰️",
]

ROUTES = [
    ("/api/memories/recent", {}),
    ("/api/memories/diff", {"since": "2026-01-01"}),
    ("/api/timeline", {}),
    ("/api/temporal-stats", {}),
    ("/api/hierarchy", {}),
]


@pytest.mark.parametrize("name", BAD_ZONES)
async def test_a_bad_time_zone_is_a_400_on_every_route(
    api: httpx.AsyncClient, namespace: str, name: str
) -> None:
    for path, extra in ROUTES:
        reply = await api.get(path, params={"namespace": namespace, "timezone": name, **extra})
        assert reply.status_code == 400, (path, reply.text)
        assert reply.json()["field"] == "timezone", (path, reply.text)
    search = await api.post(
        "/api/memories/search",
        json={"query": "anything", "namespace": namespace, "after": "2026-01-01", "timezone": name},
    )
    assert search.status_code == 400, search.text
    assert search.json()["field"] == "timezone"


async def test_a_real_time_zone_still_works(api: httpx.AsyncClient, namespace: str) -> None:
    for path, extra in ROUTES:
        reply = await api.get(
            path,
            params={"namespace": namespace, "timezone": "America/Argentina/Buenos_Aires", **extra},
        )
        assert reply.status_code == 200, (path, reply.text)
