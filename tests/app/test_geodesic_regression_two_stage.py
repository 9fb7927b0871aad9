"""AppTest tests of the two-stage design on the Geodesic regression page (issue 28 point 4):
a private centre first, then the joint KNG with its footpoint near it. The plan, the cost, the
ledger and the exported script all follow the two-stage request, and the exported script
reproduces the page's seeded release."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from streamlit.runtime.media_file_manager import MediaFileManager

from dpcore.manifolds import SPD
from ui.logic import geodesic_regression as G
from ui.logic import two_stage as TS

from .pages import gr_open_sampler, gr_quick_sampler, gr_release, open_app_page

ROOT = Path(__file__).resolve().parents[2]
TIMEOUT = 180
LEDGER = "privacy_ledger"


@pytest.fixture
def downloads(monkeypatch):
    """``(file_name, bytes)`` of every payload handed to a download button."""
    seen = []
    original = MediaFileManager.add

    def add(self, path_or_data, mimetype, coordinates, file_name=None,
            is_for_static_download=False):
        data = path_or_data.encode() if isinstance(path_or_data, str) else path_or_data
        seen.append((file_name, bytes(data)))
        return original(self, path_or_data, mimetype, coordinates, file_name=file_name,
                        is_for_static_download=is_for_static_download)

    monkeypatch.setattr(MediaFileManager, "add", add)
    return seen


def open_two_stage():
    at = open_app_page("geodesic_regression.py", timeout=TIMEOUT)
    assert not at.session_state["gr_two_stage"]  # one stage by default
    at.checkbox(key="gr_two_stage").check().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    return at


def test_two_stage_release_costs_the_sum_and_its_script_reproduces_it(downloads, tmp_path):
    at = open_two_stage()
    # ε₁ defaults to a quarter of the geodesics' total (1 draw at 1 + 2): 0.75 -> 0.75
    assert at.number_input(key="gr_ts_eps").value == pytest.approx(0.75)
    plan = [s.value for s in at.success if s.value.startswith("**Two-stage release**")]
    assert len(plan) == 1 and "total ε = 3.75" in plan[0] and "Labelled **private**" in plan[0]
    assert any(m.value.startswith("**Cost of this release: ε = 3.75") for m in at.markdown), [
        m.value for m in at.markdown if "Cost" in m.value]
    gr_open_sampler(at)
    at.checkbox(key="gr_fix_seed").check().run()
    at.number_input(key="gr_release_seed").set_value(11)
    gr_quick_sampler(at).run()
    gr_release(at)
    (entry,) = at.session_state[LEDGER]
    assert entry["epsilon"] == pytest.approx(3.75) and entry["guarantee"] == "private"
    rel = at.session_state["gr_last"]["release"]
    assert rel.details["two_stage"] and rel.details["epsilon_center"] == pytest.approx(0.75)
    assert rel.delta == 0.0 and rel.private
    # the exported script makes the same request and prints the same release
    at.session_state["gr_export_open"] = True  # the export is built once opened
    at.run()
    script = [d for name, d in downloads if name == "geodesic_regression_scenario.py"][-1]
    text = script.decode()
    assert "TwoStageRegressionRequest(manifold, len(y), **SETTINGS)" in text
    assert "eps_center=0.75" in text and "RELEASE_SEED = 11" in text
    (tmp_path / "scenario.py").write_text(text, encoding="utf-8")
    out = subprocess.run([sys.executable, "scenario.py"], capture_output=True, text=True,
                         cwd=tmp_path, env=dict(os.environ, PYTHONPATH=str(ROOT)), timeout=300)
    assert out.returncode == 0, out.stderr
    printed = {line.split(":", 1)[0]: line.split(":", 1)[1].strip()
               for line in out.stdout.splitlines() if ":" in line}
    assert printed["label"] == rel.label and "total epsilon: 3.75" in out.stdout
    assert np.allclose(eval(printed["footpoint"]), np.asarray(rel.values["footpoint"]),
                       rtol=0, atol=1e-12)


def test_kendall_says_why_it_is_not_offered():
    at = open_app_page("geodesic_regression.py", timeout=TIMEOUT)
    at.radio(key="gr_manifold").set_value("kendall").run()
    assert not at.exception
    assert not any(c.key == "gr_two_stage" for c in at.checkbox)
    assert any("Two-stage design (private centre first): needs a public ball" in c.value
               for c in at.caption)


def test_spd_request_uses_the_response_ball_and_the_proofs_support():
    settings = G.ReleaseSettings(kind="spd", param=2, eps_p=1.0, eps_v=2.0, tau=0.5,
                                 covariate_range=(0.0, 1.0), tau_m=1.0, center=(2.0,),
                                 two_stage=TS.TwoStage(0.5))
    req = TS.request(settings, 50)
    assert repr(req.manifold) == repr(SPD(2))
    np.testing.assert_array_equal(np.asarray(req.center_ball[0]), 2.0 * np.eye(2))
    assert req.center_ball[1] == 1.0
    assert req.footpoint_radius <= 1.0 + 0.5  # within tau_m + tau
    assert TS.planned_epsilon(settings) == pytest.approx(0.5 + 3.0) == req.epsilon
    assert TS.default_center_epsilon(1.0, 2.0, 9) == pytest.approx(6.8)


def test_spd_page_two_stage_release():
    """On SPD(2) stage 1's ball is the response ball the page already asks for."""
    at = open_app_page("geodesic_regression.py", timeout=TIMEOUT)
    at.radio(key="gr_manifold").set_value("spd").run()
    at.checkbox(key="gr_two_stage").check().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert any("Stage 1's public ball: the response ball" in c.value for c in at.caption)
    assert not any(n.key == "gr_ts_r" for n in at.number_input)
    plan = [w.value for w in [*at.success, *at.warning]
            if w.value.startswith("**Two-stage release**")]
    assert len(plan) == 1
    gr_release(gr_quick_sampler(at))
    (entry,) = at.session_state[LEDGER]
    eps = at.number_input(key="gr_ts_eps").value + 3.0
    assert entry["epsilon"] == pytest.approx(eps)
    assert at.session_state["gr_last"]["release"].details["two_stage"]


def _sphere_settings(**kw):
    base = dict(kind="sphere", param=None, eps_p=2.0, eps_v=2.0, tau=0.2,
                covariate_range=(0.0, 1.0), n_footpoints=3, n_vectors=3, max_speed=0.8)
    return G.ReleaseSettings(**{**base, **kw})


def test_the_sphere_at_n_eps_1000_is_exact_with_one_stage_and_with_two():
    """Issue 28's S² release (n = 250, ε_p = ε_v = 2, 9 draws) is exact in one stage on the
    whole sphere and on a loose public footpoint ball (the native boxes), and with the
    two-stage design too (stage 2 on its ball); the two-stage offer is only a function of the
    two-stage plan, and the page shows it next to an MCMC warning, which S² no longer gives up
    to n (ε_p + ε_v) = 1,000."""
    for one in (_sphere_settings(), _sphere_settings(footpoint_radius=1.5, center=(90.0, 0.0))):
        plan = G.sampler_plan(one, 250)
        assert plan["guarantee"] == "private" and plan["exact_sampler"] == "certified bundle"
    two = _sphere_settings(two_stage=TS.TwoStage(9.0, (90.0, 0.0), 0.5))
    plan = TS.sampler_plan(two, 250)
    assert plan["guarantee"] == "private" and plan["exact_sampler"] == "certified bundle"
    assert TS.exact_two_stage_offer(_sphere_settings(), 250) == pytest.approx(9.0)
    assert TS.exact_two_stage_offer(two, 250) is None  # already two-stage
    assert TS.exact_two_stage_offer(_sphere_settings(sampler="mcmc"), 250) is None
    # beyond the reach, both designs are MCMC: no offer
    beyond = _sphere_settings(eps_p=5.0, eps_v=5.0)
    assert G.sampler_plan(beyond, 250)["guarantee"] == "approximately private"
    assert TS.exact_two_stage_offer(beyond, 250) is None


def test_the_mcmc_warning_offers_no_two_stage_design_that_would_be_mcmc_too():
    at = open_app_page("geodesic_regression.py", timeout=TIMEOUT)
    at.slider(key="gr_n").set_value(250).run()
    at.select_slider(key="gr_eps_p").set_value(5.0).run()
    at.select_slider(key="gr_eps_v").set_value(5.0).run()
    at.number_input(key="gr_fr_sphere_synthetic").set_value(0.0).run()  # the whole sphere
    assert not at.exception
    (warning,) = [w.value for w in at.warning if "will use **MCMC**" in w.value]
    assert "Two-stage" not in warning
    # ... and says how far the release stays exact (2 + 2 is, below; rounded down to 2 digits)
    reach = float(warning.split("releases are exact up to ε_p + ε_v = ")[1].split(" ")[0])
    assert 3.9 <= reach < 10.0
    at.select_slider(key="gr_eps_p").set_value(2.0).run()
    at.select_slider(key="gr_eps_v").set_value(2.0).run()
    assert not any("will use **MCMC**" in w.value for w in at.warning)   # exact at 1,000


def test_preview_warns_when_the_fit_may_fall_outside_stage_twos_ball():
    """The analyst's preview (never released) places the non-private fit against stage 2's
    footpoint ball; a speed bound that shrinks the ball below the centre's error warns."""
    at = open_two_stage()
    rows = [m.value for m in at.markdown if "two-stage footpoint ball" in m.value]
    assert len(rows) == 1 and "- 0 of 1 (0%) non-private footpoint at risk" in rows[0]
    assert not any(w.value.startswith("Stage 2's exact sampler") for w in at.warning)
    at.number_input(key="gr_ms_sphere_synthetic").set_value(0.02).run()
    assert not at.exception
    rows = [m.value for m in at.markdown if "two-stage footpoint ball" in m.value]
    assert "- 1 of 1 (100%) non-private footpoint at risk" in rows[0]
    assert any(w.value.startswith("Stage 2's exact sampler is quick") for w in at.warning)
