"""One domain error hierarchy, mapped once to gRPC status (rpc.errors) and once to HTTP problem
JSON (in the gateway). Messages say what to fix; they never contain private or secret text."""

from __future__ import annotations


class ExoError(Exception):
    """Base of every error the product reports to a client."""

    code = "internal"

    def __init__(self, message: str, *, field: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.field = field


class InvalidArgument(ExoError):
    code = "invalid_argument"


class NotFound(ExoError):
    code = "not_found"


class Conflict(ExoError):
    code = "conflict"


class TooLarge(ExoError):
    code = "too_large"


class Unavailable(ExoError):
    code = "unavailable"


class PermissionDenied(ExoError):
    code = "permission_denied"


ERRORS_BY_CODE: dict[str, type[ExoError]] = {
    cls.code: cls
    for cls in (
        ExoError,
        InvalidArgument,
        NotFound,
        Conflict,
        TooLarge,
        Unavailable,
        PermissionDenied,
    )
}
