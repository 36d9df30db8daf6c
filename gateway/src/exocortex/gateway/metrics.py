from __future__ import annotations

from prometheus_client import Counter, Histogram

# The methods a label may name: the client chooses the method, and the HTTP parser accepts dozens
# (WebDAV, CalDAV...), so any other one is counted as "other" rather than as a value of its own.
METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})

HTTP_REQUESTS = Counter("exo_http_requests_total", "HTTP requests", ["method", "route", "status"])
HTTP_DURATION = Histogram(
    "exo_http_request_duration_seconds",
    "HTTP request latency",
    ["method", "route"],
    buckets=(0.001, 0.0025, 0.005, 0.01, 0.02, 0.03, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10),
)


def method_label(method: str) -> str:
    """The request's method as a label value: one of `METHODS`, else ``other``."""
    return method if method in METHODS else "other"
