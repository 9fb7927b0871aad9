"""The resource limits of :mod:`dpcore.settings` are enforced where a user asks for work.

Each entry point that takes a size from a user checks it with :func:`dpcore.settings.check_limit`
during argument validation, so that a request over a limit fails at once (before any data are
generated or any chain is run) with a :class:`~dpcore.settings.LimitExceededError` that names the
limit and the environment variable raising it. Limits are made small here with environment
variables (read at every call); the requests at the limit still go through.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest

import dpcore.experiments.budget as budget_module
from dpcore.data import make_mean_data, make_regression_data
from dpcore.experiments import budget_sweep
from dpcore.manifolds import Euclidean, Sphere
from dpcore.privacy import gdp_mu_monte_carlo
from dpcore.release import private_frechet_mean, private_geodesic_regression
from dpcore.settings import ENV_VARS, LimitExceededError, Limits, get_limits

ALL_VARS = [var for names in ENV_VARS.values() for var in names]
NORTH = np.array([0.0, 0.0, 1.0])
QUICK = {"chain_length": 20, "burn_in": 10}


@pytest.fixture(autouse=True)
def clean_environment(monkeypatch):
    """No limit variable from the calling shell leaks into a test."""
    for var in ALL_VARS:
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def limit(monkeypatch):
    """``limit(name, value)`` sets the environment variable of limit ``name``."""

    def set_limit(name, value):
        monkeypatch.setenv(ENV_VARS[name][0], str(value))
        assert getattr(get_limits(), name) == value

    return set_limit


def assert_names_limit(excinfo, name):
    """The error names the limit and the variable to change, and is a ValueError."""
    err = excinfo.value
    assert isinstance(err, ValueError)
    assert err.name == name
    text = str(err)
    assert name in text
    assert ENV_VARS[name][0] in text


@pytest.fixture(scope="module")
def line_data():
    return make_regression_data(Euclidean(1), 12, rng=5)


def regression(data, **kw):
    x, y = data
    args = {"eps_p": 1.0, "eps_v": 1.0, "tau": 1.0, "covariate_range": (0.0, 1.0),
            "tau_m": 10.0, "rng": 0, **QUICK}
    args.update(kw)
    return private_geodesic_regression(Euclidean(1), x, y, **args)


# --------------------------------------------------------------------------- regression
class TestGeodesicRegression:
    def test_replicates_are_footpoints_times_vectors(self, limit, line_data):
        limit("max_replicates", 4)
        with pytest.raises(LimitExceededError) as excinfo:
            regression(line_data, n_footpoints=2, n_vectors=3)
        assert_names_limit(excinfo, "max_replicates")
        assert excinfo.value.value == 6 and excinfo.value.limit == 4
        rel = regression(line_data, n_footpoints=2, n_vectors=2)  # at the limit: fine
        # joint scheme (strict default): 2 x 2 independent (footpoint, vector) pairs
        assert rel.values["shooting_vector"].shape[:2] == (4, 1)

    def test_chain_length(self, limit, line_data):
        limit("max_chain_length", 20)
        with pytest.raises(LimitExceededError) as excinfo:
            regression(line_data, chain_length=21)
        assert_names_limit(excinfo, "max_chain_length")
        regression(line_data, chain_length=20)

    def test_burn_in(self, limit, line_data):
        limit("max_burn_in", 10)
        with pytest.raises(LimitExceededError) as excinfo:
            regression(line_data, burn_in=11)
        assert_names_limit(excinfo, "max_burn_in")
        regression(line_data, burn_in=10)

    def test_checked_before_any_work(self, limit, line_data, monkeypatch):
        # The non-private fit runs in the request's setup (paper mode, sequential scheme).
        import dpcore.release._regression_setup as release_module

        def no_fit(*args, **kwargs):
            raise AssertionError("the fit ran although the request is over a limit")

        monkeypatch.setattr(release_module, "GeodesicRegression", no_fit)
        limit("max_replicates", 1)
        with pytest.raises(LimitExceededError):
            regression(line_data, n_vectors=2)

    def test_bad_sizes_keep_their_own_errors(self, line_data):
        with pytest.raises(ValueError, match="chain_length"):
            regression(line_data, chain_length=0)
        with pytest.raises(TypeError, match="burn_in"):
            regression(line_data, burn_in=2.5)


# --------------------------------------------------------------------------- Fréchet mean
@pytest.fixture(scope="module")
def points():
    return make_mean_data(Sphere(2), 10, radius=0.5, rng=2)


class TestFrechetMean:
    def mean(self, points, **kw):
        args = {"epsilon": 1.0, "mechanism": "laplace", "radius": 0.5, "center": NORTH,
                "rng": 0}
        args.update(kw)
        return private_frechet_mean(Sphere(2), points, **args)

    def test_draws(self, limit, points):
        limit("max_replicates", 3)
        with pytest.raises(LimitExceededError) as excinfo:
            self.mean(points, n_draws=4)
        assert_names_limit(excinfo, "max_replicates")
        assert self.mean(points, n_draws=3).values["mean"].shape == (3, 3)

    def test_kng_chain_and_burn_in(self, limit, points):
        limit("max_chain_length", 20)
        limit("max_burn_in", 10)
        with pytest.raises(LimitExceededError) as excinfo:
            self.mean(points, mechanism="kng", chain_length=21, burn_in=10)
        assert_names_limit(excinfo, "max_chain_length")
        with pytest.raises(LimitExceededError) as excinfo:
            self.mean(points, mechanism="kng", chain_length=20, burn_in=11)
        assert_names_limit(excinfo, "max_burn_in")
        self.mean(points, mechanism="kng", chain_length=20, burn_in=10)

    def test_exact_mechanisms_ignore_the_chain_settings(self, limit, points):
        # Laplace, Gaussian and ambient Laplace run no chain: the settings do not apply.
        limit("max_chain_length", 20)
        self.mean(points, chain_length=10**6)


# --------------------------------------------------------------------------- Monte Carlo µ
def test_gdp_monte_carlo_samples_times_repeats(limit):
    limit("max_mc_samples", 60)
    with pytest.raises(LimitExceededError) as excinfo:
        gdp_mu_monte_carlo(Sphere(1), 1.0, 0.5, n_samples=31, n_eps=20, repeats=2, rng=0)
    assert_names_limit(excinfo, "max_mc_samples")
    assert excinfo.value.value == 62
    mu, se = gdp_mu_monte_carlo(Sphere(1), 1.0, 0.5, n_samples=30, n_eps=20, repeats=2, rng=0)
    assert np.isfinite(mu) and mu > 0


# --------------------------------------------------------------------------- budget sweep
class TestBudgetSweep:
    KW = {"sample_sizes": [10, 15], "split": "equal", "totals": [0.5, 1.0, 2.0],
          "replicates": 2, "rng": 0, "n_footpoints": 1, "n_vectors": 1, **QUICK}

    def test_cells(self, limit, monkeypatch):
        # 2 sample sizes x 2 replicates x 3 budgets = 12 cells.
        def no_data(*args, **kwargs):
            raise AssertionError("data were generated although the sweep is over a limit")

        monkeypatch.setattr(budget_module, "make_regression_data", no_data)
        limit("max_sweep_cells", 11)
        with pytest.raises(LimitExceededError) as excinfo:
            budget_sweep(Euclidean(1), **self.KW)
        assert_names_limit(excinfo, "max_sweep_cells")
        assert excinfo.value.value == 12

    def test_at_the_limit(self, limit):
        limit("max_sweep_cells", 12)
        df = budget_sweep(Euclidean(1), **self.KW)
        assert len(df) == 12

    @pytest.mark.parametrize("name,kw", [
        ("max_replicates", {"n_footpoints": 2, "n_vectors": 2}),
        ("max_chain_length", {"chain_length": 50}),
        ("max_burn_in", {"burn_in": 50}),
    ])
    def test_release_settings_checked_up_front(self, limit, name, kw):
        limit(name, 3 if name == "max_replicates" else 40)
        with pytest.raises(LimitExceededError) as excinfo:
            budget_sweep(Euclidean(1), **{**self.KW, **kw})
        assert_names_limit(excinfo, name)


# --------------------------------------------------------------------------- defaults
def _defaults(func):
    return {k: p.default for k, p in inspect.signature(func).parameters.items()
            if p.default is not inspect.Parameter.empty}


def test_default_arguments_are_within_the_default_limits():
    """Calling an entry point with its defaults never trips a default limit."""
    lim = Limits()
    d = _defaults(private_geodesic_regression)
    assert d["n_footpoints"] * d["n_vectors"] <= lim.max_replicates
    assert d["chain_length"] <= lim.max_chain_length and d["burn_in"] <= lim.max_burn_in
    d = _defaults(private_frechet_mean)
    assert d["n_draws"] <= lim.max_replicates
    assert d["chain_length"] <= lim.max_chain_length and d["burn_in"] <= lim.max_burn_in
    d = _defaults(gdp_mu_monte_carlo)
    assert d["n_samples"] * d["repeats"] <= lim.max_mc_samples
    d = _defaults(budget_sweep)
    for split in ("unequal", "equal", "grid"):
        cells = len(d["sample_sizes"]) * d["replicates"] * len(budget_module.budget_pairs(split))
        assert cells <= lim.max_sweep_cells, split
    assert d["n_footpoints"] * d["n_vectors"] <= lim.max_replicates
    assert d["chain_length"] <= lim.max_chain_length and d["burn_in"] <= lim.max_burn_in


def test_message_says_how_to_change_the_limit(limit, line_data):
    limit("max_chain_length", 20)
    with pytest.raises(LimitExceededError) as excinfo:
        regression(line_data, chain_length=100)
    text = str(excinfo.value)
    assert "100 exceeds the limit max_chain_length=20" in text
    assert "DPCORE_MAX_CHAIN_LENGTH=40" in text  # an example setting to use
