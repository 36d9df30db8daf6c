"""Settings over HTTP: masking, string-only values, masked values skipped, typed known keys."""

from __future__ import annotations

import httpx

from exocortex.testing.settings import ApplySettings


async def test_secrets_are_masked_and_masked_values_skipped(
    api: httpx.AsyncClient, change_settings: ApplySettings
) -> None:
    key, plain = "ai.api_key", "ai.model"
    # Through the fixture first, so whatever the stack had is put back after the test.
    await change_settings({key: "", plain: ""})
    reply = await api.patch("/api/settings", json={key: "sk-abcdef", plain: "visible"})
    assert reply.status_code == 200, reply.text
    shown = reply.json()
    assert shown[key] == "sk••••ef"
    assert shown[plain] == "visible"
    assert (await api.get("/api/settings")).json()[key] == "sk••••ef"

    # Sending the masked value back (as a form would) keeps the real secret.
    again = await api.patch("/api/settings", json={key: "sk••••ef", plain: "changed"})
    assert again.json()[key] == "sk••••ef"
    assert again.json()[plain] == "changed"
    export = await api.get("/api/export", params={"namespace": "t-none"})
    assert export.json()["settings"][key] == "sk••••ef"
    assert "sk-abcdef" not in export.text

    short = await api.patch("/api/settings", json={key: "abcd"})
    assert short.json()[key] == "••••"


async def test_non_string_value_is_400_naming_the_key(api: httpx.AsyncClient) -> None:
    reply = await api.patch("/api/settings", json={"scoring.rrf_k": 60})
    assert reply.status_code == 400
    assert reply.json()["field"] == "scoring.rrf_k"
    assert "string" in reply.json()["detail"]


async def test_known_settings_keep_their_kind(api: httpx.AsyncClient) -> None:
    before = (await api.get("/api/settings")).json()
    for key, bad in (
        ("scoring.rrf_k", "sixty"),
        ("dedup.enabled", "yes please"),
        ("tags.alias_map", "[1]"),
    ):
        reply = await api.patch("/api/settings", json={key: bad})
        assert reply.status_code == 400, key
        assert reply.json()["field"] == key
    # Nothing of a refused change is stored.
    current = (await api.get("/api/settings")).json()
    assert {k: current[k] for k in ("scoring.rrf_k", "dedup.enabled", "tags.alias_map")} == {
        k: before[k] for k in ("scoring.rrf_k", "dedup.enabled", "tags.alias_map")
    }


async def test_invalid_json_body_is_400(api: httpx.AsyncClient) -> None:
    reply = await api.patch(
        "/api/settings", content=b"{not json", headers={"content-type": "application/json"}
    )
    assert reply.status_code == 400
    assert reply.json()["detail"] == "Invalid JSON in request body"
