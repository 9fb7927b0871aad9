"""The exported scripts run on their own (issue 15 §3): the script each page offers for its
default scenario is taken from the page's own download button (AppTest), run in a fresh
interpreter with only the repository on PYTHONPATH, and must finish cleanly; a seeded export
prints the same numbers as the page logic computes for that seed."""

import json
import math
import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import streamlit.testing.v1.app_test as app_test
from streamlit.runtime.memory_media_file_storage import MemoryMediaFileStorage

from dpcore.data import make_mean_data
from dpcore.data.synthetic import default_center
from dpcore.learning import frechet_mean
from dpcore.manifolds import Sphere
from dpcore.release import private_frechet_mean
from ui.logic import budget_split as B
from ui.logic import export as X
from ui.logic import gaussian_dp as L

from ...app.pages import open_app_page

ROOT = Path(__file__).resolve().parents[3]


class _Recorded(MemoryMediaFileStorage):
    """The AppTest media storage, kept so the test can read what a download button serves."""

    instances = []

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        _Recorded.instances.append(self)


@pytest.fixture
def downloads(monkeypatch):
    _Recorded.instances.clear()
    monkeypatch.setattr(app_test, "MemoryMediaFileStorage", _Recorded)

    def read(at, key):
        button = next(b for b in at.get("download_button") if b.proto.id.endswith(key))
        file_id = button.proto.url.rsplit("/", 1)[1].split(".")[0]
        for storage in reversed(_Recorded.instances):
            try:
                return storage.get_file(file_id).content.decode("utf-8")
            except Exception:  # noqa: BLE001 - another run's storage: look in the next one
                continue
        raise AssertionError(f"the file of download button {key} was not found")

    return read


def run_script(script, tmp_path, timeout=300):
    path = tmp_path / "scenario.py"
    path.write_text(script, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MPLBACKEND")}
    env["PYTHONPATH"] = str(ROOT)
    out = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, env=env,
                         cwd=tmp_path, timeout=timeout)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "import streamlit" not in script and "from ui" not in script
    return out.stdout


def result_of(stdout):
    line = next(s for s in stdout.splitlines() if s.startswith("RESULT "))
    return json.loads(line[len("RESULT "):])


def check_notebook(text, script):
    """The notebook holds the script: its code cells, in order, are the script's code after
    the docstring (each ``# %% Title`` becoming a cell headed ``# Title``)."""
    nb = json.loads(text)
    assert nb["nbformat"] == 4 and nb["cells"][0]["cell_type"] == "markdown"
    code = [c["source"] for c in nb["cells"] if c["cell_type"] == "code"]
    body = script[script.index("# %%"):]
    want = [line for line in body.replace("# %%", "#").splitlines() if line.strip()]
    have = [line for cell in code for line in cell.splitlines() if line.strip()]
    assert [w.strip() for w in want] == [h.strip() for h in have]
    try:
        import nbformat
    except ImportError:  # nbformat is optional: the JSON structure was checked above
        return
    nbformat.validate(nbformat.reads(text, as_version=4))


@pytest.mark.parametrize(("page", "key", "expect"), [
    ("gaussian_dp.py", "gd_export", "distance to the non-private mean"),
    ("budget_split.py", "bs_export", "--- unequal view"),
    ("frechet_mean.py", "fm_export", "distance to the non-private mean"),
    ("geodesic_regression.py", "gr_export", "shooting vector:"),
])
def test_default_scenario_script_runs(tmp_path, downloads, page, key, expect):
    at = open_app_page(page, timeout=300)
    at.session_state[f"{key}_open"] = True  # the export is built once its section is opened
    at.run()
    assert not at.exception, at.exception
    script = downloads(at, f"{key}_script")
    check_notebook(downloads(at, f"{key}_notebook"), script)
    stdout = run_script(script, tmp_path)
    assert expect in stdout
    if page == "gaussian_dp.py":
        # the page's accuracy metric is the script's prediction
        shown = next(m.value for m in at.metric if m.label == "Predicted median error")
        assert shown == f"{math.degrees(result_of(stdout)['predicted_median']):.3g}°"


def test_seeded_gaussian_export_reproduces_the_page(tmp_path):
    sigma, delta, n, seed, release_seed = 0.6, 0.8, 25, 4, 9
    request = L.release_request(n, sigma, delta)
    radius = request.radius
    assert radius == L.release_radius(n, delta)
    script = X.gaussian_dp_script(request, sensitivity=delta, seed=seed,
                                  release_seed=release_seed)
    got = result_of(run_script(script, tmp_path))
    # the page: its data, its release call, its prediction
    m = Sphere(2)
    y = make_mean_data(m, n, radius=radius, rng=seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rel = private_frechet_mean(m, y, sigma=sigma, mechanism="gaussian", radius=radius,
                                   center=default_center(m), rng=release_seed)
    private = np.asarray(rel.values["mean"])[0]
    np.testing.assert_allclose(got["private_mean"], private, rtol=0, atol=1e-12)
    assert got["distance"] == pytest.approx(float(m.dist(frechet_mean(m, y), private)),
                                            abs=1e-12)
    assert got["mu"] == pytest.approx(rel.mu, rel=1e-12)
    pred = L.predicted_release_error(request)
    assert got["predicted_median"] == pytest.approx(pred["median"], rel=1e-12)
    assert got["predicted_q95"] == pytest.approx(pred["q95"], rel=1e-12)


@pytest.mark.parametrize("mode", ["strict", "paper"])
def test_seeded_budget_split_export_reproduces_the_page(tmp_path, mode):
    config = B.SweepConfig(mode=mode, sample_sizes=(12, 15), replicates=2, n_unequal=3,
                           n_equal=2, n_grid=2, grid_n=12, n_footpoints=2, n_vectors=2,
                           chain_length=40, burn_in=40, seed=5,
                           tau=0.2 if mode == "strict" else None,
                           max_ratio=10.0 if mode == "strict" else 100.0)
    got = result_of(run_script(B.export_script(config), tmp_path))
    for view in config.views:
        # the page runs chunk by chunk (cached); its rows in the sweep's order
        page = pd.concat([B.run_chunk(config, v, n, rep)
                          for v, n, rep in B.sweep_chunks(config) if v == view])
        page = page.sort_values(["n", "eps_p", "eps_v", "replicate"], kind="stable")
        np.testing.assert_allclose(got[view], page["log_mse"].to_numpy(), rtol=0, atol=1e-12)


@pytest.mark.parametrize("kind", ["spd", "kendall"])
def test_seeded_budget_split_export_reproduces_the_design(tmp_path, kind):
    """Issue 14: the SPD(2) and Kendall strict simulations' scripts pass the page's public
    design (SPD: data generator region; noise, footpoint region, speed bound, τ, τ_m) and print
    the page's numbers."""
    config = B.design_config(kind, sample_sizes=(12, 15), replicates=2, n_unequal=3,
                             n_equal=2, n_grid=2, grid_n=12, n_footpoints=2, n_vectors=2,
                             chain_length=40, burn_in=40, seed=5)
    script = B.export_script(config)
    assert "max_speed=0.55," in script and "noise=0.05," in script
    if kind == "spd":
        assert "data_kwargs={'footpoint_region': (None, 0.1)}" in script
        assert "footpoint_radius=0.1," in script and "tau_m=0.8," in script
        assert "stated public design" in script
    else:
        assert "KendallShape(4)" in script and "footpoint_radius=0.15," in script
    got = result_of(run_script(script, tmp_path))
    for view in config.views:
        page = pd.concat([B.run_chunk(config, v, n, rep)
                          for v, n, rep in B.sweep_chunks(config) if v == view])
        page = page.sort_values(["n", "eps_p", "eps_v", "replicate"], kind="stable")
        np.testing.assert_allclose(got[view], page["log_mse"].to_numpy(), rtol=0, atol=1e-12)


def test_mapped_upload_export_reproduces_the_page(tmp_path, downloads):
    """A file whose point columns have other names, beside an identifier, a person and a date
    column (one row without a person): the Fréchet page maps it, and the script it offers reads
    the same file through the same mapping (the same rows: the person-less row left out) in a
    fresh interpreter; seeded, it prints the private mean the page's release call draws on the
    page's points."""
    from dpcore.data import to_csv
    from ui.logic import frechet_mean as F

    m = Sphere(2)
    y = make_mean_data(m, 24, radius=0.3, rng=31)
    _, *rows = to_csv(m, y).strip().splitlines()
    person = [f"p{i // 4}" if i != 5 else "" for i in range(len(rows))]
    text = "\n".join(["id,px,py,pz,person,date"] + [
        f"{i + 1},{row},{person[i]},2024-05-{i % 28 + 1:02d}" for i, row in enumerate(rows)])
    data = (text + "\n").encode()

    at = open_app_page("frechet_mean.py", timeout=300)
    at.radio(key="fm_source").set_value("upload").run()
    at.file_uploader(key="fm_upload").set_value(("mine.csv", data, "text/csv")).run()
    (box,) = [s for s in at.selectbox if s.label == "Person (group) column (optional)"]
    box.set_value("person").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert next(mt.value for mt in at.metric if mt.label == "Sample size n") == "23"
    at.session_state["fm_export_open"] = True  # the export is built once its section is opened
    at.run()
    script = downloads(at, "fm_export_script")
    assert "COLUMNS = {'y1': 'px', 'y2': 'py', 'y3': 'pz'}" in script
    assert "PERSON = 'person'" in script
    assert "DATA_FILE = 'mine.csv'" in script  # the uploaded file's own name
    assert f"{y[0, 0]!r}" not in script  # no data in the script
    release_seed = 13
    assert "RELEASE_SEED = None" in script
    script = script.replace("RELEASE_SEED = None", f"RELEASE_SEED = {release_seed}")
    (tmp_path / "mine.csv").write_bytes(data)
    stdout = run_script(script, tmp_path)
    assert "1 row with an empty cell left out" in stdout
    assert "rows per person (largest group): 4" in stdout

    # the page: its points through its mapping, its public settings, its release call
    mapping = F.PointMapping("coordinates", ("px", "py", "pz"), "person")
    points = F.read_mapped(F.scan_upload(data, max_bytes=10**7), m, mapping).y
    np.testing.assert_array_equal(points, np.delete(y, 5, axis=0))
    center = F.parse_center_text(at.text_input(key="fm_center").value)
    radius = at.slider(key="fm_radius_sphere").value
    rel = private_frechet_mean(m, points, epsilon=at.select_slider(key="fm_eps").value,
                               mechanism=at.radio(key="fm_mech").value, radius=radius,
                               center=center, mode="strict", rng=release_seed)
    private = np.asarray(rel.values["mean"])[0]
    printed = {line.split(":", 1)[0]: line.split(":", 1)[1].strip()
               for line in stdout.splitlines() if ":" in line}
    np.testing.assert_allclose(json.loads(printed["private mean"]), private, rtol=0,
                               atol=1e-12)
    assert printed["label"] == rel.label
