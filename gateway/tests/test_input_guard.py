"""The input guard's checks on raw bodies and query strings (no server needed)."""

from __future__ import annotations

import json

import pytest

from exocortex.gateway import input_guard
from exocortex.gateway.input_guard import MAX_JSON_DEPTH, Rejected, check_json_body, check_query


def accepted(body: bytes) -> bool:
    """True when the guard lets the body through to the route."""
    try:
        check_json_body(body)
    except Rejected:
        return False
    return True


def _nested(levels: int) -> bytes:
    return b'{"metadata": ' + b"[" * levels + b"1" + b"]" * levels + b"}"


def test_nesting_up_to_the_limit_passes_and_beyond_is_rejected() -> None:
    check_json_body(_nested(MAX_JSON_DEPTH - 1))
    with pytest.raises(Rejected) as deep:
        check_json_body(_nested(MAX_JSON_DEPTH))
    assert deep.value.field == "body"
    with pytest.raises(Rejected):
        check_json_body(_nested(100_000))


def test_brackets_inside_strings_do_not_count() -> None:
    assert accepted(json.dumps({"content": "[" * 10_000 + '\\"{' * 500}).encode())
    # The same brackets outside the string nest, and are refused.
    assert not accepted(b'{"content": "x", "m": ' + b"[" * 10_000 + b"]" * 10_000 + b"}")


def test_unbalanced_deep_brackets_are_rejected_before_parsing() -> None:
    with pytest.raises(Rejected):
        check_json_body(b"[" * 5000 + b"}" * 5000)


def test_nul_is_rejected_with_its_field_path() -> None:
    with pytest.raises(Rejected) as nul:
        check_json_body(json.dumps({"metadata": {"a": ["ok", "x\x00y"]}}).encode())
    assert nul.value.field == "metadata.a.1"
    with pytest.raises(Rejected) as key:
        check_json_body(json.dumps({"metadata": {"k\x00": 1}}).encode())
    assert key.value.field.startswith("metadata.k")
    # An escaped backslash before "u0000" is ordinary text, not a NUL.
    check_json_body(json.dumps({"content": "\\u0000"}).encode())


def test_non_finite_tokens_are_rejected_but_the_words_in_text_are_not() -> None:
    for token in (b"NaN", b"Infinity", b"-Infinity"):
        with pytest.raises(Rejected) as bad:
            check_json_body(b'{"importance": ' + token + b"}")
        assert bad.value.field == "importance"
    check_json_body(json.dumps({"content": "NaN and Infinity are words"}).encode())


def test_nul_in_the_query_or_path_is_rejected() -> None:
    with pytest.raises(Rejected) as query:
        check_query({"path": "/api/memories/recent", "query_string": b"tags=a%00b"})
    assert query.value.field == "tags"
    with pytest.raises(Rejected) as path:
        check_query({"path": "/api/memories/a\x00", "query_string": b""})
    assert path.value.field == "path"
    check_query({"path": "/api/memories/recent", "query_string": b"tags=a%2500"})


def test_a_large_ordinary_body_is_accepted_without_being_parsed(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The common case costs a few byte searches: the guard parses a body only when a search
    finds something suspicious (its cost is measured in benchmarks, not here)."""
    parsed: list[bytes] = []
    real_loads = json.loads

    def loads(body: bytes) -> object:
        parsed.append(body)
        return real_loads(body)

    monkeypatch.setattr(input_guard.json, "loads", loads)
    items = [{"content": f"memory {i}", "tags": ["a", "b"]} for i in range(20_000)]
    assert accepted(json.dumps({"memories": items}).encode())
    assert parsed == []
    # A suspicious one is parsed, to name the field.
    assert not accepted(json.dumps({"memories": [{"content": "x\x00"}]}).encode())
    assert len(parsed) == 1
