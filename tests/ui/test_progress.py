"""The progress bar's wording and time left (ui/progress.py), without a browser."""

import pytest

from ui.progress import format_seconds, time_left


@pytest.mark.parametrize("seconds, text", [(0, "0 s"), (42.4, "42 s"), (185, "3 min 05 s"),
                                           (3720, "1 h 02 min")])
def test_format_seconds(seconds, text):
    assert format_seconds(seconds) == text


def test_time_left_uses_the_rate_once_known_and_the_estimate_before():
    assert time_left(0.5, 10.0) == pytest.approx(10.0)
    assert time_left(0.01, 1.0, estimate=30.0) == pytest.approx(29.0)
    assert time_left(0.01, 1.0) is None
    assert time_left(1.0, 5.0, estimate=30.0) == 0.0
