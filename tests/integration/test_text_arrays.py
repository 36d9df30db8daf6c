"""TextArray reaches Postgres as the same strings, whatever characters they hold."""

from __future__ import annotations

import psycopg

from exocortex.core.db.arrays import TextArray

AWKWARD = [
    "01JD3Z8Q6V0000000000000000",
    "",
    "NULL",
    'say "hi"',
    "back\\slash",
    "a,b",
    "{braces}",
    "  spaced  ",
    "naïve café 中文",
    "new\nline",
]


async def test_every_string_round_trips(database_url: str) -> None:
    async with await psycopg.AsyncConnection.connect(database_url, autocommit=True) as conn:
        row = await (await conn.execute("SELECT %s AS a", (TextArray(AWKWARD),))).fetchone()
        assert row is not None
        assert row[0] == AWKWARD
        # As a filter, which is what it is for.
        cur = await conn.execute(
            "SELECT x FROM unnest(%s::text[]) AS x WHERE x = ANY(%s) ORDER BY x",
            (AWKWARD, TextArray(['say "hi"', "NULL", "absent"])),
        )
        assert [r[0] for r in await cur.fetchall()] == ["NULL", 'say "hi"']


async def test_an_empty_array(database_url: str) -> None:
    async with await psycopg.AsyncConnection.connect(database_url, autocommit=True) as conn:
        row = await (await conn.execute("SELECT cardinality(%s) AS n", (TextArray(),))).fetchone()
        assert row is not None
        assert row[0] == 0
