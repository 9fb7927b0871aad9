"""Exported scripts and notebooks (ui.logic.export) reproduce the page's release with dpcore
alone: the script is run in a fresh interpreter and its numbers compared with the library
called as the Fréchet mean page calls it."""

import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from dpcore.data import make_mean_data, make_regression_data
from dpcore.data.synthetic import default_center
from dpcore.learning import frechet_mean
from dpcore.manifolds import SPD, Sphere
from dpcore.release import private_frechet_mean, project_to_ball
from ui.logic import export as E

ROOT = Path(__file__).resolve().parents[3]


def _run(script, tmp_path, *, with_ui=False):
    path = tmp_path / "scenario.py"
    path.write_text(script, encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, str(path)], capture_output=True, text=True, env=env,
                         cwd=tmp_path, timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout


@pytest.mark.parametrize("manifold,radius,mechanism", [(Sphere(2), np.pi / 8, "laplace"),
                                                       (Sphere(2), 0.5, "kng"),
                                                       (SPD(2), 1.5, "laplace")])
def test_seeded_export_reproduces_the_page_release(tmp_path, manifold, radius, mechanism):
    n, seed, eps, release_seed = 50, 3, 1.0, 11
    center = default_center(manifold)
    script = E.frechet_script(manifold, source="synthetic", n=n, seed=seed, radius=radius,
                              center=center, epsilon=eps, mechanism=mechanism,
                              release_seed=release_seed)
    assert "import streamlit" not in script and "from ui" not in script
    stdout = _run(script, tmp_path)
    # the page: synthetic data, the public ball, the release
    y = make_mean_data(manifold, n, radius=radius, rng=seed)
    rel = private_frechet_mean(manifold, y, epsilon=eps, mechanism=mechanism, radius=radius,
                               center=center, rng=release_seed)
    private = np.asarray(rel.values["mean"])[0]
    mean = frechet_mean(manifold, project_to_ball(manifold, y, center, radius))
    printed = {line.split(":", 1)[0]: line.split(":", 1)[1].strip()
               for line in stdout.splitlines() if ":" in line}
    np.testing.assert_allclose(np.array(json.loads(printed["private mean"])), private,
                               rtol=0, atol=1e-12)
    assert float(printed["distance to the non-private mean"]) == pytest.approx(
        float(manifold.dist(mean, private)), abs=1e-12)
    assert printed["label"] == rel.label
    if mechanism in ("laplace", "kng"):
        assert "predicted distance to the non-private mean" in stdout


def test_upload_export_names_the_file_and_embeds_no_data(tmp_path):
    from dpcore.data import to_csv

    y = make_mean_data(Sphere(2), 30, radius=0.3, rng=1)
    script = E.frechet_script(Sphere(2), source="upload", radius=0.3,
                              center=[0.0, 0.0, 1.0], epsilon=2.0, mechanism="laplace",
                              data_file="mine.csv")
    for value in y.ravel()[:10]:
        assert f"{value:.6f}"[:8] not in script
    (tmp_path / "mine.csv").write_text(to_csv(Sphere(2), y), encoding="utf-8")
    stdout = _run(script, tmp_path)
    assert "label: private" in stdout


def test_mapped_spd_upload_export_reproduces_the_page(tmp_path):
    """Full SPD(2) matrices under names of the file's own, in another order, beside a subject
    and a comment column: the script reads them through the page's mapping
    (:func:`ui.logic.frechet_mean.mapped_columns`) and, seeded, prints the page's release."""
    from ui.logic import frechet_mean as F

    m, radius, eps, release_seed = SPD(2), 1.5, 1.0, 5
    y = make_mean_data(m, 30, radius=1.0, rng=8)
    y = 0.5 * (y + np.swapaxes(y, -1, -2))
    body = "".join(f"{float(a[1, 1])!r},s{i},{float(a[1, 0])!r},{float(a[0, 0])!r},"
                   f"{float(a[0, 1])!r},ok\n" for i, a in enumerate(y))
    data = ("var_b,subject,cov_ba,var_a,cov_ab,comment\n" + body).encode()
    mapping = F.PointMapping("spd_full", ("var_a", "cov_ab", "cov_ba", "var_b"))
    page = F.read_mapped(F.scan_upload(data, max_bytes=10**7), m, mapping)
    np.testing.assert_array_equal(page.y, y)
    center = default_center(m)
    script = E.frechet_script(m, source="upload", radius=radius, center=center, epsilon=eps,
                              mechanism="laplace", release_seed=release_seed,
                              data_file="mine.csv", columns=F.mapped_columns(m, mapping))
    (tmp_path / "mine.csv").write_bytes(data)
    stdout = _run(script, tmp_path)
    assert "Read 30 matrices given in full (var_a, cov_ab, cov_ba, var_b" in stdout
    assert "Columns not used: subject, comment." in stdout
    rel = private_frechet_mean(m, page.y, epsilon=eps, mechanism="laplace", radius=radius,
                               center=center, mode="strict", rng=release_seed)
    printed = {line.split(":", 1)[0]: line.split(":", 1)[1].strip()
               for line in stdout.splitlines() if ":" in line}
    np.testing.assert_allclose(np.array(json.loads(printed["private mean"])),
                               np.asarray(rel.values["mean"])[0], rtol=0, atol=1e-12)


def test_regression_upload_export_reads_the_pages_covariate_and_ignores_other_columns(
        tmp_path):
    """A Geodesic regression upload with the covariate named 'age' and an id and a person
    column: the script reads it as the page does (covariate='age', other columns ignored) and,
    seeded, prints the page's release."""
    from ui.logic import geodesic_regression as G
    from ui.logic import regression_data as D
    from ui.manifolds import spec

    d = make_regression_data(Sphere(2), 20, noise=0.003, rng=6)
    rows = [f"{i + 1},{float(t)!r},{a!r},{b!r},{c!r},p{i // 5}"
            for i, (t, (a, b, c)) in enumerate(zip(d.x, d.y.tolist(), strict=True))]
    data = ("id,age,y1,y2,y3,person\n" + "\n".join(rows) + "\n").encode()
    dataset = D.parse_upload(data, "sphere", None, covariate="age", person="person")
    sp = spec("sphere")
    settings = G.ReleaseSettings(kind="sphere", param=None, eps_p=1.0, eps_v=2.0, tau=sp.tau,
                                 covariate_range=(0.0, 1.0), tau_m=sp.tau_m, n_footpoints=2,
                                 n_vectors=1, seed=7)
    release, _ = G.run_release(settings, dataset)
    script = E.regression_script(settings.manifold, settings.release_kwargs(), source="upload",
                                 data_file="mine.csv", covariate="age")
    (tmp_path / "mine.csv").write_bytes(data)
    stdout = _run(script, tmp_path)
    assert "Columns not used: id, person." in stdout
    printed = {line.split(":", 1)[0]: line.split(":", 1)[1].strip()
               for line in stdout.splitlines() if ":" in line}
    np.testing.assert_allclose(np.array(json.loads(printed["footpoint"])),
                               np.asarray(release.values["footpoint"]), rtol=0, atol=1e-12)
    np.testing.assert_allclose(np.array(json.loads(printed["shooting vector"])),
                               np.asarray(release.values["shooting_vector"]), rtol=0, atol=1e-12)


def test_regression_upload_export_reads_the_pages_column_mapping(tmp_path):
    """A Geodesic regression upload read through the shared widget's mapping (latitude and
    longitude under other names, a person column with one blank cell): the script passes the
    same ``columns=`` and ``group=`` to the reader, so it reads the page's rows (the blank
    person's row left out) and, seeded, prints the page's release."""
    from dpcore.data import sphere_to_latlon
    from ui.logic import geodesic_regression as G
    from ui.logic import regression_data as D
    from ui.logic import upload as U
    from ui.manifolds import spec

    d = make_regression_data(Sphere(2), 21, noise=0.003, rng=8)
    lat, lon = sphere_to_latlon(d.y)
    rows = [f"{float(t)!r},{a!r},{b!r},{'' if i == 4 else f'p{i // 5}'}"
            for i, (t, a, b) in enumerate(zip(d.x, lat.tolist(), lon.tolist(), strict=True))]
    data = ("Years,Breite (N),Länge (E),who\n" + "\n".join(rows) + "\n").encode()
    upload = U.scan_upload(data, max_bytes=10**6)
    mapping = U.PointMapping("latlon", ("Breite (N)", "Länge (E)"), "who", "Years")
    read = U.read_mapped(upload, Sphere(2), mapping)
    assert read.n == 20 and read.dropped == 1 and read.rows_per_person == 5
    sp = spec("sphere")
    settings = G.ReleaseSettings(kind="sphere", param=None, eps_p=1.0, eps_v=2.0, tau=sp.tau,
                                 covariate_range=(0.0, 1.0), tau_m=sp.tau_m, n_footpoints=1,
                                 n_vectors=1, seed=3)
    release, _ = G.run_release(settings, D.upload_dataset(read))
    script = E.regression_script(settings.manifold, settings.release_kwargs(), source="upload",
                                 data_file="mapped.csv", covariate="Years", person="who",
                                 columns=U.mapped_columns(Sphere(2), mapping))
    assert "COLUMNS = {'lat': 'Breite (N)', 'lon': 'Länge (E)'}" in script
    (tmp_path / "mapped.csv").write_bytes(data)
    stdout = _run(script, tmp_path)
    printed = {line.split(":", 1)[0]: line.split(":", 1)[1].strip()
               for line in stdout.splitlines() if ":" in line}
    np.testing.assert_allclose(np.array(json.loads(printed["footpoint"])),
                               np.asarray(release.values["footpoint"]), rtol=0, atol=1e-12)
    np.testing.assert_allclose(np.array(json.loads(printed["shooting vector"])),
                               np.asarray(release.values["shooting_vector"]), rtol=0, atol=1e-12)

def test_notebook_has_the_script_cells():
    script = E.frechet_script(Sphere(2), source="synthetic", n=20, seed=0, radius=0.3,
                              center=[0.0, 0.0, 1.0], epsilon=1.0, mechanism="laplace")
    nb = json.loads(E.notebook_from_script(script))
    assert nb["nbformat"] == 4 and nb["cells"][0]["cell_type"] == "markdown"
    code = [c["source"] for c in nb["cells"] if c["cell_type"] == "code"]
    assert [c.splitlines()[0] for c in code] == [
        "# Setup", "# Public bounds and budget (fixed before looking at the data)", "# Data",
        "# Accuracy before release (public inputs only; nothing is spent)", "# Release",
        "# Summary (machine-readable)"]
    body = "\n".join(line for c in code for line in c.splitlines()[1:])
    assert "private_frechet_mean(" in body
    compile(body, "notebook", "exec")
    nbformat = pytest.importorskip("nbformat", reason="nbformat is not installed (optional)")
    nbformat.validate(nbformat.reads(E.notebook_from_script(script), as_version=4))


def test_cities_preset_export_runs(tmp_path):
    from dpcore.data import latlon_to_sphere

    script = E.frechet_script(Sphere(2), source="cities", radius=0.75,
                              center=latlon_to_sphere(30, 100), epsilon=1.0,
                              mechanism="laplace", release_seed=2)
    assert "CC BY 4.0" in script
    assert "label: private" in _run(script, tmp_path)


@pytest.mark.parametrize("kind,param,source", [("sphere", None, "synthetic"),
                                               ("sphere", None, "example"),
                                               ("kendall", 4, "synthetic"),
                                               ("spd", None, "synthetic"),
                                               ("euclidean", 1, "synthetic")])
def test_regression_export_reproduces_the_page_release(tmp_path, kind, param, source):
    """The Geodesic regression page's default settings (small draws), seeded: the exported
    script's footpoints and vectors equal the page logic's release to 1e-12."""
    from ui.logic import geodesic_regression as G
    from ui.logic import regression_data as D
    from ui.manifolds import spec

    sp = spec(kind)
    settings = G.ReleaseSettings(
        kind=kind, param=param, eps_p=1.0, eps_v=2.0, tau=sp.tau,
        covariate_range=D.EXAMPLE_AGES if source == "example" else (0.0, 1.0),
        tau_m=sp.tau_m, n_footpoints=2, n_vectors=1, seed=7)
    if source == "synthetic":
        dataset = G.synthetic_dataset(kind, param, 20, D.default_noise(kind), 4)
        extra = dict(n=20, noise=D.default_noise(kind), seed=4)
    else:
        dataset = D.example_dataset(kind, param)
        extra = dict(example=(D.EXAMPLE_N, D.EXAMPLE_SEED, D.EXAMPLE_AGES))
    release, _ = G.run_release(settings, dataset)
    script = E.regression_script(settings.manifold, settings.release_kwargs(), source=source,
                                 **extra)
    assert "import streamlit" not in script and "from ui" not in script
    stdout = _run(script, tmp_path)
    printed = {line.split(":", 1)[0]: line.split(":", 1)[1].strip()
               for line in stdout.splitlines() if ":" in line}
    np.testing.assert_allclose(np.array(json.loads(printed["footpoint"])),
                               np.asarray(release.values["footpoint"]), rtol=0, atol=1e-12)
    np.testing.assert_allclose(np.array(json.loads(printed["shooting vector"])),
                               np.asarray(release.values["shooting_vector"]), rtol=0, atol=1e-12)
    assert printed["label"] == release.label
