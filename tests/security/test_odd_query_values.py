"""Every query parameter of every route, given a value far longer than any name or in odd
Unicode (bidirectional controls, astral characters, combining marks, lone surrogates escaped as
text), gets a 4xx or a normal answer, never a 5xx. Generated fuzzing rarely produces such
values for a plain ``string`` parameter; this sweeps them deterministically, one parameter at
a time so the others keep their defaults and the request reaches the parameter's own use."""

from __future__ import annotations

from typing import Any

import httpx

ODD_VALUES = [
    "A" * 300,
    "x/" * 200,
    "\u202e\u2066UTC\u2069",
    "𝔘𝔗ℭ🕰️" * 20,
    "e\u0301" * 150,
    "\\udcff",
    "%00%2e%2e%2f",
]
# An id no row has, for path parameters: the read answers 404 and the query is still parsed.
MISSING_ID = "01NOTHEREATALL0000000000000"


def _path(template: str, parameters: list[dict[str, Any]]) -> str:
    for parameter in parameters:
        if parameter.get("in") == "path":
            template = template.replace("{" + parameter["name"] + "}", MISSING_ID)
    return template


async def test_no_query_parameter_value_gets_a_5xx(api: httpx.AsyncClient) -> None:
    document = (await api.get("/openapi.json")).json()
    failures: list[str] = []
    swept = 0
    for template, item in document["paths"].items():
        if not template.startswith("/api/"):
            continue
        for method, operation in item.items():
            if method not in ("get", "post", "put", "patch", "delete"):
                continue
            parameters = operation.get("parameters", [])
            path = _path(template, parameters)
            # A write is sent with an empty object and an empty list as its body, so a route
            # taking either reaches the parameter's own use.
            bodies: list[Any] = [None] if "requestBody" not in operation else [{}, []]
            for parameter in parameters:
                if parameter.get("in") != "query":
                    continue
                for value, body in ((v, b) for v in ODD_VALUES for b in bodies):
                    swept += 1
                    reply = await api.request(
                        method.upper(), path, params={parameter["name"]: value}, json=body
                    )
                    if reply.status_code >= 500:
                        failures.append(
                            f"{method.upper()} {path}?{parameter['name']}={value[:20]!r}… "
                            f"body {body!r}: {reply.status_code} {reply.text[:200]}"
                        )
    assert swept >= 100, swept
    assert not failures, "\n".join(failures)
