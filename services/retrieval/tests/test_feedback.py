import numpy as np
import pytest

from exocortex.core.db.settings_store import DEFAULT_SETTINGS
from exocortex.core.domain.setting_schema import SettingError, check
from exocortex.retrieval.search.feedback import FeedbackSettings, moved_query


def _unit(*values: float) -> np.ndarray:
    v = np.asarray(values, dtype=np.float32)
    return v / np.linalg.norm(v)


def test_off_by_default_and_read_from_the_settings_clamped() -> None:
    assert not FeedbackSettings.from_settings({}).enabled
    assert not FeedbackSettings.from_settings(DEFAULT_SETTINGS).enabled
    on = FeedbackSettings.from_settings(
        {"scoring.feedback_weight": "0.3", "search.feedback_seeds": "5", "search.feedback_mix": "2"}
    )
    assert (on.weight, on.seeds, on.mix, on.enabled) == (0.3, 5, 2.0, True)
    odd = FeedbackSettings.from_settings(
        {
            "scoring.feedback_weight": "-1",
            "search.feedback_seeds": "999",
            "search.feedback_mix": "x",
        }
    )
    assert (odd.weight, odd.seeds, odd.mix, odd.enabled) == (0.0, 20, 1.0, False)
    assert not FeedbackSettings.from_settings(
        {"scoring.feedback_weight": "0.3", "search.feedback_seeds": "0"}
    ).enabled


def test_the_settings_are_registered_with_their_defaults() -> None:
    assert DEFAULT_SETTINGS["scoring.feedback_weight"] == "0"
    assert DEFAULT_SETTINGS["search.feedback_seeds"] == "3"
    assert DEFAULT_SETTINGS["search.feedback_mix"] == "1"
    for key, value in (
        ("scoring.feedback_weight", "0.3"),
        ("search.feedback_seeds", "5"),
        ("search.feedback_mix", "2"),
    ):
        check(key, value)
    with pytest.raises(SettingError):
        check("search.feedback_seeds", "21")
    with pytest.raises(SettingError):
        check("scoring.feedback_weight", "-0.1")


def test_the_query_moves_toward_the_mean_of_its_seeds_at_unit_length() -> None:
    query = _unit(1, 0, 0)
    seeds = [_unit(0, 1, 0), _unit(0, 0, 1)]
    moved = moved_query(query, seeds, mix=1.0)
    assert moved is not None
    assert float(np.linalg.norm(moved)) == pytest.approx(1.0, abs=1e-6)
    # q + (0, .5, .5), normalised
    assert moved == pytest.approx(_unit(1, 0.5, 0.5), abs=1e-6)
    # a larger mix moves it further: closer to the seeds, farther from the query
    further = moved_query(query, seeds, mix=4.0)
    assert further is not None
    assert float(further @ query) < float(moved @ query)
    assert float(further @ seeds[0]) > float(moved @ seeds[0])


def test_no_seeds_or_a_vanishing_sum_moves_nothing() -> None:
    query = _unit(1, 0)
    assert moved_query(query, [], mix=1.0) is None
    assert moved_query(query, [_unit(-1, 0)], mix=1.0) is None
