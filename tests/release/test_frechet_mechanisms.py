"""The Fréchet-mean mechanisms are classes in one registry (issue 29 point 2): the release
dispatches on no mechanism string, and a new mechanism is one class."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest

from dpcore.manifolds import Sphere
from dpcore.release import private_frechet_mean
from dpcore.release.frechet_mechanisms import (
    FRECHET_RELEASES,
    FrechetDraw,
    FrechetMechanism,
    frechet_mechanism,
)
from dpcore.release.record import FRECHET_MECHANISMS

ROOT = Path(__file__).resolve().parents[2]
S2 = Sphere(2)
NORTH = np.array([0.0, 0.0, 1.0])


@pytest.fixture(scope="module")
def points():
    rng = np.random.default_rng(3)
    return S2.exp(NORTH, 0.2 * np.c_[rng.standard_normal((40, 2)), np.zeros(40)])


def test_the_registry_is_the_list_of_mechanisms():
    assert tuple(FRECHET_RELEASES) == FRECHET_MECHANISMS
    for name, kind in FRECHET_RELEASES.items():
        assert isinstance(kind, FrechetMechanism) and kind.name == name
        assert frechet_mechanism(name) is kind
    with pytest.raises(ValueError, match="must be one of"):
        frechet_mechanism("nope")


@pytest.mark.parametrize("name", FRECHET_MECHANISMS)
def test_each_mechanism_releases_under_its_name(points, name):
    budget = {"epsilon": 2.0}
    rel = private_frechet_mean(S2, points, mechanism=name, radius=0.7, center=NORTH, rng=1,
                               **budget)
    kind = frechet_mechanism(name)
    assert rel.mechanism == name and rel.values["mean"].shape == (1, 3)
    assert (rel.epsilon is not None) == kind.pure and (rel.mu is not None) != kind.pure
    assert np.allclose(np.linalg.norm(rel.values["mean"], axis=-1), 1.0)


def test_no_mechanism_string_branch_in_the_release_modules():
    """The Fréchet release, its accuracy prediction and the two-stage design ask the class."""
    for module in ("frechet.py", "accuracy.py", "two_stage.py"):
        tree = ast.parse((ROOT / "dpcore" / "release" / module).read_text(encoding="utf-8"))
        branches = [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Compare)
                    and isinstance(node.left, ast.Name) and node.left.id == "mechanism"
                    and any(isinstance(c, ast.Constant) and isinstance(c.value, str)
                            for c in node.comparators)]
        assert not branches, (module, branches)


def test_a_new_mechanism_is_one_class(points, monkeypatch):
    """Registering one subclass is all a release needs (here: the public centre, with no
    noise, as a stand-in -- never a private mechanism)."""

    class Centre(FrechetMechanism):
        name = "centre"

        def draw_means(self, s, *, epsilon, mu, sigma):
            values = np.broadcast_to(s.center, (s.n_draws, *s.manifold.point_shape)).copy()
            return FrechetDraw(values={"mean": values}, sensitivity={"mean": 1.0},
                               sigma={"mean": 1.0}, diagnostics={"exact": True})

    monkeypatch.setitem(FRECHET_RELEASES, "centre", Centre())
    rel = private_frechet_mean(S2, points, epsilon=1.0, mechanism="centre", radius=0.7,
                               center=NORTH, n_draws=2, rng=0)
    assert rel.mechanism == "centre" and rel.epsilon == 2.0
    np.testing.assert_array_equal(rel.values["mean"], [NORTH, NORTH])
