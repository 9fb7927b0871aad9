"""The release record is immutable (issue 29 point 2): what a ledger holds never changes."""

from __future__ import annotations

import dataclasses
import json
import pickle

import numpy as np
import pytest

from dpcore.manifolds import Sphere
from dpcore.release import Release, private_frechet_mean
from dpcore.release.record import FrozenDict, freeze

NORTH = np.array([0.0, 0.0, 1.0])


@pytest.fixture(scope="module")
def release():
    rng = np.random.default_rng(0)
    points = Sphere(2).exp(np.array([0.0, 0.0, 1.0]),
                           0.2 * np.c_[rng.standard_normal((30, 2)), np.zeros(30)])
    return private_frechet_mean(Sphere(2), points, epsilon=1.0, mechanism="laplace",
                                radius=0.5, center=np.array([0.0, 0.0, 1.0]), rng=1)


def test_fields_cannot_be_reassigned(release):
    with pytest.raises(dataclasses.FrozenInstanceError):
        release.epsilon = 0.0
    with pytest.raises(dataclasses.FrozenInstanceError):
        release.coverage = "proven"


@pytest.mark.parametrize("field", ["values", "sensitivity", "sigma", "assumptions",
                                   "diagnostics", "details"])
def test_mappings_refuse_every_change(release, field):
    mapping = getattr(release, field)
    assert isinstance(mapping, FrozenDict)
    for change in (lambda m: m.__setitem__("x", 1), lambda m: m.update(x=1),
                   lambda m: m.pop("x", None), lambda m: m.setdefault("x", 1),
                   lambda m: m.clear(), lambda m: m.popitem(), lambda m: m.__delitem__("x")):
        with pytest.raises(TypeError, match="immutable"):
            change(mapping)


def test_nested_entries_and_arrays_are_frozen(release):
    entry = next(v for v in release.assumptions.values() if isinstance(v, dict))
    with pytest.raises(TypeError, match="immutable"):
        entry["source"] = "data"
    mean = release.values["mean"]
    with pytest.raises(ValueError, match="read-only"):
        mean[...] = 0.0
    assert isinstance(release.caveats, tuple)


def test_freezing_copies_what_the_caller_keeps():
    values = {"p": np.zeros(3)}
    caveats = ["a"]
    rel = Release(values=values, mechanism="laplace", epsilon=1.0, delta=0.0, mu=None,
                  sensitivity={"p": 1.0}, sigma={"p": 1.0}, assumptions={}, diagnostics={},
                  mode="strict", seeded=False, caveats=caveats)
    values["p"][0] = 5.0
    caveats.append("b")
    assert rel.values["p"][0] == 0.0 and rel.caveats == ("a",)


def test_a_changed_copy_is_a_new_record(release):
    changed = dataclasses.replace(release, seeded=False)
    assert changed is not release and release.seeded and not changed.seeded
    assert changed.values["mean"].tolist() == release.values["mean"].tolist()


def test_serialises_and_pickles_as_before(release):
    out = release.to_dict()
    assert json.loads(json.dumps(out)) == out
    assert out["caveats"] == list(release.caveats)
    back = pickle.loads(pickle.dumps(release))  # st.cache_data pickles return values
    assert isinstance(back.values, FrozenDict)
    np.testing.assert_array_equal(back.values["mean"], release.values["mean"])
    assert back.to_dict() == out


def test_freeze_leaves_scalars_alone():
    assert freeze(1.5) == 1.5 and freeze("x") == "x" and freeze(None) is None
    assert freeze([1, [2, {"a": [3]}]]) == (1, (2, {"a": (3,)}))


def test_a_release_states_which_compute_path_ran(monkeypatch):
    """The compiled (numba) path on an S² MCMC regression, numpy when numba is off, and numpy
    for exact and closed-form draws; public, so kept in the published record."""
    from dpcore.data import make_regression_data
    from dpcore.release import private_geodesic_regression
    from dpcore.sampling import _compiled_sphere

    data = make_regression_data(Sphere(2), 30, rng=2)

    def joint(**kw):
        rel = private_geodesic_regression(
            Sphere(2), data.x, data.y, eps_p=1.0, eps_v=1.0, tau=0.3, covariate_range=(0, 1),
            sampler="mcmc", chain_length=50, burn_in=20, rng=0, **kw)
        return rel.diagnostics["joint"]["compute_path"], rel.to_dict()

    path, record = joint()
    assert path == ("compiled (numba)" if _compiled_sphere.NUMBA_AVAILABLE else "numpy")
    assert record["diagnostics"]["joint"]["compute_path"] == path
    monkeypatch.setattr(_compiled_sphere, "NUMBA_AVAILABLE", False)
    assert joint()[0] == "numpy"
    assert private_frechet_mean(
        Sphere(2), data.y, epsilon=1.0, radius=0.7, center=NORTH, rng=0
    ).diagnostics["compute_path"] == "numpy"
