"""The frame of an exported script (ui.logic.export_setup): the install line it prints, the
name of the data file it reads, the dashboard's presets by absolute path, and a bounds
estimate under DP recorded with its ε_b. (The scripts are run in a fresh environment by
test_export_fresh_env.py.)"""

import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from dpcore.manifolds import Sphere
from ui.logic import export as X
from ui.logic import export_setup as S
from ui.logic import gaussian_dp as GL
from ui.logic import linear_regression as L

ROOT = Path(__file__).resolve().parents[3]


def _scripts():
    """One script of each kind the dashboard exports."""
    kw = L.release_settings(1.0, 1.0, {"covariate_range": (0.0, 1.0), "tau": 1.0,
                                       "tau_m": 1.0, "center": [0.0]}, "strict")
    return {
        "frechet": X.frechet_script(Sphere(2), source="synthetic", n=10, seed=0, radius=0.3,
                                    center=[0.0, 0.0, 1.0], epsilon=1.0, mechanism="laplace"),
        "regression": X.regression_script(Sphere(2), {"eps_p": 1.0, "eps_v": 1.0},
                                           source="upload"),
        "linear": X.linear_regression_script(kw, source="upload", covariate="x",
                                             responses=["y"]),
        "gaussian": X.gaussian_dp_script(GL.release_request(10, 0.5, 0.5), sensitivity=0.5,
                                         seed=0),
    }


def test_install_line_names_the_checkout_quoted_for_the_shell():
    assert S.install_line() == f"python -m pip install -e {shlex.quote(f'{ROOT}[fast]')}"
    line = S.install_line(("fast", "plot"), repository="/tmp/my repo")
    assert shlex.split(line) == ["python", "-m", "pip", "install", "-e",
                                 "/tmp/my repo[fast,plot]"]
    assert shlex.split(S.install_line((), repository="/x"))[-1] == "/x"
    assert (ROOT / "pyproject.toml").is_file() and S.REPOSITORY == ROOT


@pytest.mark.parametrize("kind", ["frechet", "regression", "linear", "gaussian"])
def test_every_script_prints_the_install_line_not_the_requirements(kind):
    script = _scripts()[kind]
    head = script[:script.index("# %% Setup")]
    assert S.install_line() in head
    assert "requirements.txt" not in script and "on the path" not in script


def test_budget_split_script_prints_it_too():
    from ui.logic import budget_split as B

    config = B.SweepConfig(mode="strict", sample_sizes=(12,), replicates=1, n_unequal=2,
                           n_equal=2, n_grid=2, grid_n=12, n_footpoints=1, n_vectors=1,
                           chain_length=20, burn_in=20, seed=1, tau=0.2, max_ratio=10.0)
    script = B.export_script(config)
    assert S.install_line() in script[:script.index("# %% Setup")]


@pytest.mark.parametrize(("name", "expected"), [
    (None, "your_data.csv"),
    ("", "your_data.csv"),
    ("mine.csv", "mine.csv"),
    ("doses 2024.csv", "doses 2024.csv"),
    ("C:\\Users\\me\\mine.csv", "mine.csv"),
    ("../../etc/passwd", "passwd"),
    ("bad\nname\x00.csv", "badname.csv"),
    ("..", "your_data.csv"),
])
def test_the_uploaded_file_name_is_written_as_a_file_next_to_the_script(name, expected):
    assert S.data_file_name(name) == expected


def test_uploaded_name_is_filled_in_every_upload_script():
    kw = L.release_settings(1.0, 1.0, {"covariate_range": (0.0, 1.0), "tau": 1.0,
                                       "tau_m": 1.0, "center": [0.0]}, "strict")
    scripts = [
        X.frechet_script(Sphere(2), source="upload", radius=0.3, center=[0.0, 0.0, 1.0],
                         epsilon=1.0, mechanism="laplace", data_file="my places.csv"),
        X.frechet_script(Sphere(2), source="upload", radius=0.3, center=[0.0, 0.0, 1.0],
                         epsilon=1.0, mechanism="laplace", data_file="my places.csv",
                         columns={"x": "a", "y": "b", "z": "c"}),
        X.regression_script(Sphere(2), {"eps_p": 1.0}, source="upload",
                            data_file="my places.csv"),
        X.linear_regression_script(kw, source="upload", covariate="x", responses=["y"],
                                   data_file="my places.csv"),
    ]
    for script in scripts:
        assert "DATA_FILE = 'my places.csv'" in script


def test_presets_are_read_from_the_dashboards_copy_by_absolute_path():
    rats = S.data_file_name("assets/data/rat_skulls.csv")
    assert Path(rats).is_absolute() and Path(rats) == ROOT / "assets/data/rat_skulls.csv"
    assert S.preset_file("assets/data/no_such_file.csv") == "assets/data/no_such_file.csv"
    script = X.regression_script(Sphere(2), {"eps_p": 1.0}, source="upload",
                                 data_file="assets/data/rat_skulls.csv")
    assert f"DATA_FILE = {rats!r}" in script
    kw = L.release_settings(1.0, 1.0, {"covariate_range": (8.0, 15.0), "tau": 5.0,
                                       "tau_m": 5.0, "center": [5.0]}, "strict")
    wine = X.linear_regression_script(kw, source="wine", covariate="alcohol",
                                      responses=["class"])
    assert f"DATA_FILE = {str(ROOT / 'assets/data/winequality-red.csv')!r}" in wine


def test_cities_script_reads_the_preset_shipped_in_dpcore():
    script = X.frechet_script(Sphere(2), source="cities", radius=3.14,
                              center=[0.0, 0.0, 1.0], epsilon=1.0, mechanism="laplace")
    assert 'preset_path("world_cities.csv")' in script and "geomstats" not in script.split(
        "# %% Setup")[1].replace("geomstats' copy", "")


def test_estimate_lines_record_the_budget_and_refuse_a_bad_one():
    assert S.estimate_lines(None) == ([], [])
    assert S.estimate_lines({"epsilon": 0.1, "notes": {}}) == ([], [])
    before, after = S.estimate_lines({"epsilon": 0.1, "notes": {"tau_m": "estimated"}})
    assert "BOUNDS_EPSILON = 0.1" in before and "ESTIMATED = {'tau_m': 'estimated'}" in before
    assert any("replace(release, assumptions=" in line for line in after)
    for bad in (0.0, -1.0, float("nan"), float("inf")):
        with pytest.raises(ValueError, match="positive"):
            S.estimate_lines({"epsilon": bad, "notes": {"tau_m": "x"}})


def test_a_script_with_an_estimate_states_it_in_the_release(tmp_path):
    """Run in this environment: the release's assumptions carry the estimate's note and the
    total ε_b + ε is printed (the fresh-environment test runs the same with a page's
    release)."""
    rng = np.random.default_rng(2)
    x = rng.uniform(0.0, 1.0, 40)
    y = 1.0 + x + rng.normal(0.0, 0.1, 40)
    (tmp_path / "data.csv").write_text("x,y\n" + "".join(
        f"{a!r},{b!r}\n" for a, b in zip(x.tolist(), y.tolist(), strict=True)),
        encoding="utf-8")
    kw = L.release_settings(1.0, 1.0, {"covariate_range": (0.0, 1.0), "tau": 1.0,
                                       "tau_m": 3.0, "center": [1.5]}, "strict")
    script = X.linear_regression_script(
        kw, source="upload", covariate="x", responses=["y"], data_file="data.csv",
        release_seed=1, bounds_estimate={"epsilon": 0.2,
                                         "notes": {"covariate_range": "estimated, ε_b = 0.2"}})
    path = tmp_path / "s.py"
    path.write_text(script, encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    out = subprocess.run([sys.executable, str(path)], capture_output=True, text=True,
                         cwd=tmp_path, env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    assert "bounds estimate epsilon_b: 0.2 total with this release: 2.2" in out.stdout
    result = next(s for s in out.stdout.splitlines() if s.startswith("RESULT "))
    note = json.loads(result[len("RESULT "):])["assumptions"]["covariate_range"]["note"]
    assert note.endswith("estimated, ε_b = 0.2")
