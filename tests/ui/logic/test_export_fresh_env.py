"""The exported script and notebook run as is (issue 31 point 6): a fresh virtual environment
(``python -m venv``, no system site packages) gets dpcore from the install line the export
prints and nothing else from the dashboard; an exported script and an exported notebook
(executed by nbclient, installed there for the test at the pins of requirements-dev.txt) read
the uploaded file by the name it was uploaded under, record the ε_b of bounds estimated under
DP, and give the release the page logic computes in this process with the same seed.

One environment, built once per session and shared by the script and the notebook (its
packages come from the pip cache after ``make venv-dev``); slow: about a minute or two.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import pytest

from dpcore.data import make_regression_data, to_csv
from dpcore.manifolds import Euclidean, Sphere
from dpcore.release import private_geodesic_regression
from ui.logic import export as X
from ui.logic import gaussian_dp as GL
from ui.logic import geodesic_regression as G
from ui.logic import linear_regression as L
from ui.logic import private_bounds as PB
from ui.logic import regression_data as D
from ui.manifolds import spec

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[3]
#: Runs an exported notebook with nbclient in the fresh environment (its kernel: that
#: environment's python) and prints the stdout of its cells.
DRIVER = """
import sys

import nbformat
from nbclient import NotebookClient

nb = nbformat.read(sys.argv[1], as_version=4)
NotebookClient(nb, timeout=600, kernel_name="python3",
               resources={"metadata": {"path": sys.argv[2]}}).execute()
for cell in nb.cells:
    for out in cell.get("outputs", []):
        if out.get("output_type") == "stream" and out.get("name") == "stdout":
            print(out["text"], end="")
"""


def dev_pins(*names):
    """``name==version`` of ``names`` as pinned in requirements-dev.txt."""
    text = (ROOT / "requirements-dev.txt").read_text(encoding="utf-8")
    pins = dict(re.findall(r"^([A-Za-z0-9_.-]+)==(\S+)", text, flags=re.M))
    return [f"{n}=={pins[n]}" for n in names]


def printed_install_line(script):
    """The install command a script's docstring prints (the line that starts with
    ``python -m pip install``)."""
    head = script[:script.index("# %% Setup")]
    (line,) = [s.strip() for s in head.splitlines() if s.strip().startswith("python -m pip ")]
    return line


def clean_env(home):
    """The environment of the fresh interpreter: no path to this checkout, no active venv,
    Jupyter's folders in ``home``."""
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONHOME", "VIRTUAL_ENV", "MPLBACKEND")}
    for var, sub in (("JUPYTER_DATA_DIR", "data"), ("JUPYTER_CONFIG_DIR", "config"),
                     ("JUPYTER_RUNTIME_DIR", "runtime"), ("IPYTHONDIR", "ipython")):
        env[var] = str(home / sub)
    return env


def run(cmd, env, cwd, timeout=1200):
    out = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=cwd,
                         timeout=timeout, check=False)
    assert out.returncode == 0, (cmd, out.stdout[-3000:], out.stderr[-3000:])
    return out.stdout


@pytest.fixture(scope="session")
def fresh_env(tmp_path_factory):
    """``(python, env)`` of a fresh virtual environment made from an exported script's own
    install line, plus nbclient and ipykernel for the notebook."""
    home = tmp_path_factory.mktemp("fresh_env")
    env = clean_env(home)
    venv = home / "venv"
    run([sys.executable, "-m", "venv", str(venv)], env, home)
    python = str(venv / "bin" / "python")
    line = printed_install_line(X.gaussian_dp_script(GL.release_request(10, 0.5, 0.5),
                                                     sensitivity=0.5, seed=0))
    argv = shlex.split(line)
    assert argv[:4] == ["python", "-m", "pip", "install"]
    # The printed line as it is, with pip's --no-compile: the same packages, without the
    # byte-code of every module of numpy, scipy and numba written ahead (about 13 CPU s on
    # the 2-core machine); Python compiles what the script imports when it imports it.
    run([python, *argv[1:4], "--no-compile", *argv[4:]], env, home)
    run([python, "-m", "pip", "install", "--no-compile", *dev_pins("nbclient", "ipykernel")],
        env, home)
    return python, env


def result_of(stdout):
    line = next(s for s in stdout.splitlines() if s.startswith("RESULT "))
    return json.loads(line[len("RESULT "):])


def test_the_printed_line_installs_this_checkout_with_its_compiled_path():
    line = printed_install_line(X.frechet_script(
        Sphere(2), source="synthetic", n=10, seed=0, radius=0.3, center=[0.0, 0.0, 1.0],
        epsilon=1.0, mechanism="laplace"))
    assert shlex.split(line) == ["python", "-m", "pip", "install", "-e", f"{ROOT}[fast]"]
    assert "requirements.txt" not in line


@pytest.mark.slow_first(25)
def test_exported_script_and_notebook_run_in_a_fresh_environment(fresh_env, tmp_path):
    python, env = fresh_env
    # The environment holds dpcore with its compiled path, and nothing of the dashboard.
    probe = ("import importlib.util as u, dpcore.sampling._compiled_sphere as c; "
             "print(c.NUMBA_AVAILABLE, u.find_spec('streamlit') is None, "
             "u.find_spec('ui') is None)")
    assert run([python, "-c", probe], env, tmp_path).split() == ["True", "True", "True"]

    # --- The script: a linear regression of an uploaded file whose response bounds were
    # estimated under DP (ε_b = 0.25) before the release.
    rng = np.random.default_rng(5)
    dose = np.round(rng.uniform(0.0, 10.0, 60), 3)
    effect = np.round(2.0 + 0.8 * dose + rng.normal(0.0, 1.0, 60), 3)
    text = "dose,effect\n" + "".join(f"{a},{b}\n" for a, b in zip(dose, effect, strict=True))
    (tmp_path / "doses 2024.csv").write_text(text, encoding="utf-8")
    note = PB.estimated_note(0.25, (0.02, 0.98))
    bounds = {"covariate_range": (0.0, 10.0), "tau": 4.0, "tau_m": 8.0, "center": [6.0],
              "estimated": {"tau_m": f"the response box of 'effect' {note}",
                            "center": f"the response box of 'effect' {note}"}}
    kw = L.release_settings(1.0, 1.0, bounds, "strict")
    script = X.linear_regression_script(
        kw, source="upload", covariate="dose", responses=["effect"],
        data_file="doses 2024.csv", release_seed=13,
        bounds_estimate={"epsilon": 0.25, "notes": bounds["estimated"]})
    assert "DATA_FILE = 'doses 2024.csv'" in script and "BOUNDS_EPSILON = 0.25" in script
    path = tmp_path / "linear_regression_scenario.py"
    path.write_text(script, encoding="utf-8")
    stdout = run([python, str(path)], env, tmp_path)
    got = result_of(stdout)
    # the page: the same file, its release call with the same seed, its annotation
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rel = private_geodesic_regression(Euclidean(1), dose, effect[:, None], rng=13, **kw)
    rel = PB.annotate_release(rel, bounds["estimated"])
    assert got["label"] == rel.label and got["epsilon"] == rel.epsilon
    np.testing.assert_allclose(got["slope"], np.asarray(rel.values["coef"]).reshape(-1),
                               rtol=0, atol=1e-12)
    np.testing.assert_allclose(got["intercept"],
                               np.asarray(rel.values["intercept"]).reshape(-1),
                               rtol=0, atol=1e-12)
    for name in ("tau_m", "center"):
        assert got["assumptions"][name]["note"] == rel.assumptions[name]["note"]
        assert "ε_b = 0.25" in got["assumptions"][name]["note"]
    assert f"total with this release: {0.25 + rel.epsilon}" in stdout

    # --- The notebook: a geodesic regression on S² (the compiled MCMC chain) of an uploaded
    # file, its covariate range estimated under DP (ε_b = 0.1).
    data = make_regression_data(Sphere(2), 30, noise=D.default_noise("sphere"), rng=4)
    raw = to_csv(Sphere(2), data.y, x=data.x).replace("x,", "age,", 1).encode()
    (tmp_path / "paths.csv").write_bytes(raw)
    sp = spec("sphere")
    settings = G.ReleaseSettings(kind="sphere", param=None, eps_p=1.0, eps_v=2.0, tau=sp.tau,
                                 covariate_range=(0.0, 1.0), tau_m=sp.tau_m, n_footpoints=2,
                                 n_vectors=1, seed=7)
    estimate = {"range": (0.0, 1.0), "epsilon": 0.1, "levels": (0.02, 0.98)}
    notes = G.covariate_estimate_note(settings.covariate_range, estimate)
    script = X.regression_script(settings.manifold, settings.release_kwargs(),
                                 source="upload", covariate="age", data_file="paths.csv",
                                 bounds_estimate={"epsilon": 0.1, "notes": notes})
    notebook = tmp_path / "geodesic_regression_scenario.ipynb"
    notebook.write_text(X.notebook_from_script(script), encoding="utf-8")
    stdout = run([python, "-c", DRIVER, str(notebook), str(tmp_path)], env, tmp_path)
    printed = {s.split(":", 1)[0]: s.split(":", 1)[1].strip()
               for s in stdout.splitlines() if ":" in s}
    rel, _ = G.run_release(settings, D.parse_upload(raw, "sphere", None, covariate="age"))
    rel = PB.annotate_release(rel, notes)
    assert printed["label"] == rel.label
    np.testing.assert_allclose(json.loads(printed["footpoint"]),
                               np.asarray(rel.values["footpoint"]), rtol=0, atol=1e-12)
    np.testing.assert_allclose(json.loads(printed["shooting vector"]),
                               np.asarray(rel.values["shooting_vector"]), rtol=0, atol=1e-12)
    assert f"total with this release: {0.1 + rel.epsilon}" in stdout
