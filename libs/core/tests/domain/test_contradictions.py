from exocortex.core.domain.contradictions import find_contradiction


def test_negated_same_statement_is_a_candidate() -> None:
    found = find_contradiction(
        "The billing service caches invoices in Redis.",
        "The billing service no longer caches invoices in Redis.",
    )
    assert found is not None
    assert found.kind == "negation"


def test_changed_value_is_a_candidate() -> None:
    found = find_contradiction(
        "The API request timeout is 30 seconds.", "The API request timeout is 60 seconds."
    )
    assert found is not None
    assert found.kind == "value_change"
    assert "30 seconds" in found.description
    assert "60 seconds" in found.description


def test_unrelated_negation_is_not_a_candidate() -> None:
    # The seed flagged this pair: one side says "not", the texts are on the same topic.
    assert (
        find_contradiction(
            "We deploy the gateway with Docker on every merge.",
            "Do not forget to rotate the gateway logs weekly.",
        )
        is None
    )


def test_different_subjects_are_not_a_value_change() -> None:
    assert find_contradiction("The frontend is React.", "The backend is FastAPI.") is None


def test_agreeing_statements_are_not_candidates() -> None:
    assert find_contradiction("The cache TTL is 5 minutes.", "The cache TTL is 5 minutes.") is None


def test_long_subjects_are_compared() -> None:
    found = find_contradiction(
        "The API request timeout of the billing gateway is 30 seconds.",
        "The API request timeout of the billing gateway is 90 seconds.",
    )
    assert found is not None
    assert found.kind == "value_change"


def test_a_value_inside_another_value_is_still_a_change() -> None:
    # "5 seconds" is a substring of "15 seconds", but a different value.
    found = find_contradiction(
        "The quota service request timeout is 5 seconds.",
        "The quota service request timeout is 15 seconds.",
    )
    assert found is not None
    assert found.kind == "value_change"


def test_a_value_that_only_adds_detail_is_not_a_change() -> None:
    assert (
        find_contradiction("The main database is Postgres.", "The main database is Postgres 16.")
        is None
    )
