"""The only way the adapter reaches Exocortex: the gateway's REST API over httpx.

Every failure becomes a :class:`ToolError` whose message the agent can act on: the gateway's
problem JSON ``detail`` (and ``field``), a route this server does not have yet, a timeout, or a
gateway that cannot be reached.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import httpx

from mcp.server.mcpserver.exceptions import ToolError

# Headers carrying a remote MCP client's own key, forwarded as they came.
AUTH_HEADERS = ("authorization", "x-api-key")


class UnsupportedRoute(ToolError):
    """The gateway has no such route: an older server, or a feature not released yet."""


class NotFound(ToolError):
    """The route exists but the record (memory, goal, milestone…) does not."""


class GatewayClient:
    def __init__(self, base_url: str, *, api_key: str | None, timeout: float) -> None:
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self.base_url = base_url.rstrip("/")
        self._http = httpx.AsyncClient(base_url=self.base_url, headers=headers, timeout=timeout)

    async def aclose(self) -> None:
        await self._http.aclose()

    async def request(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        params: Mapping[str, Any] | None = None,
        auth: Mapping[str, str] | None = None,
    ) -> Any:
        """Call the gateway; return the decoded JSON body (``None`` for an empty one)."""
        query = {k: _query_value(v) for k, v in (params or {}).items() if v is not None}
        try:
            response = await self._http.request(
                method, path, json=json, params=query or None, headers=dict(auth or {})
            )
        except httpx.TimeoutException as exc:
            raise ToolError(
                f"Exocortex did not answer {method} {path} within "
                f"{self._http.timeout.read} s; try again, or with a smaller request"
            ) from exc
        except httpx.HTTPError as exc:
            raise ToolError(
                f"cannot reach the Exocortex gateway at {self.base_url} ({exc.__class__.__name__});"
                " is it running (`exo up`) and is EXO_MCP_GATEWAY_URL right?"
            ) from exc
        if response.is_success:
            return response.json() if response.content else None
        raise _error(method, path, response)


def _query_value(value: Any) -> Any:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list | tuple):
        return ",".join(str(v) for v in value)
    return value


def _error(method: str, path: str, response: httpx.Response) -> ToolError:
    try:
        body = response.json()
    except ValueError:
        body = {}
    if not isinstance(body, dict):
        body = {}
    detail = str(body.get("detail") or body.get("error") or response.reason_phrase)
    field = body.get("field")
    status = response.status_code
    # A missing route answers with the router's bare "Not Found" (no field), unlike a missing
    # record, whose detail names the id; 405 means the path exists for other methods only.
    if (status == 404 and detail == "Not Found" and not field) or status == 405:
        return UnsupportedRoute(
            f"this Exocortex server does not support {method} {path.split('?')[0]} yet; "
            "upgrade the server to use this tool"
        )
    if status in (401, 403):
        return ToolError(
            f"Exocortex refused the request ({status}): {detail}. Use a key allowed to do "
            "this: EXO_MCP_API_KEY for the stdio adapter, the client's own key over HTTP."
        )
    where = f" (field `{field}`)" if field else ""
    if status == 404:
        return NotFound(f"{detail}{where}")
    if status >= 500:
        return ToolError(f"Exocortex failed ({status}): {detail}{where}; try again shortly")
    return ToolError(f"{detail}{where}")
