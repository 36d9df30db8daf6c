import grpc
import pytest

from exocortex.core.errors import ExoError, InvalidArgument, NotFound, TooLarge, Unavailable
from exocortex.core.rpc.errors import from_rpc_error, to_status


class _FakeRpcError(grpc.aio.AioRpcError):
    def __init__(self, code: grpc.StatusCode, trailing: tuple[tuple[str, bytes], ...]) -> None:
        super().__init__(code, grpc.aio.Metadata(), grpc.aio.Metadata(*trailing), "details")


@pytest.mark.parametrize(
    ("error", "status"),
    [
        (InvalidArgument("bad", field="content"), grpc.StatusCode.INVALID_ARGUMENT),
        (NotFound("gone"), grpc.StatusCode.NOT_FOUND),
        (TooLarge("big"), grpc.StatusCode.RESOURCE_EXHAUSTED),
        (Unavailable("later"), grpc.StatusCode.UNAVAILABLE),
    ],
)
def test_domain_errors_round_trip_through_grpc(error: ExoError, status: grpc.StatusCode) -> None:
    code, _message, trailers = to_status(error)
    assert code == status
    back = from_rpc_error(_FakeRpcError(code, trailers))
    assert type(back) is type(error)
    assert back.message == error.message
    assert back.field == error.field


def test_unreachable_peer_becomes_unavailable() -> None:
    back = from_rpc_error(_FakeRpcError(grpc.StatusCode.UNAVAILABLE, ()), peer="retrieval")
    assert isinstance(back, Unavailable)
    assert "retrieval" in back.message
