"""Property-based run of every operation in the live gateway's OpenAPI document: generated
requests (valid and invalid) must never get a 5xx, and every answer must match the documented
status codes, content types and schemas.

Bounded: a few examples per operation and no shrinking phase, so the suite stays fast (see
exocortex.testing.fuzz).
"""

from __future__ import annotations

from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from exocortex.core.runtime.stack import Stack
from exocortex.testing.fuzz import fuzz_operations

MAX_EXAMPLES = 4
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
]


def test_live_api_conforms_to_its_schema(exo_stack: Stack) -> None:
    report = fuzz_operations(exo_stack.gateway_url, CHECKS, max_examples=MAX_EXAMPLES)
    print(f"schemathesis: {report.cases} cases over {report.operations} operations")
    assert report.operations >= 30, sorted(report.cases_by_operation)
    assert not report.unexercised(), f"no generated request reached {report.unexercised()}"
    assert not report.failures, "\n\n".join(report.failures)
