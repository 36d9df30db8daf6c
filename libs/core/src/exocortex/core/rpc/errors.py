"""Domain errors ↔ gRPC status. The ErrorInfo message rides in binary trailing metadata."""

from __future__ import annotations

import grpc

from exocortex.core.errors import ERRORS_BY_CODE, ExoError, Unavailable
from exocortex.proto.v1 import common_pb2

ERROR_TRAILER = "exo-error-bin"

STATUS_BY_CODE: dict[str, grpc.StatusCode] = {
    "invalid_argument": grpc.StatusCode.INVALID_ARGUMENT,
    "not_found": grpc.StatusCode.NOT_FOUND,
    "conflict": grpc.StatusCode.ALREADY_EXISTS,
    "too_large": grpc.StatusCode.RESOURCE_EXHAUSTED,
    "unavailable": grpc.StatusCode.UNAVAILABLE,
    "permission_denied": grpc.StatusCode.PERMISSION_DENIED,
    "internal": grpc.StatusCode.INTERNAL,
}


def to_status(error: ExoError) -> tuple[grpc.StatusCode, str, tuple[tuple[str, bytes], ...]]:
    info = common_pb2.ErrorInfo(code=error.code, field=error.field, message=error.message)
    return (
        STATUS_BY_CODE.get(error.code, grpc.StatusCode.INTERNAL),
        error.message,
        ((ERROR_TRAILER, info.SerializeToString()),),
    )


def from_rpc_error(exc: grpc.aio.AioRpcError, *, peer: str = "") -> ExoError:
    """Turn a failed call back into the domain error the server raised."""
    trailing = exc.trailing_metadata() or ()
    for key, value in trailing:
        if key == ERROR_TRAILER and isinstance(value, bytes):
            info = common_pb2.ErrorInfo.FromString(value)
            cls = ERRORS_BY_CODE.get(info.code, ExoError)
            return cls(info.message, field=info.field)
    if exc.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
        what = f"the {peer} service" if peer else "a backing service"
        return Unavailable(f"{what} is not reachable; try again shortly")
    return ExoError(f"internal error in {peer or 'a service'}: {exc.code().name}")
