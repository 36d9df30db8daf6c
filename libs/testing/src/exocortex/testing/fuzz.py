"""Generated requests to every operation of a live gateway's OpenAPI document (schemathesis),
driven one operation at a time so a report can list every failing operation at once.

Bounded by a fixed number of examples per operation and no shrinking phase, never by time: every
operation is exercised whatever the machine's speed, and the report says which ones were (a
caller asserts ``report.unexercised()`` is empty)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from schemathesis.core.result import Err

# /api/chat needs a configured LLM; it is covered against a local fake provider elsewhere.
SKIPPED_PATHS = frozenset({"/api/chat"})
# Settings are global to the shared stack: generated values (valid ones, since each setting is
# typed) would change how every later test searches and stores. Their validation is covered
# by test_api_settings.py and tests/security/test_bad_input.py.
# Maintenance jobs that write span every namespace of the shared stack when none is named:
# generated requests would consolidate, archive or re-weigh other tests' memories. Their
# validation and answers are covered by tests/integration/test_maintenance_*.py.
SKIPPED_OPERATIONS = frozenset(
    {
        ("PATCH", "/api/settings"),
        ("POST", "/api/maintenance/jobs/{name}/run"),
        ("POST", "/api/consolidate"),
        ("POST", "/api/auto-consolidate"),
        ("POST", "/api/contradictions/detect"),
        ("POST", "/api/archive"),
        ("POST", "/api/importance-adjust"),
        ("POST", "/api/reembed"),
        ("POST", "/api/maintenance/tags/merge"),
    }
)


@dataclass
class FuzzReport:
    cases: int = 0
    # "METHOD /path" -> generated requests sent to it, for every operation that was fuzzed.
    cases_by_operation: dict[str, int] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)

    @property
    def operations(self) -> int:
        return len(self.cases_by_operation)

    def unexercised(self) -> list[str]:
        """Operations no generated request reached (their failure, if any, is in ``failures``)."""
        return sorted(name for name, cases in self.cases_by_operation.items() if cases == 0)


def _describe(exc: BaseException) -> str:
    text = str(exc)
    if isinstance(exc, BaseExceptionGroup):
        text += "".join(f"\n  - {sub}" for sub in exc.exceptions)
    return text


def _name(method: str, path: str) -> str:
    return f"{method.upper()} {path}"


def fuzz_operations(
    base_url: str,
    checks: Sequence[Callable[..., Any]],
    *,
    max_examples: int,
    headers: dict[str, str] | None = None,
) -> FuzzReport:
    """Run ``checks`` on up to ``max_examples`` generated requests to each operation that is
    not skipped (blocking HTTP calls)."""
    schema = schemathesis.openapi.from_url(f"{base_url}/openapi.json", headers=headers or {})
    report = FuzzReport()
    for result in schema.get_all_operations():
        if isinstance(result, Err):
            report.failures.append(f"the OpenAPI document has an invalid operation: {result.err()}")
            continue
        operation = result.ok()
        method = operation.method.upper()
        if operation.path in SKIPPED_PATHS or (method, operation.path) in SKIPPED_OPERATIONS:
            continue
        name = _name(method, operation.path)
        report.cases_by_operation[name] = 0

        @given(case=operation.as_strategy())
        @settings(
            max_examples=max_examples,
            deadline=None,
            derandomize=True,
            database=None,
            phases=[Phase.explicit, Phase.generate],
            suppress_health_check=list(HealthCheck),
        )
        def run(case: schemathesis.Case[Any]) -> None:
            report.cases += 1
            report.cases_by_operation[_name(case.operation.method, case.operation.path)] += 1
            case.call_and_validate(
                base_url=base_url, headers=headers, checks=list(checks), timeout=60
            )

        try:
            run()
        # Collect every operation's failure (schemathesis raises exception groups), then report.
        except (Exception, BaseExceptionGroup) as exc:
            report.failures.append(f"{name}: {_describe(exc)}")
    return report
