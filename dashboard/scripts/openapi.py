"""Write the gateway's OpenAPI document to dashboard/openapi.json, the source of the typed
client (src/api/schema.d.ts): a route or schema change the UI does not follow fails its build.

Run with the project's virtualenv: ``.venv/bin/python dashboard/scripts/openapi.py``."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from exocortex.gateway.app import create_app
from exocortex.gateway.settings import GatewaySettings

TARGET = Path(__file__).resolve().parent.parent / "openapi.json"
# The document does not depend on keys or address; these only let the app be built anywhere.
LOOPBACK_WITHOUT_KEYS = {"EXO_API_KEYS": "", "EXO_GATEWAY_HOST": "127.0.0.1"}


def main() -> int:
    document = create_app(GatewaySettings.model_validate(LOOPBACK_WITHOUT_KEYS)).openapi()
    text = json.dumps(document, indent=1, sort_keys=True) + "\n"
    if not TARGET.exists() or TARGET.read_text() != text:
        TARGET.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
