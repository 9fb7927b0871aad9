"""Every mechanism implements the Mechanism protocol (issue 29 point 2): a guarantee stated
from public inputs, carried by the object, and its own way to draw."""

from __future__ import annotations

import inspect
import json

import numpy as np
import pytest

import dpcore.mechanisms as M
from dpcore.manifolds import Sphere
from dpcore.mechanisms import (
    AmbientLaplace,
    ExponentialQuantile,
    Guarantee,
    KNormGradient,
    Mechanism,
    MechanismResult,
    RiemannianGaussian,
    RiemannianLaplace,
    StatisticMechanism,
    mechanism_classes,
)

S2 = Sphere(2)
NORTH = np.array([0.0, 0.0, 1.0])

#: One public configuration per class, and an input to draw from.
FACTORIES = {
    RiemannianLaplace: (lambda: RiemannianLaplace(manifold=S2, epsilon=1.0, sensitivity=0.1),
                        lambda: NORTH),
    AmbientLaplace: (lambda: AmbientLaplace(manifold=S2, epsilon=1.0, sensitivity=0.1),
                     lambda: NORTH),
    RiemannianGaussian: (lambda: RiemannianGaussian(manifold=S2, sensitivity=0.1, mu=1.0),
                         lambda: NORTH),
    ExponentialQuantile: (lambda: ExponentialQuantile(epsilon=1.0, quantiles=(0.1, 0.9),
                                                      bounds=(0.0, 10.0)),
                          lambda: np.linspace(0.0, 10.0, 50)),
    KNormGradient: (lambda: KNormGradient(manifold=S2, epsilon=1.0, sensitivity=0.1,
                                          chain_length=50, burn_in=20),
                    None),
}


def test_every_exported_mechanism_is_under_contract():
    """A class of dpcore.mechanisms with a guarantee is listed, so it cannot skip these tests."""
    exported = {obj for name in M.__all__ for obj in [getattr(M, name)]
                if inspect.isclass(obj) and hasattr(obj, "guarantee")
                and obj.__module__ != "dpcore.mechanisms.protocol"}
    assert exported == set(mechanism_classes()) == set(FACTORIES)


@pytest.mark.parametrize("cls", list(FACTORIES), ids=lambda c: c.__name__)
class TestMechanismContract:
    def test_implements_its_protocol(self, cls):
        mech = FACTORIES[cls][0]()
        protocol = mechanism_classes()[cls]
        assert isinstance(mech, Mechanism) and isinstance(mech, protocol)
        assert isinstance(cls.name, str) and cls.name

    def test_guarantee_is_carried_by_the_object(self, cls):
        mech = FACTORIES[cls][0]()
        g = mech.guarantee()
        assert isinstance(g, Guarantee)
        assert g.sensitivity == mech.sensitivity and g.sigma == mech.sigma
        assert (g.epsilon is None) != (g.mu is None)
        json.dumps(g.as_dict())
        with pytest.raises(AttributeError):
            g.epsilon = 5.0  # frozen

    def test_draws_are_results_and_reproducible(self, cls):
        make, statistic = FACTORIES[cls]
        mech = make()
        if statistic is None:  # a gradient mechanism: KNG on the Fréchet energy of 3 points
            points = S2.exp(NORTH, np.array([[0.1, 0.0, 0.0], [0.0, 0.1, 0.0], [-0.1, 0, 0]]))

            def draw(rng):
                return mech.sample(lambda z: np.linalg.norm(
                    -np.mean(S2.log(z[:, None], points[None]), axis=1), axis=-1),
                    NORTH, size=2, rng=rng)
        else:
            def draw(rng):
                return mech.release(statistic(), size=2, rng=rng)
        one, again = draw(5), draw(5)
        assert isinstance(one, MechanismResult)
        np.testing.assert_array_equal(one.values, again.values)


def test_guarantee_validates_its_statement():
    with pytest.raises(ValueError, match="exactly one"):
        Guarantee(epsilon=1.0, delta=0.0, mu=1.0, sensitivity=1.0, sigma=1.0)
    with pytest.raises(ValueError, match="exactly one"):
        Guarantee(epsilon=None, delta=None, mu=None, sensitivity=1.0, sigma=1.0)
    with pytest.raises(ValueError, match="positive"):
        Guarantee(epsilon=0.0, delta=0.0, mu=None, sensitivity=1.0, sigma=1.0)
    with pytest.raises(ValueError, match="delta"):
        Guarantee(epsilon=1.0, delta=2.0, mu=None, sensitivity=1.0, sigma=1.0)
    with pytest.raises(ValueError, match="sensitivity"):
        Guarantee(epsilon=1.0, delta=0.0, mu=None, sensitivity=0.0, sigma=1.0)


def test_exactness_sets_delta():
    kng = FACTORIES[KNormGradient][0]()
    assert kng.guarantee(exact=True).pure and kng.guarantee(exact=True).note is None
    mcmc = kng.guarantee(exact=False)
    assert mcmc.delta == pytest.approx(1 / 50) and not mcmc.pure and "mixed" in mcmc.note
    gauss = FACTORIES[RiemannianGaussian][0]().guarantee()
    assert gauss.mu == 1.0 and gauss.delta is None and not gauss.pure


def test_a_class_without_a_guarantee_is_not_a_mechanism():
    class NotOne:
        name = "x"
        sensitivity = sigma = 1.0

    assert not isinstance(NotOne(), Mechanism)
    assert not isinstance(FACTORIES[KNormGradient][0](), StatisticMechanism)
