"""Privacy hygiene of the library's releases (issue 6, point 4 and 6).

* Nothing random is reused: two identical strict-mode requests without a seed draw from OS
  entropy and differ; a seeded request is reproducible, flagged ``seeded`` and labelled "not for
  publication".
* The release record (:meth:`dpcore.release.Release.to_dict`, the dashboard's "Download release")
  holds private outputs and documented metadata only: only the documented keys, no value of the
  input data, no non-private estimate (the non-private geodesic fit, the non-private Fréchet
  mean, the extrinsic mean).

The code behind them (no Streamlit cache wraps a release, no ``eval`` / ``exec`` / ``pickle``,
no ``print`` in the app, localhost binding, no global random state) is scanned in
``tests/test_hygiene_code.py``; the dashboard side (uploads never reach disk, logs or caches;
two presses of Release differ; CSV downloads are neutralised) is in
``tests/app/test_hygiene_app.py``.
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pytest

from dpcore.data import make_mean_data, make_regression_data
from dpcore.exceptions import PrivacyLeakWarning
from dpcore.learning import GeodesicRegression, frechet_mean
from dpcore.manifolds import SPD, Euclidean, Sphere
from dpcore.mechanisms import embed
from dpcore.mechanisms.laplace import unembed
from dpcore.release import (
    SEEDED_CAVEAT,
    private_frechet_mean,
    private_geodesic_regression,
    project_to_ball,
)

QUICK = {"chain_length": 60, "burn_in": 40}
NORTH = np.array([0.0, 0.0, 1.0])

#: The documented contents of a release record (DESIGN §8, :class:`dpcore.release.Release`).
RECORD_KEYS = {"values", "mechanism", "epsilon", "delta", "mu", "sensitivity", "sigma",
               "assumptions", "diagnostics", "mode", "seeded", "version", "label", "caveats",
               "details", "guarantee", "private"}
REGRESSION_VALUES = {"footpoint", "shooting_vector", "intercept", "coef"}
REGRESSION_DETAILS = {"scheme", "epsilon_p", "epsilon_v", "epsilon_per_geodesic", "n",
                      "n_footpoints", "n_vectors", "sigma_rule", "kappa_low", "manifold"}
REGRESSION_ASSUMPTIONS = {"covariate_range", "tau", "tau_m", "center", "footpoint_support",
                          "max_speed"}
FRECHET_DETAILS = {"n", "n_draws", "epsilon_per_draw", "mu_per_draw", "manifold"}
FRECHET_ASSUMPTIONS = {"center", "radius", "ambient_radius"}
ASSUMPTION_FIELDS = {"value", "source", "note"}
#: "private (stage 1)": a two-stage release's centre, a released value of its first stage.
PUBLIC_SOURCES = {"public", "public default", "derived", "private (stage 1)"}
#: Sampler diagnostics: settings of the sampler and summaries of its chains (no draws).
DIAGNOSTIC_KEYS = {"sampler", "exact", "n_chains", "n_samples", "n_burn_in", "thin",
                   "step_size", "acceptance_rate_mean", "acceptance_rate_min",
                   "acceptance_rate_max", "ess", "rhat", "mu_accounting",
                   "fraction_left_manifold", "projected", "ambient_dimension",
                   "diagnostics_grouping", "proposals", "acceptance", "float_safety",
                   "lattice_spacing", "truncation_slack", "compute_path"}


# =========================================================================== helpers
def leaves(obj, path=""):
    """(path, number) for every numeric leaf of a JSON-like object."""
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from leaves(v, f"{path}/{k}")
    elif isinstance(obj, (list, tuple)):
        for i, v in enumerate(obj):
            yield from leaves(v, f"{path}[{i}]")
    elif isinstance(obj, (int, float)) and not isinstance(obj, bool):
        yield path, float(obj)


def matches(record, secrets, *, trivial=(0.0, 1.0, -1.0)):
    """Paths of the record's numeric leaves equal (to 1e-9, relative) to an entry of ``secrets``.

    Values such as 0 and ±1 are skipped: public centres and ranges hold them legitimately.
    """
    values = np.unique(np.concatenate([np.ravel(np.asarray(s, dtype=float)) for s in secrets]))
    values = values[np.isfinite(values) & ~np.isin(values, trivial)]
    hits = []
    for path, v in leaves(record):
        if not np.isfinite(v) or v in trivial:
            continue
        i = np.searchsorted(values, v)
        for j in (i - 1, i):
            if 0 <= j < values.size and abs(values[j] - v) <= 1e-9 * max(1.0, abs(v)):
                hits.append((path, v))
    return hits


def check_metadata(record, *, values, details, assumptions, strict=True):
    assert set(record) == RECORD_KEYS
    json.dumps(record, allow_nan=False)  # JSON-safe, no NaN
    assert set(record["values"]) == values
    assert set(record["details"]) == details
    assert set(record["assumptions"]) <= assumptions
    for name, a in record["assumptions"].items():
        assert set(a) <= ASSUMPTION_FIELDS and {"value", "source"} <= set(a), name
        if strict:
            assert a["source"] in PUBLIC_SOURCES, (name, a)
    diag = record["diagnostics"]
    stages = ([diag[k] for k in ("footpoint", "shooting_vector")] if "footpoint" in diag
              else [diag["joint"]] if "joint" in diag else [diag])
    for stage in stages:
        assert set(stage) <= DIAGNOSTIC_KEYS, set(stage) - DIAGNOSTIC_KEYS
        for key, value in stage.items():  # summaries only: no arrays (no chains, no draws)
            assert not isinstance(value, (list, dict)), key
    for key in ("sensitivity", "sigma"):
        for name, value in record[key].items():
            assert isinstance(value, float), (key, name)


# =========================================================================== data
REGRESSION_CASES = {
    "sphere": (Sphere(2), {"tau": 0.3}),
    "euclidean": (Euclidean(2), {"tau": 1.0, "tau_m": 8.0}),
    "spd": (SPD(2), {"tau": 0.3, "tau_m": 3.0}),
}
FRECHET_MECHANISMS = ("laplace", "kng", "gaussian", "ambient_laplace")


def regression_data(kind):
    m, _ = REGRESSION_CASES[kind]
    data = make_regression_data(m, 25, rng=11)
    return m, data.x, data.y


def regression(kind, x=None, y=None, **kw):
    m, bounds = REGRESSION_CASES[kind]
    if x is None:
        _, x, y = regression_data(kind)
    args = {"eps_p": 1.0, "eps_v": 1.0, "covariate_range": (0.0, 1.0), "n_footpoints": 2,
            "n_vectors": 2, **bounds, **QUICK}
    args.update(kw)
    return private_geodesic_regression(m, x, y, **args)


@pytest.fixture(scope="module")
def mean_data():
    return make_mean_data(Sphere(2), 25, radius=0.6, rng=12)


def frechet(points, mechanism, **kw):
    budget = {"mu": 1.0} if mechanism == "gaussian" else {"epsilon": 1.0}
    args = {"mechanism": mechanism, "radius": 0.6, "center": NORTH, "n_draws": 3, **budget,
            **QUICK}
    args.update(kw)
    return private_frechet_mean(Sphere(2), points, **args)


# =========================================================================== randomness
class TestFreshRandomness:
    """Strict mode without a seed draws from OS entropy: identical requests differ."""

    def test_regression(self):
        a, b = regression("sphere"), regression("sphere")
        assert not a.seeded and not b.seeded
        assert a.label == "private" and SEEDED_CAVEAT not in a.caveats
        for key in REGRESSION_VALUES:
            assert not np.allclose(a.values[key], b.values[key]), key

    @pytest.mark.parametrize("mechanism", FRECHET_MECHANISMS)
    def test_frechet_mean(self, mean_data, mechanism):
        a, b = frechet(mean_data, mechanism), frechet(mean_data, mechanism)
        assert not a.seeded and "not for publication" not in a.label
        assert not np.allclose(a.values["mean"], b.values["mean"])

    def test_draws_within_a_request_differ(self):
        rel = regression("sphere", n_footpoints=3, n_vectors=1)
        foot = rel.values["footpoint"]
        assert not np.allclose(foot[0], foot[1]) and not np.allclose(foot[1], foot[2])


class TestSeededIsNotForPublication:
    @pytest.mark.parametrize("rng", [7, np.random.default_rng(7)], ids=["int", "generator"])
    def test_regression(self, rng):
        rel = regression("sphere", rng=rng)
        assert rel.seeded is True
        assert "not for publication" in rel.label
        assert SEEDED_CAVEAT in rel.caveats
        record = rel.to_dict()
        assert record["seeded"] is True and "not for publication" in record["label"]

    @pytest.mark.parametrize("mechanism", FRECHET_MECHANISMS)
    def test_frechet_mean(self, mean_data, mechanism):
        rel = frechet(mean_data, mechanism, rng=3)
        assert rel.seeded is True and "not for publication" in rel.to_dict()["label"]
        assert SEEDED_CAVEAT in rel.caveats

    def test_a_seed_reproduces_the_release(self, mean_data):
        a, b = regression("sphere", rng=5), regression("sphere", rng=5)
        np.testing.assert_array_equal(a.values["footpoint"], b.values["footpoint"])
        a, b = frechet(mean_data, "laplace", rng=5), frechet(mean_data, "laplace", rng=5)
        np.testing.assert_array_equal(a.values["mean"], b.values["mean"])

    def test_paper_mode_label_wins(self):
        _, x, y = regression_data("sphere")
        with pytest.warns(PrivacyLeakWarning):
            rel = private_geodesic_regression(Sphere(2), x, y, eps_p=1.0, eps_v=1.0,
                                              mode="paper", rng=1, **QUICK)
        assert rel.seeded and rel.label.startswith("NOT PRIVATE")
        assert SEEDED_CAVEAT in rel.caveats


# =========================================================================== release record
class TestReleaseRecordHoldsNoData:
    def test_the_check_finds_planted_data(self):
        m, x, y = regression_data("sphere")
        record = regression("sphere", x, y).to_dict()
        assert matches(record, [x, y]) == []
        planted = json.loads(json.dumps(record))
        planted["details"]["extra"] = y[3].tolist()
        planted["values"]["footpoint"][0][1] = float(x[5]) * (1 + 1e-12)
        assert {p for p, _ in matches(planted, [x, y])} == {
            "/details/extra[0]", "/details/extra[1]", "/details/extra[2]",
            "/values/footpoint[0][1]"}

    @pytest.mark.parametrize("kind", sorted(REGRESSION_CASES))
    def test_regression_strict(self, kind):
        m, x, y = regression_data(kind)
        _, bounds = REGRESSION_CASES[kind]
        rel = regression(kind, x, y)
        record = rel.to_dict()
        check_metadata(record, values=REGRESSION_VALUES, details=REGRESSION_DETAILS,
                       assumptions=REGRESSION_ASSUMPTIONS)
        # The non-private estimates the release starts from, fitted as the release does, and
        # the plain non-private fit in the original units.
        yp = y
        if "tau_m" in bounds:
            yp = project_to_ball(m, y, np.asarray(record["assumptions"]["center"]["value"]),
                                 bounds["tau_m"])
        secrets = [x, y, yp]
        for data_y in (y, yp):
            fit = GeodesicRegression(m, covariate_range=(0.0, 1.0), tol=1e-8).fit(x, data_y)
            secrets += [fit.footpoint_, fit.shooting_vector_]
            secrets += [getattr(fit, a) for a in ("intercept_", "coef_") if hasattr(fit, a)]
        secrets.append(m.dist(y, y[::-1]))  # distances between data points
        assert matches(record, secrets) == []
        # Only the release's own outputs are arrays of points.
        text = json.dumps(record)
        assert "nan" not in text.lower()

    @pytest.mark.parametrize("mechanism", FRECHET_MECHANISMS)
    def test_frechet_strict(self, mean_data, mechanism):
        m = Sphere(2)
        rel = frechet(mean_data, mechanism)
        record = rel.to_dict()
        values = {"mean"} | ({"ambient", "left_manifold"} if mechanism == "ambient_laplace"
                             else set())
        check_metadata(record, values=values, details=FRECHET_DETAILS,
                       assumptions=FRECHET_ASSUMPTIONS)
        projected = project_to_ball(m, mean_data, NORTH, 0.6)
        extrinsic = embed(m, projected).mean(axis=0)
        secrets = [mean_data, projected, frechet_mean(m, mean_data), frechet_mean(m, projected),
                   extrinsic, unembed(m, extrinsic), embed(m, mean_data).mean(axis=0)]
        assert matches(record, secrets) == []

    def test_spd_frechet_strict(self):
        m = SPD(2)
        y = make_mean_data(m, 20, radius=1.0, rng=4)
        rel = private_frechet_mean(m, y, epsilon=1.0, radius=1.0, center=np.eye(2), n_draws=2)
        record = rel.to_dict()
        check_metadata(record, values={"mean"}, details=FRECHET_DETAILS,
                       assumptions=FRECHET_ASSUMPTIONS)
        assert matches(record, [y, frechet_mean(m, y)]) == []

    def test_paper_mode_data_values_are_flagged(self, mean_data):
        """Paper mode takes bounds from the data; such values appear only as assumptions with
        source "data" in a record labelled NOT PRIVATE, never among the outputs."""
        m, x, y = regression_data("sphere")
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PrivacyLeakWarning)
            reg = private_geodesic_regression(m, x, y, eps_p=1.0, eps_v=1.0, mode="paper",
                                              **QUICK)
            fm = private_frechet_mean(m, mean_data, epsilon=1.0, mode="paper")
        fit = GeodesicRegression(m, covariate_range=(float(x.min()), float(x.max())),
                                 tol=1e-8).fit(x, y)
        cases = [
            (reg, REGRESSION_VALUES, REGRESSION_DETAILS, REGRESSION_ASSUMPTIONS,
             [x, y, fit.footpoint_, fit.shooting_vector_]),
            (fm, {"mean"}, FRECHET_DETAILS, FRECHET_ASSUMPTIONS,
             [mean_data, frechet_mean(m, mean_data)]),
        ]
        for rel, values, details, assumptions, secrets in cases:
            record = rel.to_dict()
            assert record["label"].startswith("NOT PRIVATE") and not rel.private
            check_metadata(record, values=values, details=details, assumptions=assumptions,
                           strict=False)
            for path, _ in matches(record, secrets):
                name = path.split("/")[2]
                assert path.startswith("/assumptions/"), path
                assert record["assumptions"][name]["source"] == "data", path
