"""The mechanisms ask the manifold classes for facts instead of testing their types."""

from __future__ import annotations

import math

import numpy as np
import pytest
from geomstats.geometry.hypersphere import Hypersphere
from geomstats.geometry.spd_matrices import SPDMatrices

from dpcore.manifolds import SPD, Euclidean, GeomstatsManifold, Hyperbolic, KendallShape, Sphere
from dpcore.mechanisms import RiemannianGaussian
from dpcore.mechanisms.kng import refined_chart_available
from dpcore.mechanisms.laplace import _laplace_integrable
from dpcore.privacy import exact_gdp_accounting

BUILT_IN = [Euclidean(2), Sphere(1), Sphere(2), SPD(2), SPD(3), KendallShape(4), Hyperbolic(2)]


@pytest.mark.parametrize("manifold", BUILT_IN, ids=repr)
def test_refined_chart_wherever_the_volume_density_is_bounded(manifold):
    assert refined_chart_available(manifold)


def test_no_refined_chart_on_a_wrapped_space():
    assert not refined_chart_available(GeomstatsManifold(Hypersphere(2), curvature_bounds=(1, 1)))


@pytest.mark.parametrize("manifold", BUILT_IN, ids=repr)
def test_laplace_integrable_iff_faster_than_the_volume_growth(manifold):
    rate = manifold.volume_growth_rate
    for sigma in (0.1, 0.5, 1.0, 3.0, 100.0):
        assert _laplace_integrable(manifold, sigma) == (rate == 0.0 or 1.0 / sigma > rate)
    if rate > 0:  # on both sides of the limit
        assert _laplace_integrable(manifold, 0.99 / rate)
        assert not _laplace_integrable(manifold, 1.01 / rate)


def test_laplace_integrable_by_comparison_where_the_rate_is_unknown():
    # Bishop-Gromov: at most the growth of the hyperbolic space of curvature kappa_low.
    wrapped = GeomstatsManifold(SPDMatrices(2), curvature_bounds=(-0.5, 0.0))
    rate = (wrapped.dim - 1) * math.sqrt(0.5)
    assert _laplace_integrable(wrapped, 0.99 / rate)
    assert not _laplace_integrable(wrapped, 1.01 / rate)
    assert _laplace_integrable(GeomstatsManifold(Hypersphere(2), curvature_bounds=(1, 1)), 50.0)


@pytest.mark.parametrize(
    ("manifold", "expected"),
    [(Euclidean(3), "euclidean"), (Sphere(1), "circle"), (Sphere(2), None), (SPD(2), None),
     (Hyperbolic(2), None), (KendallShape(3), None)],
    ids=repr,
)
def test_exact_gdp_accounting(manifold, expected):
    assert exact_gdp_accounting(manifold) == expected


@pytest.mark.parametrize("manifold", [Euclidean(2), Sphere(1)], ids=repr)
def test_gaussian_mechanism_uses_the_exact_accounting(manifold):
    mech = RiemannianGaussian(manifold=manifold, sensitivity=0.5, sigma=1.0)
    assert mech.accounting.startswith("exact")
    assert mech.mu_standard_error == 0.0
    if isinstance(manifold, Euclidean):
        assert mech.mu == pytest.approx(0.5)
    assert np.isfinite(mech.mu)
