"""The gRPC library's switches every process of the stack starts with.

The library reads them from the environment once, when it loads, before any code of ours runs,
so they are set where the processes are started: the embedded stack (``runtime.stack``) and the
image (``deploy/docker/Dockerfile``). A value already in the environment wins.

``GRPC_EXPERIMENTS``: recent gRPC releases carry calls over their newer "event engine". For
the stack's traffic, many small calls over loopback, the library's established I/O manager
costs about a third less CPU a call: 650 → 450 µs for a unary call and its answer (client and
server in one process; docs/benchmarks/bulk-import.md). A single store through REST makes four
such calls, a search one.
"""

from __future__ import annotations

from collections.abc import Mapping

GRPC_ENVIRONMENT: Mapping[str, str] = {
    "GRPC_EXPERIMENTS": "-event_engine_client,-event_engine_listener,-event_engine_callback_cq",
}


def with_grpc_environment(env: Mapping[str, str]) -> dict[str, str]:
    """``env`` plus ``GRPC_ENVIRONMENT``'s switches it does not set itself."""
    return {**GRPC_ENVIRONMENT, **env}
