"""The Fréchet mean page's settings (issue 29, one state idiom): every widget starts from
``PageSettings.init`` (this session's value, the copy kept for a page switch, a shared link's
value on the page's first run, or its default) and ``finish()`` keeps the settings and writes
them to the URL, at the end of the page and of each of its fragments.

AppTest's runs are full runs; a browser reruns only the fragment a widget inside it belongs to.
:func:`fragment_only` makes AppTest do the same, so that the fragments' own saving is tested.
"""

import contextlib
import functools

import pytest
from streamlit.testing.v1 import local_script_runner

from ui import manifolds as M
from ui.caps import CAPS
from ui.logic import frechet_mean as L

from .pages import fm_open_studies, open_app_page

TIMEOUT = 180
#: A small simulation and preview keep the tests quick.
QUICK = {"fm_ns": "10", "fm_reps": "5", "fm_draws": "10"}


def open_page(**query):
    return open_app_page("frechet_mean.py", timeout=TIMEOUT, **query)


@contextlib.contextmanager
def fragment_only(at, *names):
    """Runs inside the block rerun only the page's fragment functions ``names`` (their ids
    found in the fragments the last run registered), as a browser reruns after a widget inside
    a fragment changes; the rest of the page does not run. (After such a run the element tree
    holds only the fragments' elements.)"""
    ids = [fid for fid, fragment in at._fragment_storage._fragments.items()
           if any(getattr(cell.cell_contents, "__name__", None) in names
                  for cell in fragment.__closure__ or ())]
    assert len(ids) == len(names), f"fragments {names} not found: streamlit internals changed"
    full = local_script_runner.RerunData
    local_script_runner.RerunData = functools.partial(full, fragment_id_queue=ids)
    try:
        yield
    finally:
        local_script_runner.RerunData = full


@pytest.fixture
def page_runs(monkeypatch):
    """Counts the page's full runs (its data section runs on every one, in no fragment)."""
    import ui.frechet_data as FD

    runs = []
    data_and_budget = FD.data_and_budget

    def counting(*args, **kwargs):
        runs.append(1)
        return data_and_budget(*args, **kwargs)

    monkeypatch.setattr(FD, "data_and_budget", counting)
    return runs


def widget_values(at):
    fm_open_studies(at)  # (its settings are drawn once opened)
    return {
        "fm_manifold": at.selectbox(key="fm_manifold").value,
        "fm_source": at.radio(key="fm_source").value,
        "fm_eps": at.select_slider(key="fm_eps").value,
        "fm_radius_sphere": at.slider(key="fm_radius_sphere").value,
        "fm_n": at.slider(key="fm_n").value,
        "fm_seed": at.number_input(key="fm_seed").value,
        "fm_mech": at.radio(key="fm_mech").value,
        "fm_draws": at.slider(key="fm_draws").value,
        "fm_ns": at.multiselect(key="fm_ns").value,
        "fm_reps": at.slider(key="fm_reps").value,
        "fm_kng": at.checkbox(key="fm_kng").value,
        "fm_metric": at.radio(key="fm_metric").value,
    }


def test_link_values_reach_the_widgets_and_are_written_back():
    at = open_page(fm_manifold="sphere", fm_source="synthetic", fm_eps="2.0", fm_n="30",
                   fm_seed="7", fm_r="0.3", fm_mech="kng", fm_draws="30", fm_ns="20,10",
                   fm_reps="10", fm_kng="false", fm_metric="geodesic_error")
    assert widget_values(at) == {
        "fm_manifold": "sphere", "fm_source": "synthetic", "fm_eps": 2.0,
        "fm_radius_sphere": pytest.approx(0.3), "fm_n": 30, "fm_seed": 7, "fm_mech": "kng",
        "fm_draws": 30, "fm_ns": [20, 10], "fm_reps": 10, "fm_kng": False,
        "fm_metric": "geodesic_error"}
    query = dict(at.query_params)
    assert {k: query[k] for k in ("fm_manifold", "fm_source", "fm_eps", "fm_r", "fm_n",
                                  "fm_seed", "fm_mech", "fm_draws", "fm_reps", "fm_kng",
                                  "fm_metric")} == {
        "fm_manifold": "sphere", "fm_source": "synthetic", "fm_eps": "2.0", "fm_r": "0.3",
        "fm_n": "30", "fm_seed": "7", "fm_mech": "kng", "fm_draws": "30", "fm_reps": "10",
        "fm_kng": "False", "fm_metric": "geodesic_error"}
    assert sorted(query["fm_ns"].split(",")) == ["10", "20"]


def test_junk_link_values_fall_back_to_the_defaults():
    at = open_page(fm_manifold="torus", fm_source="nowhere", fm_eps="lots", fm_n="many",
                   fm_seed="x", fm_r="nan", fm_mech="magic", fm_draws="some", fm_ns="a,b,7",
                   fm_metric="closeness", fm_reps="5", fm_kng="false")
    assert not at.exception, at.exception
    radius = M.spec("sphere").radius
    first = list(L.available_mechanisms(M.make_manifold("sphere"), radius))[0]
    assert widget_values(at) == {
        "fm_manifold": "sphere", "fm_source": "synthetic", "fm_eps": 1.0,
        "fm_radius_sphere": pytest.approx(radius), "fm_n": 50, "fm_seed": 0, "fm_mech": first,
        "fm_draws": 50, "fm_ns": [10, 20, 50, 100, 200], "fm_reps": 5, "fm_kng": False,
        "fm_metric": "euclidean_error"}
    assert at.query_params["fm_eps"] == "1.0" and at.query_params["fm_n"] == "50"


def test_out_of_range_link_values_are_clamped():
    """Numbers beyond a widget's range start at its nearest end (as before the idiom)."""
    at = open_page(fm_n="99999", fm_seed="-5", fm_r="0.001", fm_draws="1", fm_ns="10",
                   fm_reps="1")
    assert not at.exception, at.exception
    assert at.slider(key="fm_n").value == CAPS["fm_max_n"]
    assert at.number_input(key="fm_seed").value == 0
    assert at.slider(key="fm_radius_sphere").value == pytest.approx(L.FRECHET_MANIFOLDS[
        "sphere"][0])
    assert at.slider(key="fm_draws").value == 10
    assert fm_open_studies(at).slider(key="fm_reps").value == 5
    assert at.query_params["fm_n"] == str(CAPS["fm_max_n"])
    assert at.query_params["fm_r"] == str(L.FRECHET_MANIFOLDS["sphere"][0])


def test_a_link_radius_for_another_preset_is_not_this_sources():
    """A link's radius comes with its manifold and preset: the EMG preset's radius is not used
    when the preset is not offered (the sphere) and the data fall back to synthetic."""
    at = open_page(fm_manifold="sphere", fm_source="emg", fm_r="0.3", **QUICK)
    assert at.radio(key="fm_source").value == "synthetic"
    assert at.slider(key="fm_radius_sphere").value == pytest.approx(M.spec("sphere").radius)


def test_settings_survive_a_page_switch_and_fragment_reruns(page_runs):
    """Settings changed in the page and in its fragments' own reruns (the preview's number of
    draws, the simulation's settings) are saved and written to the URL there, and come back
    after a visit to another page (which leaves the URL without them)."""
    at = fm_open_studies(open_page(**QUICK))
    at.select_slider(key="fm_eps").set_value(2.0)
    at.slider(key="fm_radius_sphere").set_value(0.3)
    at.slider(key="fm_n").set_value(40)
    at.number_input(key="fm_seed").set_value(3)
    at.radio(key="fm_mech").set_value("kng").run()
    assert not at.exception, at.exception
    runs = len(page_runs)
    with fragment_only(at, "preview_section", "simulation_section"):
        at.slider(key="fm_draws").set_value(30)
        at.multiselect(key="fm_ns").set_value([20])
        at.slider(key="fm_reps").set_value(10)
        at.radio(key="fm_metric").set_value("geodesic_error").run()
    assert not at.exception, at.exception
    assert len(page_runs) == runs, "the fragment reruns ran the whole page"
    assert not at.title  # only the fragments were drawn
    assert (at.query_params["fm_draws"], at.query_params["fm_ns"], at.query_params["fm_reps"],
            at.query_params["fm_metric"]) == ("30", "20", "10", "geodesic_error")
    at.switch_page("pages/sensitivity.py").run()
    assert not at.exception, at.exception
    for key in [k for k in at.query_params if k.startswith("fm_")]:
        del at.query_params[key]  # a browser's URL on another page holds none of them
    at.switch_page("pages/frechet_mean.py").run()
    assert not at.exception, at.exception
    expected = {
        "fm_manifold": "sphere", "fm_source": "synthetic", "fm_eps": 2.0,
        "fm_radius_sphere": pytest.approx(0.3), "fm_n": 40, "fm_seed": 3, "fm_mech": "kng",
        "fm_draws": 30, "fm_ns": [20], "fm_reps": 10, "fm_kng": True,
        "fm_metric": "geodesic_error"}
    assert widget_values(at) == expected
    assert (at.query_params["fm_eps"], at.query_params["fm_n"],
            at.query_params["fm_draws"]) == ("2.0", "40", "30")


def test_each_manifold_keeps_its_own_radius_in_the_session():
    """Back on the sphere after SPD, the sphere's radius is the one set before (kept in the
    session's copy while its slider was not drawn); a preset of the sphere is not SPD's."""
    at = open_page(**QUICK)
    at.slider(key="fm_radius_sphere").set_value(0.3).run()
    at.radio(key="fm_source").set_value("cities").run()
    at.selectbox(key="fm_manifold").set_value("spd").run()
    assert not at.exception, at.exception
    assert at.radio(key="fm_source").value == "synthetic"  # world cities is the sphere's
    assert at.slider(key="fm_radius_spd2").value == pytest.approx(M.spec("spd").radius)
    at.selectbox(key="fm_manifold").set_value("sphere").run()
    assert not at.exception, at.exception
    assert at.slider(key="fm_radius_sphere").value == pytest.approx(0.3)
