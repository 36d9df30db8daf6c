"""Bad input gets a 4xx naming the field, never a 5xx, and leaves the service working: NUL
characters, JSON nested 1,500 levels deep, NaN/Infinity, out-of-range settings and absurd
offsets, over the real REST API of every route family that writes or searches."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx

from .conftest import Keyed

DEEP = 1500


async def _ids(keyed: Keyed) -> dict[str, str]:
    """A memory, a goal and an entity in namespace a, for the routes that take an id."""
    a = keyed.a
    memory = await keyed.admin.post(
        "/api/memories", json={"content": "A memory for bad-input tests.", "namespace": a}
    )
    goal = await keyed.admin.post("/api/goals", json={"title": "Bad input goal", "namespace": a})
    entity = await keyed.admin.post("/api/entities", json={"name": "BadInputCo", "namespace": a})
    for reply in (memory, goal, entity):
        assert reply.status_code == 201, reply.text
    return {"memory": memory.json()["id"], "goal": goal.json()["id"], "entity": entity.json()["id"]}


def _families(a: str, ids: dict[str, str]) -> list[tuple[str, str, dict[str, Any], str]]:
    """(method, path, a valid body, the string field each case spoils)."""
    return [
        ("POST", "/api/memories", {"content": "ok", "namespace": a}, "content"),
        ("PATCH", f"/api/memories/{ids['memory']}", {"content": "ok"}, "content"),
        ("POST", "/api/memories/search", {"query": "ok", "namespace": a}, "query"),
        (
            "POST",
            "/api/memories/import",
            {"memories": [{"content": "ok", "namespace": a}]},
            "memories.0.content",
        ),
        ("POST", "/api/goals", {"title": "ok", "namespace": a}, "title"),
        ("PATCH", f"/api/goals/{ids['goal']}", {"title": "ok"}, "title"),
        ("POST", "/api/entities", {"name": "ok", "namespace": a}, "name"),
        ("PATCH", f"/api/entities/{ids['entity']}", {"name": "ok"}, "name"),
        (
            "POST",
            "/api/memories/ingest",
            {"files": [{"name": "doc.md", "content": "ok"}], "namespace": a},
            "files.0.content",
        ),
        ("PATCH", "/api/settings", {"ai.model": "ok"}, "ai.model"),
    ]


def _set(body: dict[str, Any], dotted: str, value: Any) -> dict[str, Any]:
    out: dict[str, Any] = json.loads(json.dumps(body))
    parts = dotted.split(".")
    # Setting keys contain dots themselves: a flat body is addressed by the whole name.
    if dotted in out:
        out[dotted] = value
        return out
    target: Any = out
    for part in parts[:-1]:
        target = target[int(part)] if isinstance(target, list) else target[part]
    last = parts[-1]
    if isinstance(target, list):
        target[int(last)] = value
    else:
        target[last] = value
    return out


async def _send(client: httpx.AsyncClient, method: str, path: str, raw: bytes) -> httpx.Response:
    return await client.request(
        method, path, content=raw, headers={"content-type": "application/json"}
    )


async def _still_works(keyed: Keyed, label: str) -> None:
    stored = await keyed.admin.post(
        "/api/memories",
        json={"content": f"Still working after {label}.", "namespace": keyed.a},
    )
    assert stored.status_code == 201, stored.text
    found = await keyed.admin.post(
        "/api/memories/search", json={"query": f"still working after {label}", "namespace": keyed.a}
    )
    assert found.status_code == 200, found.text


def _assert_4xx(reply: httpx.Response, what: str, field: str | None = None) -> None:
    assert 400 <= reply.status_code < 500, f"{what}: {reply.status_code} {reply.text[:300]}"
    if field is not None:
        assert reply.json().get("field") == field, f"{what}: {reply.text[:300]}"


async def test_nul_characters_are_refused_naming_the_field(keyed: Keyed) -> None:
    ids = await _ids(keyed)
    for method, path, body, field in _families(keyed.a, ids):
        spoiled = _set(body, field, "before\x00after")
        reply = await keyed.admin.request(method, path, json=spoiled)
        _assert_4xx(reply, f"NUL in {method} {path}", field)
        assert "NUL" in reply.json()["detail"]
    # In a tag, in metadata values and keys, in the query string and the path.
    tagged = await keyed.admin.post(
        "/api/memories", json={"content": "tags", "namespace": keyed.a, "tags": ["ok", "t\x00"]}
    )
    _assert_4xx(tagged, "NUL in a tag", "tags.1")
    meta = await keyed.admin.patch(
        f"/api/memories/{ids['memory']}", json={"metadata": {"k": {"deep": "v\x00"}}}
    )
    _assert_4xx(meta, "NUL in metadata", "metadata.k.deep")
    key = await keyed.admin.post("/api/goals", json={"title": "g", "metadata": {"k\x00": 1}})
    _assert_4xx(key, "NUL in a metadata key")
    listed = await keyed.admin.get("/api/memories/recent", params={"tags": "a\x00b"})
    _assert_4xx(listed, "NUL in a query parameter", "tags")
    by_id = await keyed.admin.get("/api/memories/abc%00def")
    _assert_4xx(by_id, "NUL in the path", "path")
    await _still_works(keyed, "NUL characters")


async def test_deeply_nested_json_is_refused(keyed: Keyed) -> None:
    ids = await _ids(keyed)
    nested = b"[" * DEEP + b"]" * DEEP
    for method, path, body, _field in _families(keyed.a, ids):
        raw = json.dumps(body).encode()
        # Put the deep value in as an extra member: the depth check runs before any model.
        raw = raw[:-1] + b', "metadata": ' + nested + b"}"
        reply = await _send(keyed.admin, method, path, raw)
        _assert_4xx(reply, f"deep JSON to {method} {path}", "body")
        assert "nested deeper" in reply.json()["detail"]
    unbalanced = await _send(keyed.admin, "POST", "/api/memories", b"[" * 100_000)
    _assert_4xx(unbalanced, "unbalanced deep JSON")
    await _still_works(keyed, "deep JSON")


async def test_nan_and_infinity_are_refused(keyed: Keyed) -> None:
    ids = await _ids(keyed)
    a = keyed.a
    token_cases: list[tuple[str, str, bytes, str]] = [
        ("POST", "/api/memories", b'{"content": "x", "importance": NaN}', "importance"),
        ("PATCH", f"/api/memories/{ids['memory']}", b'{"valence": -Infinity}', "valence"),
        ("PATCH", f"/api/memories/{ids['memory']}", b'{"metadata": {"x": NaN}}', "metadata.x"),
        ("POST", "/api/memories/search", b'{"query": "q", "min_score": Infinity}', "min_score"),
        ("POST", "/api/goals", b'{"title": "t", "metadata": {"p": [1, NaN]}}', "metadata.p.1"),
        ("POST", "/api/entities", b'{"name": "n", "metadata": {"w": Infinity}}', "metadata.w"),
        (
            "POST",
            "/api/memories/import",
            b'{"memories": [{"content": "x", "importance": NaN}]}',
            "memories.0.importance",
        ),
    ]
    for method, path, raw, field in token_cases:
        reply = await _send(keyed.admin, method, path, raw)
        _assert_4xx(reply, f"non-finite token to {method} {path}", field)
    # The same values spelled as strings, which a lax float parser would accept.
    string_cases: list[tuple[str, str, dict[str, Any], str]] = [
        (
            "POST",
            "/api/memories",
            {"content": "x", "namespace": a, "importance": "NaN"},
            "importance",
        ),
        ("POST", "/api/memories/search", {"query": "q", "min_score": "Infinity"}, "min_score"),
        ("PATCH", "/api/settings", {"scoring.rrf_k": "nan"}, "scoring.rrf_k"),
        ("PATCH", "/api/settings", {"scoring.vector_weight": "inf"}, "scoring.vector_weight"),
        (
            "PATCH",
            "/api/settings",
            {"dedup.similarity_threshold": "1e999"},
            "dedup.similarity_threshold",
        ),
    ]
    for method, path, body, field in string_cases:
        reply = await keyed.admin.request(method, path, json=body)
        _assert_4xx(reply, f"non-finite string to {method} {path}", field)
    # The words themselves in text are fine.
    words = await keyed.admin.post(
        "/api/memories",
        json={"content": "NaN and Infinity are words in this note.", "namespace": a},
    )
    assert words.status_code == 201, words.text
    await _still_works(keyed, "NaN and Infinity")


async def test_settings_are_checked_against_their_schema(keyed: Keyed) -> None:
    before = (await keyed.admin.get("/api/settings")).json()
    for body, field in [
        ({"no.such.setting": "1"}, "no.such.setting"),
        ({"dedup.candidate_pool": "-5"}, "dedup.candidate_pool"),
        ({"dedup.candidate_pool": "2.5"}, "dedup.candidate_pool"),
        ({"dedup.similarity_threshold": "7"}, "dedup.similarity_threshold"),
        ({"search.neighbour_window": "99999999999999999999999"}, "search.neighbour_window"),
        ({"search.metadata_mode": "sometimes"}, "search.metadata_mode"),
        ({"ai.base_url": "file:///etc/passwd", "ai.api_key": "k"}, "ai.base_url"),
        # One bad value spoils the whole PATCH: nothing of it is written.
        ({"scoring.rrf_k": "7", "dedup.max_variants": "-1"}, "dedup.max_variants"),
    ]:
        reply = await keyed.admin.patch("/api/settings", json=body)
        _assert_4xx(reply, f"settings {body}", field)
    assert (await keyed.admin.get("/api/settings")).json() == before
    await _still_works(keyed, "bad settings")


async def test_absurd_offsets_and_limits_are_refused(keyed: Keyed) -> None:
    huge = 10**30
    body_cases = [
        ("/api/memories/search", {"query": "q", "offset": huge}, "offset"),
        ("/api/memories/search", {"query": "q", "offset": 10_001}, "offset"),
        ("/api/memories/search", {"query": "q", "limit": 10**9}, "limit"),
        ("/api/memories/search", {"query": "q", "limit": -1}, "limit"),
        ("/api/memories/search", {"query": "q", "max_tokens": huge}, "max_tokens"),
        ("/api/memories/context-graph", {"query": "q", "limit": huge}, "limit"),
    ]
    for path, body, field in body_cases:
        reply = await keyed.admin.post(path, json=body)
        _assert_4xx(reply, f"{path} {body}", field)
    query_cases = [
        ("/api/memories/archived", {"offset": str(huge)}, "offset"),
        ("/api/memories/archived", {"limit": "0"}, "limit"),
        ("/api/goals", {"limit": str(huge)}, "limit"),
        ("/api/entities", {"limit": "-1"}, "limit"),
        ("/api/timeline", {"limit": str(huge)}, "limit"),
    ]
    for path, params, field in query_cases:
        reply = await keyed.admin.get(path, params=params)
        _assert_4xx(reply, f"{path} {params}", field)
    # The forgiving list clamps instead of failing (the original API's behaviour), but never 5xx.
    recent = await keyed.admin.get("/api/memories/recent", params={"offset": str(huge)})
    assert recent.status_code == 200, recent.text
    await _still_works(keyed, "absurd offsets")


async def test_base_url_change_needs_an_admin_key_and_the_api_key_again(keyed: Keyed) -> None:
    keys = ("ai.api_key", "ai.base_url", "ai.provider", "ai.model")
    await keyed.admin.patch("/api/settings", json=dict.fromkeys(keys, ""))
    try:
        stored = await keyed.admin.patch("/api/settings", json={"ai.api_key": "sk-stored-123456"})
        assert stored.status_code == 200, stored.text
        masked = stored.json()["ai.api_key"]

        # Without the key, or with the masked key sent back: refused, nothing changes.
        for body in (
            {"ai.base_url": "https://attacker.example"},
            {"ai.base_url": "https://attacker.example", "ai.api_key": masked},
        ):
            refused = await keyed.admin.patch("/api/settings", json=body)
            _assert_4xx(refused, f"base url change {body}", "ai.base_url")
            assert "ai.api_key" in refused.json()["detail"]
        # The provider picks the host when no URL is set: the same rule.
        provider = await keyed.admin.patch("/api/settings", json={"ai.provider": "openai"})
        _assert_4xx(provider, "provider change without the key", "ai.provider")
        assert "ai.api_key" in provider.json()["detail"]
        # A scoped key (even read-write) may not touch it at all.
        scoped = await keyed.rw.patch(
            "/api/settings",
            json={"ai.base_url": "https://attacker.example", "ai.api_key": "sk-new-654321"},
        )
        assert scoped.status_code == 403, scoped.text
        current = (await keyed.admin.get("/api/settings")).json()
        assert current.get("ai.base_url", "") == ""
        assert current["ai.api_key"] == masked

        # Re-entering the key (or clearing it) with the new URL is accepted.
        moved = await keyed.admin.patch(
            "/api/settings",
            json={"ai.base_url": "https://proxy.example", "ai.api_key": "sk-proxy-777777"},
        )
        assert moved.status_code == 200, moved.text
        assert moved.json()["ai.base_url"] == "https://proxy.example"
        # The same URL again needs nothing more.
        same = await keyed.admin.patch(
            "/api/settings", json={"ai.base_url": "https://proxy.example/"}
        )
        assert same.status_code == 200, same.text
        cleared = await keyed.admin.patch(
            "/api/settings", json={"ai.base_url": "", "ai.api_key": ""}
        )
        assert cleared.status_code == 200, cleared.text
    finally:
        await keyed.admin.patch("/api/settings", json=dict.fromkeys(keys, ""))


async def test_concurrent_metadata_patches_keep_every_key(keyed: Keyed) -> None:
    stored = await keyed.admin.post(
        "/api/memories",
        json={"content": "Patched by many at once.", "namespace": keyed.a, "metadata": {"o": 1}},
    )
    assert stored.status_code == 201, stored.text
    memory_id = stored.json()["id"]

    async def patch(i: int) -> httpx.Response:
        return await keyed.admin.patch(
            f"/api/memories/{memory_id}", json={"metadata": {f"key{i}": i}}
        )

    replies = await asyncio.gather(*(patch(i) for i in range(20)))
    assert all(r.status_code == 200 for r in replies), [r.text for r in replies]
    metadata = (await keyed.admin.get(f"/api/memories/{memory_id}")).json()["metadata"]
    assert metadata == {"o": 1, **{f"key{i}": i for i in range(20)}}


async def test_a_large_markdown_document_ingests(keyed: Keyed) -> None:
    # 4 MB of short sections inside one private block: the worst case for the splitter (every
    # section merges into the first), with little left to embed once the block is removed.
    short = "## h\n\nshort body\n"
    doc = (
        "## Public part\n\nThe large document's public text, long enough to be a section.\n"
        "<private>\n" + short * (4_000_000 // len(short)) + "</private>\n"
    )
    reply = await keyed.admin.post(
        "/api/memories/ingest",
        json={"files": [{"name": "big.md", "content": doc}], "namespace": keyed.a},
        timeout=120,
    )
    assert reply.status_code == 200, reply.text[:500]
    assert reply.json()["stored"] == 1
    memory_id = reply.json()["files"][0]["memory_ids"][0]
    content = (await keyed.admin.get(f"/api/memories/{memory_id}")).json()["content"]
    assert "public text" in content
    assert "short body" not in content
