"""The gateway's REST API, as the CLI uses it. Every failure becomes an ``ApiError`` carrying the
server's problem ``detail`` unchanged plus a hint on what to do about it."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import httpx

from exocortex.cli.config import ClientConfig

# What to try next, by HTTP status; the server's `detail` says what was wrong.
HINTS = {
    400: "fix the request as the message says (`exo <command> --help` lists the options)",
    401: "give an API key: --api-key, EXO_API_KEY or api_key in the config file",
    403: "this key may not do that: use a read-write key for that namespace",
    404: "check the id (`exo search` or `exo list` shows ids)",
    409: "the memory is not in the state this needs (see the message)",
    413: "send less at once (a smaller --batch-size, or split the file)",
    421: "call the gateway by the host name it serves (EXO_ALLOWED_HOSTS on the server)",
    422: "fix the request as the message says",
    429: "slow down and try again",
    503: "a part of the stack is starting or down: `exo status` shows which",
}


class ApiError(Exception):
    """A request that did not succeed: the server's words, and what to do."""

    def __init__(self, detail: str, *, status: int | None = None, hint: str | None = None) -> None:
        super().__init__(detail)
        self.detail = detail
        self.status = status
        self.hint = hint


def _problem(response: httpx.Response) -> ApiError:
    detail = response.reason_phrase or f"HTTP {response.status_code}"
    try:
        body = response.json()
    except ValueError:
        body = None
    if isinstance(body, dict):
        raw = body.get("detail", body.get("error"))
        if isinstance(raw, str):
            detail = raw
        elif raw is not None:
            detail = str(raw)
    hint = HINTS.get(response.status_code)
    if response.status_code >= 500 and hint is None:
        hint = "the server failed: its logs say why (`exo status` shows where they are)"
    return ApiError(detail, status=response.status_code, hint=hint)


class Client:
    """One connection pool for a CLI invocation; use it as a context manager."""

    def __init__(self, config: ClientConfig) -> None:
        headers = {"User-Agent": "exo-cli"}
        if config.api_key:
            headers["Authorization"] = f"Bearer {config.api_key}"
        self.config = config
        self._http = httpx.Client(base_url=config.url, headers=headers, timeout=config.timeout)

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *_exc: object) -> None:
        self._http.close()

    def request(
        self,
        method: str,
        path: str,
        *,
        json: Any = None,
        params: dict[str, Any] | None = None,
        ok: tuple[int, ...] = (),
        timeout: float | None = None,
    ) -> Any:
        """The JSON body of a successful answer; ``ok`` lists further statuses to return;
        ``timeout`` raises the configured one for a call known to take long."""
        clean = {k: v for k, v in (params or {}).items() if v is not None}
        wait = max(timeout or 0.0, self.config.timeout)
        response = self._send(method, path, json=json, params=clean, timeout=wait)
        if response.is_success or response.status_code in ok:
            return response.json() if response.content else None
        raise _problem(response)

    def get(self, path: str, **params: Any) -> Any:
        return self.request("GET", path, params=params)

    def post(self, path: str, body: Any = None, *, timeout: float | None = None) -> Any:
        return self.request("POST", path, json=body, timeout=timeout)

    def patch(self, path: str, body: Any) -> Any:
        return self.request("PATCH", path, json=body)

    def delete(self, path: str) -> Any:
        return self.request("DELETE", path)

    @contextmanager
    def stream(self, path: str, **params: Any) -> Iterator[httpx.Response]:
        clean = {k: v for k, v in params.items() if v is not None}
        try:
            with self._http.stream("GET", path, params=clean) as response:
                if not response.is_success:
                    response.read()
                    raise _problem(response)
                yield response
        except httpx.TransportError as exc:
            raise self._unreachable(exc) from exc

    def _send(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        try:
            return self._http.request(method, path, **kwargs)
        except httpx.TransportError as exc:
            raise self._unreachable(exc) from exc

    def _unreachable(self, exc: httpx.TransportError) -> ApiError:
        if isinstance(exc, httpx.TimeoutException):
            return ApiError(
                f"{self.config.url} did not answer in time ({exc.__class__.__name__})",
                hint="the server is busy or stuck: `exo status`; raise timeout in the config file",
            )
        return ApiError(
            f"cannot reach the gateway at {self.config.url} ({exc.__class__.__name__}: {exc})",
            hint="start it with `exo up` (or `exo up --detach`), or point --url / EXO_URL at "
            f"your gateway (URL from: {self.config.source})",
        )
