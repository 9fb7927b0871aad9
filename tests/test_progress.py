"""Progress callbacks of the library (dpcore/_progress.py)."""

import pytest

from dpcore import _progress as P


def test_report_clips_and_skips_none():
    seen = []
    P.report(seen.append, 1.5)
    P.report(seen.append, -0.2)
    P.report(None, 0.5)
    assert seen == [1.0, 0.0]


def test_stages_cover_the_whole_request_in_proportion():
    seen = []
    first, second = P.stages(seen.append, [1.0, 3.0])
    first(0.0)
    first(1.0)
    second(0.5)
    second(1.0)
    assert seen == pytest.approx([0.0, 0.25, 0.625, 1.0])


def test_stages_without_callback_are_none():
    assert P.stages(None, [1, 2]) == [None, None]
    assert P.stage(None, 0.0, 1.0) is None


def test_stage_rejects_a_share_outside_the_unit_interval():
    with pytest.raises(ValueError, match="start <= stop"):
        P.stage(print, 0.6, 0.4)


def test_steps_reports_about_a_hundred_times_monotonically_and_ends_at_one():
    seen = []
    tick = P.steps(seen.append, 1000)
    for done in range(1, 1001):
        tick(done)
    assert 95 <= len(seen) <= 105
    assert seen == sorted(seen)
    assert seen[-1] == 1.0


def test_a_raising_callback_propagates():
    def cancel(_):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        P.stage(cancel, 0.0, 1.0)(0.5)


def test_refinement_progress_takes_the_nearest_goal_and_never_moves_back():
    """Goal log acceptance -2 from a start at -12; a cap of 100 leaves, 10 proposals a leaf.
    Each round reports the larger of the two shares (acceptance rose 1/10 of the way, or the
    leaves are 30 of the 100 allowed), and a round that looks worse keeps the earlier value."""
    seen = []
    build = P.RefinementProgress(seen.append, -2.0, 100, 10.0)
    build(-12.0, 1, 1e9)                       # the start: nothing done
    build(-11.0, 30, 1e9)                      # acceptance 0.1, leaves 0.3
    build(-6.0, 40, 1e9)                       # acceptance 0.6
    build(-7.0, 45, 1e9)                       # worse on both: stays at 0.6
    build(-6.5, 45, 500.0)                     # the leaves' cost rule: 45 of 50 leaves
    build.pulse()
    assert seen == pytest.approx([0.01, 0.3, 0.6, 0.6, 0.9, 0.9])
    P.RefinementProgress(None, -2.0, 100, 10.0)(-1.0, 5, 1.0)   # no callback: nothing happens


def test_refinement_progress_at_its_goal_is_done():
    seen = []
    P.RefinementProgress(seen.append, -2.0, 100, 0.0)(-1.0, 5, 1e9)
    assert seen == [1.0]
