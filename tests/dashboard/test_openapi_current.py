"""The dashboard's typed client is generated from dashboard/openapi.json (the image builds it
with no Python at hand), so that file must be the gateway's current OpenAPI document: a route
or field changed without `make dashboard` fails here, and then the UI's type check."""

from __future__ import annotations

import json
from pathlib import Path

from exocortex.gateway.app import create_app
from exocortex.gateway.settings import GatewaySettings

COMMITTED = Path(__file__).resolve().parents[2] / "dashboard" / "openapi.json"


def test_committed_openapi_document_is_the_gateways_current_one() -> None:
    settings = GatewaySettings.model_validate({"EXO_API_KEYS": "", "EXO_GATEWAY_HOST": "127.0.0.1"})
    current = create_app(settings).openapi()
    committed = json.loads(COMMITTED.read_text())
    changed = sorted(set(current["paths"]) ^ set(committed["paths"]))
    assert not changed, f"routes added or removed since dashboard/openapi.json: {changed}"
    assert committed == json.loads(json.dumps(current)), (
        "dashboard/openapi.json is stale: run `make dashboard` and commit it"
    )
