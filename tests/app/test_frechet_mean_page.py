"""AppTest tests of the "Fréchet mean" page, driven through app.py as a user would.

Uploads: streamlit 1.67's ``AppTest`` supports ``st.file_uploader``
(``FileUploader.set_value((name, bytes, mime))``), so uploads are tested end to end; the parsing
itself is :func:`dpcore.data.load_csv`, tested in ``tests/data``.
"""

import json

import pytest

from dpcore.data import make_mean_data, to_csv
from dpcore.manifolds import Sphere
from ui import manifolds as M

from .pages import click_release, fm_open_studies, open_app_page

TIMEOUT = 180
LEDGER = "privacy_ledger"


def open_page(**query):
    return open_app_page("frechet_mean.py", timeout=TIMEOUT, **query)


def light(at):
    """A small simulation keeps the interaction tests quick."""
    fm_open_studies(at)
    at.multiselect(key="fm_ns").set_value([10, 20])
    at.slider(key="fm_reps").set_value(5)
    at.slider(key="fm_draws").set_value(20)
    return at.run()


def ledger(at):
    return at.session_state[LEDGER] if LEDGER in at.session_state else []


def metric(at, label):
    return next(m.value for m in at.metric if m.label == label)


def upload(at, data, name="points.csv"):
    at.radio(key="fm_source").set_value("upload").run()
    at.file_uploader(key="fm_upload").set_value((name, data, "text/csv")).run()
    return at


# --------------------------------------------------------------------------- default scenario
def test_default_run_compares_mechanisms_without_releasing():
    at = open_page()
    assert [t.value for t in at.title] == ["Fréchet mean"]
    assert not at.error
    # zoom (the 3D sphere and the error distribution only when their tab is opened); error
    # against n once the studies are opened (the sensitivity study when its tab is opened)
    assert [c.key for c in at.get("plotly_chart")] == ["fm_zoom"]
    assert [c.key for c in fm_open_studies(at).get("plotly_chart")] == ["fm_zoom", "fm_sim"]
    text = "\n".join(m.value for m in at.markdown)
    assert "Assumptions in force" in text
    # The teaching notes are typeset only once their expander is opened.
    assert len(at.latex) == 0
    at.session_state["fm_notes"] = True
    at.run()
    assert len(at.latex) >= 4
    assert metric(at, "Sample size n") == "50"
    assert ledger(at) == []  # nothing is released on a plain run
    labels = [b.label for b in at.get("download_button")]
    assert "Download data" in labels and "Download release" not in labels
    # settings (not data) are mirrored to the URL
    assert at.query_params["fm_manifold"] == "sphere"
    assert at.query_params["fm_eps"] == "1.0"


def test_settings_are_read_from_the_url():
    at = open_page(fm_eps="2.0", fm_n="30", fm_ns="10,20", fm_reps="5")
    fm_open_studies(at)
    assert at.select_slider(key="fm_eps").value == 2.0
    assert metric(at, "Sample size n") == "30"
    assert at.multiselect(key="fm_ns").value == [10, 20]


def test_changed_widgets_rerun_cleanly():
    at = light(open_page())
    at.select_slider(key="fm_eps").set_value(5.0)
    at.slider(key="fm_n").set_value(80).run()
    assert not at.exception, at.exception
    assert metric(at, "Sample size n") == "80"
    assert at.query_params["fm_eps"] == "5.0"
    at.checkbox(key="fm_kng").uncheck()
    at.radio(key="fm_metric").set_value("geodesic_error").run()
    assert not at.exception, at.exception
    assert ledger(at) == []


def test_spd2_shows_cone_and_ellipses():
    at = light(open_page())
    at.selectbox(key="fm_manifold").set_value("spd").run()
    assert not at.exception, at.exception
    assert not at.error
    assert at.query_params["fm_manifold"] == "spd"
    # ellipses (the cone and the error distribution when their tab is opened), error against
    # n, share off the manifold
    assert len(at.get("plotly_chart")) >= 3
    at.session_state["fm_view_spd"] = "Error distribution"
    at.run()
    assert not at.exception, at.exception
    assert any("Distribution of the error" in c.proto.spec for c in at.get("plotly_chart"))
    # The radius widget has a key per SPD size and starts at that manifold's default.
    assert at.slider(key="fm_radius_spd2").value == pytest.approx(M.spec("spd").radius)


@pytest.mark.parametrize("value,token", [("spd2", "spd"), ("spd", "spd"), ("spd3", "spd3"),
                                         ("spd9", "sphere"), ("junk", "sphere")])
def test_manifold_links_old_and_new(value, token):
    """The older value "spd2" still opens SPD(2); the URL then carries the one value "spd"."""
    at = open_page(fm_manifold=value, fm_ns="10", fm_reps="5", fm_draws="10")
    assert not at.exception, at.exception
    assert at.selectbox(key="fm_manifold").value == token
    assert at.query_params["fm_manifold"] == token


def test_switching_manifold_starts_from_its_own_radius():
    """A sphere link's radius (0.39) must not become the SPD radius (it used to be clipped to
    SPD's lowest value, 0.75) when the user switches to SPD."""
    at = open_page(fm_manifold="sphere", fm_r="0.39", fm_ns="10", fm_reps="5", fm_draws="10")
    assert at.slider(key="fm_radius_sphere").value == pytest.approx(0.39)
    at.selectbox(key="fm_manifold").set_value("spd").run()
    assert not at.exception, at.exception
    assert at.slider(key="fm_radius_spd2").value == pytest.approx(M.spec("spd").radius)


# --------------------------------------------------------------------------- release
def test_release_button_records_one_ledger_entry():
    at = light(open_page())
    at.radio(key="fm_mech").set_value("ambient_laplace")
    click_release(at, "fm_release")
    assert not at.exception, at.exception
    entries = ledger(at)
    assert len(entries) == 1
    assert entries[0]["page"] == "Fréchet mean"
    assert entries[0]["mechanism"] == "ambient_laplace"
    assert entries[0]["epsilon"] == pytest.approx(1.0)
    assert "Download release" in [b.label for b in at.get("download_button")]
    # A rerun shows the release again but does not release again.
    at.run()
    assert len(ledger(at)) == 1
    assert "Download release" in [b.label for b in at.get("download_button")]
    # Changing a setting hides the stale release (it stays in the ledger).
    at.select_slider(key="fm_eps").set_value(2.0).run()
    assert len(ledger(at)) == 1
    assert "Download release" not in [b.label for b in at.get("download_button")]


# --------------------------------------------------------------------------- uploads
def test_uploaded_csv_is_used_and_released():
    y = make_mean_data(Sphere(2), 40, radius=0.3, rng=3)
    at = light(open_page())
    upload(at, to_csv(Sphere(2), y).encode())
    assert not at.exception, at.exception
    assert not at.error
    assert metric(at, "Sample size n") == "40"
    assert "Download data" not in [b.label for b in at.get("download_button")]
    click_release(at, "fm_release")
    assert not at.exception, at.exception
    assert len(ledger(at)) == 1


def test_points_outside_the_ball_are_flagged():
    y = make_mean_data(Sphere(2), 20, radius=0.7, rng=1)
    at = light(open_page())
    upload(at, to_csv(Sphere(2), y).encode())
    assert not at.exception, at.exception
    assert any("outside the public ball" in w.value for w in at.warning)


@pytest.mark.parametrize(
    "content, fragment",
    [
        (b"y1,y2,y3\n0,0,1\n0,abc,1\n", "Row 3"),
        (b"a,b\n1,2\n", "column"),
        (b"y1,y2,y3\n0,0,2\n0,0,1\n", "Row 2"),  # off the sphere
        (b"", "empty"),
    ],
)
def test_bad_csv_shows_error_without_exception(content, fragment):
    at = light(open_page())
    upload(at, content)
    assert not at.exception, at.exception
    assert at.error, "a bad file must produce st.error"
    assert fragment.lower() in at.error[0].value.lower()
    assert ledger(at) == []


def test_bad_centre_shows_error():
    y = make_mean_data(Sphere(2), 20, radius=0.3, rng=1)
    at = light(open_page())
    upload(at, to_csv(Sphere(2), y).encode())
    at.text_input(key="fm_center").set_value("1, two, 3").run()
    assert not at.exception
    assert at.error and "centre" in at.error[0].value


def test_predicted_error_before_release_and_smallest_epsilon():
    """Before any release the page states the predicted distance to the non-private mean
    (median, 95% radius) for the chosen mechanism, and the smallest ε for a target error;
    nothing is spent."""
    at = open_page()
    text = " ".join(i.value for i in at.info)
    assert "Before you release" in text and "95% chance" in text
    # The smallest ε is searched only once its section is opened (issue 29: no widget in a
    # closed section before the first plot, no search nobody reads).
    assert not [w for w in at.number_input if w.key == "fm_target"]
    assert not any("smallest ε" in md.value for md in at.markdown)
    at.session_state["fm_smallest_open"] = True
    at.run()
    at.number_input(key="fm_target").set_value(0.01).run()
    assert not at.exception
    assert any("smallest ε" in md.value for md in at.markdown)
    # The Gaussian's request predicts too (σ calibrated as its release will), but searches no
    # ε; the ambient mechanism has no closed-form law.
    at.radio(key="fm_mech").set_value("gaussian").run()
    assert not at.exception, at.exception
    assert any("Before you release" in i.value for i in at.info)
    assert any("calibrated by Monte Carlo at each ε" in md.value for md in at.markdown)
    at.radio(key="fm_mech").set_value("ambient_laplace").run()
    assert any("No prediction before release" in i.value for i in at.info)
    assert len(at.session_state["privacy_ledger"]) == 0


def test_the_prediction_cost_work_release_ledger_and_export_read_one_request(monkeypatch):
    """issue 29 point 4: the page builds one FrechetMeanRequest from its widgets, and every
    statement before the release, the release, its ledger entry and the exported script read
    it."""
    from dpcore.data.synthetic import default_center
    from dpcore.release import FrechetMeanRequest
    from ui.logic import export as X

    exported = []
    script = X.frechet_script

    def recording(manifold, **kwargs):
        exported.append(kwargs)
        return script(manifold, **kwargs)

    monkeypatch.setattr(X, "frechet_script", recording)
    at = open_page(fm_mech="kng", fm_eps="2.0")
    at.session_state["fm_export_open"] = True  # the export is built once opened
    at = light(at)
    m = Sphere(2)
    radius = at.slider(key="fm_radius_sphere").value
    request = FrechetMeanRequest(m, 50, epsilon=2.0, mechanism="kng", radius=radius,
                                 center=default_center(m))
    assert set(at.session_state["fm_release_facts"]) == {request}
    pred = request.predict()
    assert any(f"**{pred['median']:.3g}**" in i.value for i in at.info)
    event = request.event()
    costs = [md.value for md in at.markdown if md.value.startswith("**Cost of this release")]
    assert costs == [f"**Cost of this release: ε = {event.epsilon:.3g}.** "
                     + costs[0].split(".** ", 1)[1]]
    line = next(c.value for c in at.caption if c.value.startswith("Estimated work:"))
    assert line == request.work().describe().splitlines()[0]
    settings = request.to_script_dict()["settings"]
    assert {k: exported[-1][k] for k in ("radius", "center", "epsilon", "mechanism")} == {
        k: settings[k] for k in ("radius", "center", "epsilon", "mechanism")}
    assert exported[-1]["release_seed"] is None and exported[-1]["n"] == 50
    click_release(at, "fm_release")
    (entry,) = ledger(at)
    assert (entry["epsilon"], entry["delta"], entry["guarantee"], entry["label"]) == (
        event.epsilon, event.delta, event.guarantee, event.label)
    assert at.session_state["fm_last_release"]["signature"][1] == request


def test_scenario_exports_as_script_and_notebook():
    """The default scenario downloads as a script and a notebook (no user data inside)."""
    at = open_page()
    # made once their section is opened (issue 29: not with the first plot)
    assert not [b for b in at.get("download_button") if "export" in b.key]
    at.session_state["fm_export_open"] = True
    at.run()
    assert not at.exception, at.exception
    keys = [b.key for b in at.get("download_button")]
    assert "fm_export_script" in keys and "fm_export_notebook" in keys


def test_world_cities_preset_gives_a_private_release_with_attribution():
    """The preset reads geomstats' world cities (lat/lon -> S²), shows the CC BY 4.0
    attribution, covers the whole globe by default (cities can be anywhere: no city is
    projected), and releases a private ambient Laplace mean; a regional ball about (30°N,
    100°E) says which cities fall outside it and offers the Riemannian mechanisms."""
    at = open_page()
    at.radio(key="fm_source").set_value("cities").run()
    assert not at.exception and not at.error
    assert any("CC BY 4.0" in c.value for c in at.caption)
    assert any("Read 50 places" in c.value for c in at.caption)
    assert at.slider(key="fm_radius_sphere_cities").value == pytest.approx(3.14)
    assert not at.warning
    assert any("all 50 rows lie within" in c.value for c in at.caption)
    click_release(at, "fm_release")
    entry = at.session_state["privacy_ledger"][-1]
    assert entry["guarantee"] == "private" and entry["mechanism"] == "ambient_laplace"
    at.slider(key="fm_radius_sphere_cities").set_value(0.5).run()
    assert not at.exception
    assert any("outside the public ball" in w.value for w in at.warning)
    assert "Riemannian Laplace" in at.radio(key="fm_mech").options  # labels as shown


def test_sphere_upload_in_latitude_longitude():
    at = open_page()
    at.radio(key="fm_source").set_value("upload").run()
    csv = b"name,latitude,longitude\nA,1,2\nB,3,4\nC,-2,1\n"
    at.file_uploader(key="fm_upload").set_value(("places.csv", csv, "text/csv")).run()
    assert not at.exception and not at.error
    assert any("Read 3 places" in c.value for c in at.caption)


# --------------------------------------------------------------------------- EMG preset (SPD)
def emg_page():
    at = light(open_page())
    at.selectbox(key="fm_manifold").set_value("spd").run()
    at.radio(key="fm_source").set_value("emg").run()
    assert not at.exception, at.exception
    return at


def test_emg_preset_has_provenance_bounds_and_a_sensible_strict_release():
    """The EMG preset (geomstats' shipped file, MIT) starts from public bounds that hold the
    data (centre 10·I, r = 3.5: under 5% projected), and its strict Laplace release lies close
    to the mean of the data as given (the bug: centre I, 906 of 913 points clipped, a private
    mean 4 units from the truth while the page reported 0.0037)."""
    at = emg_page()
    assert not at.error and not at.warning
    captions = " ".join(c.value for c in at.caption)
    assert "geomstats" in captions and "MIT" in captions and "not one person" in captions
    assert "Preview on your data (not released)" in captions
    assert metric(at, "Sample size n") == "840"
    assert at.slider(key="fm_radius_spd2_emg").value == pytest.approx(3.5)
    assert at.text_input(key="fm_center_spd2_emg").value == "10"
    # the exported script reads the preset's public matrices from a CSV offered beside it
    at.session_state["fm_export_open"] = True  # (built once opened)
    at.run()
    assert "fm_export_emg" in [b.key for b in at.get("download_button")]
    click_release(at, "fm_release")
    assert at.session_state[LEDGER][-1]["guarantee"] == "private"
    labels = [m.label for m in at.metric]
    assert "Distance to the mean of your data" in labels
    assert "Distance to the mean of the projected data" in labels
    # σ = Δ/ε = 0.0083 on a 3-dimensional space: a distance of 0.5 (60 σ) has chance < 1e-12.
    assert float(metric(at, "Distance to the mean of your data")) < 0.5
    assert any("non-private mean of your data" in c.value for c in at.caption)


def test_emg_with_the_old_default_bounds_warns_before_and_after_release():
    """Centre I and r = 1.5 (the old fixed defaults) leave most EMG rows outside the ball: the
    page says so before release, above 5%, and after release shows the distance to the mean of
    the data as given next to the one of the projected data."""
    at = emg_page()
    at.text_input(key="fm_center_spd2_emg").set_value("1")
    at.slider(key="fm_radius_spd2_emg").set_value(1.5).run()
    assert not at.exception
    warning = " ".join(w.value for w in at.warning)
    assert "lie outside the public ball" in warning and "more than 5%" in warning
    click_release(at, "fm_release")
    mine = float(metric(at, "Distance to the mean of your data"))
    projected = float(metric(at, "Distance to the mean of the projected data"))
    assert mine > 1.0 > projected  # the projection bias, not the noise
    assert any("Projecting the data onto the public ball moved" in w.value for w in at.warning)


@pytest.mark.parametrize("text, fragment", [("1, 2", "takes 1 number"), ("1, 5, 1", "positive"),
                                            ("a", "Could not read")])
def test_bad_spd_centre_is_explained(text, fragment):
    at = emg_page()
    at.text_input(key="fm_center_spd2_emg").set_value(text).run()
    assert not at.exception
    assert at.error and fragment in at.error[0].value


# --------------------------------------------------------------------------- sphere radius
def test_sphere_radius_reaches_the_whole_globe_with_the_ambient_mechanism():
    """Above r* = π/4 only the ambient Laplace mechanism has a sensitivity (2 r_E / n): the
    slider goes on to π, the page says why the others are gone, and the release works."""
    at = open_page()
    slider = at.slider(key="fm_radius_sphere")
    assert slider.max >= 3.14 and "r* = π/4" in slider.help
    at.radio(key="fm_source").set_value("cities").run()
    slider = at.slider(key="fm_radius_sphere_cities")
    assert slider.value == pytest.approx(3.14)  # the preset's default: the whole globe
    assert not at.exception and not at.error
    assert at.radio(key="fm_mech").value == "ambient_laplace"
    assert len(at.radio(key="fm_mech").options) == 1
    assert any("only the ambient Laplace mechanism" in i.value for i in at.info)
    assert not any("outside the public ball" in w.value for w in at.warning)
    click_release(at, "fm_release")
    assert at.session_state[LEDGER][-1]["mechanism"] == "ambient_laplace"
    assert at.session_state[LEDGER][-1]["guarantee"] == "private"


# --------------------------------------------------------------------------- large uploads
def test_large_upload_is_parsed_once_and_drawn_subsampled(monkeypatch):
    """A 50,000-row upload is parsed once: widget changes afterwards do not scan the file or
    read its mapped columns again (kept in the session per file SHA-256 and mapping), the
    preview waits for a switch, and figures draw 2,000 of the points with a note."""
    import time

    # the shared upload-and-mapping widget's logic (ui.upload reads through it)
    from ui.logic import upload as L

    calls = []
    scan, read = L.scan_upload, L.read_mapped

    def counting_scan(raw, **kwargs):
        calls.append(("scan", len(raw)))
        return scan(raw, **kwargs)

    def counting_read(upload, manifold, mapping):
        calls.append(("read", mapping))
        return read(upload, manifold, mapping)

    monkeypatch.setattr(L, "scan_upload", counting_scan)
    monkeypatch.setattr(L, "read_mapped", counting_read)
    # a file no other test uploads (the cache is per file content)
    y = make_mean_data(Sphere(2), 50_000, radius=0.3, rng=20261125)
    at = light(open_page())
    upload(at, to_csv(Sphere(2), y).encode(), name="big.csv")
    assert not at.exception, at.exception
    assert metric(at, "Sample size n") == "50000"
    assert [c[0] for c in calls] == ["scan", "read"]
    timings = {}
    for name, change in [
        ("mechanism", lambda: at.radio(key="fm_mech").set_value("kng")),
        ("epsilon", lambda: at.select_slider(key="fm_eps").set_value(2.0)),
        ("radius", lambda: at.slider(key="fm_radius_sphere").set_value(0.45)),
    ]:
        start = time.perf_counter()
        change().run()
        timings[name] = time.perf_counter() - start
        assert not at.exception, at.exception
    assert len(calls) == 2, f"a widget change parsed the upload again: {calls}"
    assert any("preview is computed on request" in i.value for i in at.info)
    at.toggle(key="fm_preview_large").set_value(True).run()
    assert not at.exception, at.exception
    assert any("random subset of 2,000 of the 50,000" in c.value for c in at.caption)
    assert len(calls) == 2
    print("widget-change seconds with a 50k-row upload:", {k: round(v, 2)
                                                           for k, v in timings.items()})


def test_the_3d_views_are_drawn_only_when_their_tab_is_open():
    """The first figure is the light 2D view (time to first plot); the 3D scene is drawn when
    its tab is chosen (stateful tabs), from the same cached draws."""
    at = light(open_page())

    def trace_types():
        return {trace.get("type") for c in at.get("plotly_chart")
                for trace in json.loads(c.proto.spec)["data"]}

    def titles():
        return [json.loads(c.proto.spec)["layout"]["title"]["text"]
                for c in at.get("plotly_chart")]

    assert "scatter3d" not in trace_types()
    assert "Distribution of the error per mechanism" not in titles()
    at.session_state["fm_view_sphere"] = "3D sphere"
    at.run()
    assert not at.exception, at.exception
    assert "scatter3d" in trace_types()
    at.session_state["fm_view_sphere"] = "Error distribution"
    at.run()
    assert not at.exception, at.exception
    assert "Distribution of the error per mechanism" in titles()
    assert "scatter3d" not in trace_types()
    # the same for the studies: drawn once their section is opened (light() opened it; a
    # fresh page has neither their settings nor their chart), the sensitivity study when its
    # tab is open
    fresh = open_page()
    assert "fm_sim" not in [c.key for c in fresh.get("plotly_chart")]
    assert not [w for w in fresh.multiselect if w.key == "fm_ns"]
    assert "fm_sim" in [c.key for c in at.get("plotly_chart")]
    assert not any("Sensitivity: empirical" in t.value for t in at.markdown)
    at.session_state["fm_study_tab"] = "Sensitivity: empirical vs bound"
    at.run()
    assert not at.exception, at.exception
    assert any("Sensitivity: empirical" in t.value for t in at.markdown)
    assert any("smallest bound / empirical" in str(d.value.columns.tolist())
               for d in at.dataframe)


# --------------------------------------------------------------------------- work (issue 13/14)
def _estimate(n, mech):
    """The page's estimate for the synthetic default scenario at sample size n (the same
    process-wide calibration the page uses)."""
    from dpcore.data.synthetic import default_center
    from ui.logic import frechet_mean as L

    m = Sphere(2)
    return L.release_request(m, n, 1.0, mech, M.spec("sphere").radius,
                             default_center(m)).work()


def test_estimated_work_is_shown_before_the_release():
    at = light(open_page())
    captions = [c.value for c in at.caption]
    assert any(c.startswith("Estimated work:") and "gradient terms" in c for c in captions)
    at.radio(key="fm_mech").set_value("kng").run()
    line = next(c.value for c in at.caption if c.value.startswith("Estimated work:"))
    assert line == _estimate(50, "kng").describe().splitlines()[0]
    assert not at.button(key="fm_release").disabled


def test_a_request_above_the_work_budget_is_refused_with_the_library_reason(monkeypatch):
    """A budget between the estimates at n = 50 and n = 1000 (same calibration as the page):
    raising n past it disables Release and shows the library's refusal; lowering it again
    releases, and the release is recorded."""
    from dpcore.release import work

    # Fixed per-unit costs: a calibration measured on the machine is measured again before a
    # refusal and may come out lower, which made a sibling test's outcome machine-dependent.
    monkeypatch.setattr(work, "_CACHE", {})
    monkeypatch.setattr(work, "_MEASURED", {})
    monkeypatch.setattr(work, "_calibrate", lambda manifold, kind: work.WorkCosts(
        per_step=1e-4, per_term=5e-8, per_sample=1.5e-6))
    low, high = _estimate(50, "kng").seconds, _estimate(1000, "kng").seconds
    assert low < high
    monkeypatch.setattr(work, "DEFAULT_WORK_BUDGET", (low * high) ** 0.5)
    at = light(open_page(fm_mech="kng"))
    assert at.radio(key="fm_mech").value == "kng"
    assert not at.button(key="fm_release").disabled
    at.slider(key="fm_n").set_value(1000).run()
    assert not at.exception
    refusal = [e.value for e in at.error if "above the work budget" in e.value]
    assert refusal and "Reduce the number of draws" in refusal[0] and "lower n" in refusal[0]
    assert at.button(key="fm_release").disabled
    at.slider(key="fm_n").set_value(50).run()
    assert not at.button(key="fm_release").disabled
    click_release(at, "fm_release")
    entries = ledger(at)
    assert len(entries) == 1 and entries[0]["mechanism"] == "kng"
    assert not at.button(key="fm_release").disabled  # enabled again after the release


def test_a_failed_release_is_reported_and_nothing_is_recorded(monkeypatch):
    """The error of a release that fails survives the rerun that enables the button again
    (finish_release / release_error), and nothing enters the ledger."""
    from dpcore.release import FrechetMeanRequest

    def failing(*args, **kwargs):
        raise RuntimeError("sampler exploded")

    at = light(open_page())
    # Only the page's release (the request's run; the previews call the function) fails.
    monkeypatch.setattr(FrechetMeanRequest, "run", failing)
    click_release(at, "fm_release")
    assert ledger(at) == []
    assert any("The release failed: sampler exploded" in e.value for e in at.error)
    assert not at.button(key="fm_release").disabled


# --------------------------------------------------------------------------- figure first
def chart_with(at, text):
    """The spec of the one plotly chart whose (decoded) JSON mentions ``text``."""
    specs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    (spec,) = [s for s in specs if text in json.dumps(s, ensure_ascii=False)]
    return json.dumps(spec, ensure_ascii=False)


def test_the_preview_drawn_before_the_settings_follows_them_in_the_same_run():
    """issue 29: the preview is drawn before the data's widgets (so the browser draws it
    first), from the values those widgets hold; a change reaches it in the run it causes."""
    at = light(open_page())
    assert "Data (n = 50)" in chart_with(at, "Data (n = ")
    at.slider(key="fm_n").set_value(80).run()
    assert not at.exception, at.exception
    assert "Data (n = 80)" in chart_with(at, "Data (n = ")
    assert metric(at, "Sample size n") == "80"
    at.session_state["fm_view_sphere"] = "Error distribution"
    at.select_slider(key="fm_eps").set_value(5.0).run()
    assert not at.exception, at.exception
    assert "at ε = 5 " in chart_with(at, "Distribution of the error").replace(";", " ")


def test_a_preset_is_drawn_first_and_an_upload_after_its_widgets():
    """The world-cities preset's preview is drawn from the settings too; an upload's data come
    from its widgets, so its preview follows them (both show the data and their preview)."""
    at = light(open_page())
    at.radio(key="fm_source").set_value("cities").run()
    assert not at.exception, at.exception
    assert not at.error
    cities = metric(at, "Sample size n")
    assert f"Data (n = {cities})" in chart_with(at, "Data (n = ")
    y = make_mean_data(Sphere(2), 40, radius=0.3, rng=3)
    upload(at, to_csv(Sphere(2), y).encode())
    assert not at.exception, at.exception
    assert "Data (n = 40)" in chart_with(at, "Data (n = ")
