"""The gateway's request metrics take their labels from bounded sets, whatever a client sends."""

from __future__ import annotations

from exocortex.gateway.metrics import METHODS, method_label


def test_a_method_no_route_serves_is_counted_as_other() -> None:
    assert {method_label(m) for m in ("PROPFIND", "MKCALENDAR", "QUERY", "get", "X" * 40)} == {
        "other"
    }


def test_the_usual_methods_keep_their_names() -> None:
    assert {method_label(m) for m in METHODS} == METHODS
