"""The input guard's checks on raw bodies and query strings (no server needed)."""

from __future__ import annotations

import json
import time

import pytest

from exocortex.gateway.input_guard import MAX_JSON_DEPTH, Rejected, check_json_body, check_query


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
    check_json_body(json.dumps({"content": "[" * 10_000 + '\\"{' * 500}).encode())


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


def test_a_large_ordinary_body_is_checked_quickly() -> None:
    items = [{"content": f"memory {i}", "tags": ["a", "b"]} for i in range(20_000)]
    body = json.dumps({"memories": items}).encode()
    started = time.perf_counter()
    check_json_body(body)
    assert time.perf_counter() - started < 1.0
