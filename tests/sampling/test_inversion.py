"""Numerical inversion of the radial laws (issue 31 point 7a): fast, within 1e-10, never in a
release.

The sampler is checked against laws written independently of ``dpcore.sampling``
(``tests/sampling/reference.py``, and a closed form for the Laplace law on S²): its inverse CDF
to within the advertised u-error, and its draws by a Kolmogorov-Smirnov test whose p-value
threshold (1e-6, from the exact KS distribution) a correct sampler fails with probability
below 1e-6; the same draws fail against a law 5 % wider, so the test can fail.
"""

from __future__ import annotations

import ast
import math
from pathlib import Path

import numpy as np
import pytest
from scipy.integrate import quad

import dpcore.sampling.inversion as inversion
from dpcore.manifolds import SPD, Euclidean, Hyperbolic, KendallShape, Sphere
from dpcore.privacy import gdp_mu_monte_carlo
from dpcore.sampling import sample_gaussian, sample_laplace, sample_radius
from dpcore.sampling.radial import inversion_sampler, volume_profile

from .reference import P_THRESHOLD, ks_pvalue, radial_cdf, radial_log_density

ROOT = Path(__file__).resolve().parents[2]

LAWS = [
    (Sphere(2), 0.7, "gaussian", None),
    (Sphere(2), 0.3, "laplace", None),
    (Sphere(2), 1.5, "gaussian", None),
    (Sphere(1), 1.0, "gaussian", None),
    (Sphere(4), 0.05, "laplace", None),
    (KendallShape(4), 0.4, "gaussian", None),
    (Hyperbolic(2), 0.8, "gaussian", None),
    (Hyperbolic(3), 0.3, "laplace", None),
    (Euclidean(2), 1.0, "gaussian", 1.5),
]


def _id(law):
    manifold, sigma, kind, r_max = law
    return f"{manifold!r}-{kind}-{sigma}" + ("" if r_max is None else f"-r{r_max}")


@pytest.mark.statistical
@pytest.mark.parametrize("law", LAWS, ids=_id)
def test_draws_pass_ks_against_the_exact_law_and_fail_against_a_wider_one(law):
    manifold, sigma, kind, r_max = law
    r = sample_radius(manifold, sigma, kind, 100_000, rng=20261128, r_max=r_max,
                      radial="inversion")
    assert ks_pvalue(r, radial_cdf(manifold, sigma, kind, r_max=r_max)) >= P_THRESHOLD
    assert ks_pvalue(r, radial_cdf(manifold, 1.05 * sigma, kind, r_max=r_max)) < P_THRESHOLD


def _quad_cdf(manifold, sigma, kind, lo, hi):
    """``x -> P(R <= x)`` for the law on ``[lo, hi]`` by adaptive quadrature (reference
    density, not dpcore's)."""
    log_f, _ = radial_log_density(manifold, sigma, kind)
    sampler = inversion_sampler(volume_profile(manifold), sigma, kind, lo, hi)
    peak = float(log_f(sampler.mode))
    f = lambda t: float(np.exp(log_f(np.float64(t)) - peak))
    top = hi if math.isfinite(hi) else sampler.nodes[-1] + 50.0 * sigma
    total = quad(f, lo, top, points=[sampler.mode], limit=500, epsabs=0, epsrel=1e-13)[0]
    return lambda x: quad(f, lo, x, limit=500, epsabs=0, epsrel=1e-13)[0] / total


@pytest.mark.parametrize("law", [*LAWS[:8], (Sphere(2), 30.0, "gaussian", None),
                                 (Sphere(2), 0.5, "gaussian", (0.4, 1.3))],
                         ids=lambda law: _id(law[:3] + (None,)))
def test_the_inverse_cdf_is_within_the_u_error(law):
    """``F(F~^-1(u)) - u`` is within 1.5e-10 (tolerance 1e-10 plus quadrature rounding), also
    in the far tails and on a truncated shell ``[r_lo, r_hi]``."""
    manifold, sigma, kind, shell = law
    lo, hi = shell if isinstance(shell, tuple) else (0.0, volume_profile(manifold).r_max)
    sampler = inversion_sampler(volume_profile(manifold), sigma, kind, lo, hi)
    cdf = _quad_cdf(manifold, sigma, kind, lo, hi)
    u = np.concatenate([[1e-12, 1e-9, 1e-6, 1e-3], np.linspace(0.01, 0.99, 25),
                        [1 - 1e-3, 1 - 1e-6, 1 - 1e-9]])
    x = sampler.quantile(u)
    assert np.all(np.diff(x) >= 0) and x[0] >= lo and x[-1] <= hi
    errors = np.array([cdf(xi) - ui for xi, ui in zip(x, u, strict=True)])
    assert np.max(np.abs(errors)) <= 1.5e-10, errors


def test_the_laplace_law_on_the_two_sphere_against_its_closed_form():
    r"""On S² the Laplace radius has CDF :math:`(1 - e^{-x/s}(\sin x / s + \cos x)) / (1 -
    e^{-\pi/s}(-1))` up to the factor :math:`1/(1 + 1/s^2)` that cancels: a fine u grid,
    every cell of the table visited."""
    s = 0.4
    sampler = inversion_sampler(volume_profile(Sphere(2)), s, "laplace", 0.0, math.pi)
    u = (np.arange(200_000) + 0.5) / 200_000
    x = sampler.quantile(u)
    cdf = (1.0 - np.exp(-x / s) * (np.sin(x) / s + np.cos(x))) / (1.0 + np.exp(-math.pi / s))
    assert np.max(np.abs(cdf - u)) <= 1.2e-10
    assert np.all(np.diff(x) >= 0)


def test_a_loose_tolerance_is_detected_by_the_same_check():
    """The u-error check can fail: a sampler built to 1e-5 misses the 1e-10 bound."""
    s = 0.4
    profile = volume_profile(Sphere(2))
    from dpcore.sampling.radial import log_radial_functions

    logf, dlogf = log_radial_functions(profile, s, "laplace")
    loose = inversion.InversionSampler(logf, dlogf, 0.0, math.pi, scale=s, tol=1e-5)
    u = (np.arange(20_000) + 0.5) / 20_000
    x = loose.quantile(u)
    cdf = (1.0 - np.exp(-x / s) * (np.sin(x) / s + np.cos(x))) / (1.0 + np.exp(-math.pi / s))
    assert 1e-10 < np.max(np.abs(cdf - u)) <= 1e-5


def test_the_point_samplers_take_the_option_and_default_to_exact():
    m, center = Sphere(2), np.array([0.0, 0.0, 1.0])
    exact = sample_gaussian(m, center, 0.5, size=50, rng=3)
    assert np.array_equal(exact, sample_gaussian(m, center, 0.5, size=50, rng=3, radial="exact"))
    fast = sample_laplace(m, center, 0.5, size=(4, 5), rng=3, radial="inversion")
    assert fast.shape == (4, 5, 3) and np.allclose(np.linalg.norm(fast, axis=-1), 1.0)
    ball = sample_gaussian(m, center, 0.5, size=200, rng=3, radial="inversion",
                           support=(center, 0.3))
    assert np.all(m.dist(center, ball) <= 0.3 + 1e-12)
    spd = sample_gaussian(SPD(2), np.eye(2), 0.5, size=3, rng=3, radial="inversion")
    assert spd.shape == (3, 2, 2)  # SPD keeps its own (exact) sampler
    with pytest.raises(ValueError, match="radial"):
        sample_gaussian(m, center, 0.5, radial="fast")
    with pytest.raises(ValueError, match="radial"):
        sample_radius(m, 0.5, "gaussian", 3, radial="fast")


def test_the_monte_carlo_mu_draws_by_inversion(monkeypatch):
    calls = []
    real = inversion.InversionSampler.sample

    def spy(self, n, rng):
        calls.append(n)
        return real(self, n, rng)

    monkeypatch.setattr(inversion.InversionSampler, "sample", spy)
    gdp_mu_monte_carlo(Sphere(2), 1.0, 0.5, n_samples=200, repeats=10, rng=5)
    assert sum(calls) == 2 * 200 * 10


def _inversion_calls(path):
    """Lines of calls with the keyword ``radial="inversion"`` in the file ``path``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Call)
            and any(k.arg == "radial" and isinstance(k.value, ast.Constant)
                    and k.value.value == "inversion" for k in node.keywords)]


def test_no_release_or_mechanism_draws_by_inversion(tmp_path):
    """Releases keep the exact samplers: no call in ``dpcore/release`` or
    ``dpcore/mechanisms`` asks for ``radial="inversion"`` (and the scan finds a planted one)."""
    planted = tmp_path / "planted.py"
    planted.write_text("sample_gaussian(m, c, s, radial='inversion')\n")
    assert _inversion_calls(planted) == [1]
    files = [p for d in ("release", "mechanisms") for p in (ROOT / "dpcore" / d).rglob("*.py")]
    assert files
    offences = {str(p.relative_to(ROOT)): lines for p in files
                if (lines := _inversion_calls(p))}
    assert not offences
