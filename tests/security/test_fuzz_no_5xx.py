"""Generated requests (valid and invalid) to every operation of the gateway's OpenAPI document,
sent to the keyed gateway with the all-namespace read-write key, so they pass the key check
(and its body-as-parsed scope check) and reach the routes' own validation and the services
behind them: none may get a 5xx, and every answer must match the documented status codes,
content types and schemas.

One run covers both: the key check is on the path of every request, and the answers are the
routes' own (the unkeyed gateway differs only by not checking keys).

Bounded by a few examples per operation and no shrinking, not by time: every operation is
exercised on any machine, and one that no request reached fails the test."""

from __future__ import annotations

import asyncio

from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from exocortex.testing.fuzz import fuzz_operations
from exocortex.testing.keyed import ADMIN, Keyed

MAX_EXAMPLES = 4
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]


async def test_generated_requests_get_no_5xx_and_conform_to_the_schema(keyed: Keyed) -> None:
    # Blocking HTTP calls, so in a thread: the gateway under test runs on this event loop.
    report = await asyncio.to_thread(
        fuzz_operations,
        keyed.url,
        CHECKS,
        max_examples=MAX_EXAMPLES,
        headers={"Authorization": f"Bearer {ADMIN}"},
    )
    print(f"fuzz: {report.cases} cases over {report.operations} operations")
    assert report.operations >= 30, sorted(report.cases_by_operation)
    assert not report.unexercised(), f"no generated request reached {report.unexercised()}"
    assert not report.failures, "\n\n".join(report.failures)
