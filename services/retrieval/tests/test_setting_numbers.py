"""Every search signal reads its number settings the same way: a value that is missing, does
not parse or is not finite means the default, so no stored value can fail a search."""

from __future__ import annotations

import pytest

from exocortex.retrieval.search import coverage, feedback, hops, neighbours, rerank, scoring

BAD = ["nan", "inf", "-inf", "lots", ""]


@pytest.mark.parametrize("value", BAD)
def test_a_number_setting_that_is_not_a_finite_number_means_its_default(value: str) -> None:
    assert scoring.setting_float({"k": value}, "k", 0.25) == 0.25
    assert scoring.setting_float({}, "k", 0.25) == 0.25
    assert scoring.setting_float({"k": "0.5"}, "k", 0.25) == 0.5


@pytest.mark.parametrize("value", BAD)
def test_every_signal_keeps_its_defaults_for_a_bad_value(value: str) -> None:
    # Counts made from a bad value used to raise (int(nan)) and fail every search.
    assert (
        hops.HopSettings.from_settings(
            {
                "scoring.expand_weight": value,
                "search.expand_seeds": value,
                "search.expand_limit": value,
            }
        )
        == hops.HopSettings()
    )
    assert (
        feedback.FeedbackSettings.from_settings(
            {
                "scoring.feedback_weight": value,
                "search.feedback_seeds": value,
                "search.feedback_mix": value,
            }
        )
        == feedback.FeedbackSettings()
    )
    assert neighbours.NeighbourSettings.from_settings(
        {"search.neighbour_window": value, "scoring.neighbour_weight": value}
    ) == neighbours.NeighbourSettings.from_settings({})
    assert rerank.RerankSettings.from_settings(
        {"scoring.rerank_weight": value}
    ) == rerank.RerankSettings.from_settings({})
    assert coverage.CoverageSettings.from_settings(
        {"scoring.coverage_weight": value, "search.coverage_similarity": value}
    ) == coverage.CoverageSettings.from_settings({})
