r"""Exact samplers for the Riemannian Laplace and Gaussian densities (DESIGN section 6).

The density with respect to the Riemannian volume is :math:`\propto e^{-d(\eta, y)/\sigma}`
(Laplace, paper 001 Def. 3) or :math:`\propto e^{-d(\eta, y)^2/(2\sigma^2)}` (Gaussian, paper 004
Def. 3.3). On the built-in spaces a draw is :math:`\exp_\eta(r u)` with :math:`u` uniform on the
unit sphere of :math:`T_\eta M` and :math:`r` from the radial law of
:mod:`dpcore.sampling.radial`; SPD matrices use the polar form of :mod:`dpcore.sampling._spd`.
A support ball :math:`B_R(m_0)` truncates the density: the radius is drawn from its law restricted
to :math:`[\max(0, d(\eta, m_0) - R),\, d(\eta, m_0) + R]` (the ball lies in that shell) and the
draws outside the ball are redrawn, which is exact rejection sampling from the truncated density.
Monte Carlo studies may pass ``radial="inversion"`` to draw the radius by numerical inversion of
its CDF instead (:mod:`dpcore.sampling.inversion`: within 1e-10, faster, not exact); releases
never do.
"""

from __future__ import annotations

import math

import numpy as np

from .._validation import as_float_array, check_choice, check_positive
from ..manifolds import SPD
from ._logconcave import fill_by_rejection
from ._spd import spd_drawer
from .radial import (
    RADIAL_METHODS,
    check_integrable,
    check_kind,
    draw_radii,
    size_tuple,
    volume_profile,
)


def exact_sampler_available(manifold, kind) -> bool:
    """Whether :func:`sample_laplace` / :func:`sample_gaussian` draw exactly on ``manifold``.

    True for Euclidean, Sphere, KendallShape, Hyperbolic and SPD(k) with k <= 2. SPD(k >= 3)
    is sampled with its eigen-radius vector drawn by MCMC (approximate); other manifolds have no
    sampler here (use :func:`dpcore.sampling.metropolis_hastings`).
    """
    check_kind(kind)
    return volume_profile(manifold) is not None


def sample_laplace(manifold, center, sigma, size=None, rng=None, *, support=None,
                   radial="exact"):
    r"""Draw from the Riemannian Laplace density :math:`\propto \exp(-d(\eta, y)/\sigma)`.

    Parameters
    ----------
    manifold : Manifold
        Euclidean, Sphere, KendallShape, Hyperbolic or SPD.
    center : array
        The centre :math:`\eta` (one point).
    sigma : float
        Scale, positive. On Hyperbolic(d) the density is integrable only for
        ``1/sigma > d - 1``, on SPD(k) only for ``1/sigma > sqrt(k (k^2 - 1) / 12)``, unless
        ``support`` is given.
    size : int, tuple of int or None
        Batch shape of the output (``None``: one point).
    rng : None, int or numpy.random.Generator
        Source of randomness.
    support : tuple (m0, R), optional
        Restrict the support to the closed geodesic ball :math:`B_R(m_0)` (the density is
        truncated and renormalized).
    radial : {"exact", "inversion"}, optional
        How the distance to the centre is drawn: ``"exact"`` (default) by rejection from a
        proven envelope; ``"inversion"`` by numerical inversion of its CDF, within 1e-10 of the
        exact law in Kolmogorov distance and several times faster, for Monte Carlo studies,
        predictions and the Monte Carlo µ only (never for a release). SPD keeps its own
        sampler either way.

    Returns
    -------
    numpy.ndarray
        Points of shape ``(*size, *manifold.point_shape)``.

    Raises
    ------
    ValueError
        If ``sigma`` is not positive, the density is not integrable, or ``center`` / ``support``
        are not valid.
    NotImplementedError
        For manifolds without a sampler (e.g. :class:`~dpcore.manifolds.GeomstatsManifold`).

    Notes
    -----
    Exact for every built-in manifold except SPD(k >= 3), whose eigen-radius vector comes from
    a batched Metropolis chain (see :func:`exact_sampler_available`).
    """
    return sample_distance_density(manifold, center, sigma, "laplace", size, rng, support=support,
                                   radial=radial)


def sample_gaussian(manifold, center, sigma, size=None, rng=None, *, support=None,
                    radial="exact"):
    r"""Draw from the Riemannian Gaussian density :math:`\propto \exp(-d(\eta, y)^2/(2\sigma^2))`.

    Parameters and return value as in :func:`sample_laplace`; the Gaussian density is integrable
    on every built-in manifold. On Hyperbolic and SPD the draws lie at distance about
    ``sigma^2 x`` (volume growth rate) from the centre and overflow float64 for large ``sigma``
    (a ``ValueError`` says so).
    """
    return sample_distance_density(manifold, center, sigma, "gaussian", size, rng, support=support,
                                   radial=radial)


def sample_distance_density(manifold, center, sigma, kind, size=None, rng=None, *, support=None,
                            radial="exact"):
    """Shared implementation of :func:`sample_laplace` and :func:`sample_gaussian`."""
    rng = np.random.default_rng(rng)
    sigma = check_positive(sigma, "sigma")
    kind = check_kind(kind)
    radial = check_choice(radial, "radial", RADIAL_METHODS)
    shape = size_tuple(size)
    _check_supported(manifold)
    center = check_point(manifold, center, "center")
    ball = check_support(manifold, support)
    r_lo, r_hi = _radial_range(manifold, center, ball)
    check_integrable(manifold, sigma, kind, r_hi)
    draw = _drawer(manifold, center, sigma, kind, r_lo, r_hi, rng, radial)
    n = math.prod(shape)
    if ball is None:
        points = draw(n)
    else:
        m0, radius = ball
        points = fill_by_rejection(
            lambda m: _propose_in_ball(manifold, draw, m, m0, radius), n, initial_rate=0.5
        )
    if not np.all(np.isfinite(points)):
        raise ValueError(
            f"Draws with sigma={sigma!r} overflow float64 on {manifold!r} (distances too large "
            "for the point representation); use a smaller sigma or a `support` ball."
        )
    return points.reshape(shape + tuple(manifold.point_shape))


def _propose_in_ball(manifold, draw, m, m0, radius):
    points = draw(m)
    return points, manifold.dist(points, m0) <= radius


# ---------------------------------------------------------------------- validation
#: Spaces with a sampler of their own (manifold class -> drawer factory with the signature of
#: :func:`_drawer`): SPD(k), whose k > 2 has no radial law (polar form, eigen-radii by MCMC).
OWN_DRAWERS = {SPD: spd_drawer}


def _own_drawer(manifold):
    return next((f for cls, f in OWN_DRAWERS.items() if isinstance(manifold, cls)), None)


def _check_supported(manifold):
    if _own_drawer(manifold) is not None or volume_profile(manifold) is not None:
        return
    raise NotImplementedError(
        f"No exact sampler for {manifold!r}: sample_laplace / sample_gaussian support Euclidean, "
        "Sphere, KendallShape, Hyperbolic and SPD. For other manifolds use "
        "dpcore.sampling.metropolis_hastings(manifold, log_density, init, ...) with "
        "log_density(y) = -manifold.dist(center, y) / sigma (Laplace) or "
        "-manifold.dist(center, y)**2 / (2 sigma**2) (Gaussian)."
    )


def check_point(manifold, x, name):
    """One point of ``manifold`` as a float array (``ValueError`` if it is not one)."""
    x = as_float_array(x, name)
    if x.shape != tuple(manifold.point_shape):
        raise ValueError(
            f"`{name}` must be one point of shape {tuple(manifold.point_shape)}, got shape "
            f"{x.shape}."
        )
    if not np.all(np.isfinite(x)) or not bool(manifold.belongs(x, atol=1e-6)):
        raise ValueError(f"`{name}` is not a point of {manifold!r}.")
    return x


def check_support(manifold, support):
    """Validate ``support=(m0, R)``; returns ``None`` when it does not restrict anything."""
    if support is None:
        return None
    try:
        m0, radius = support
    except (TypeError, ValueError) as exc:
        raise TypeError("`support` must be a pair (center, radius).") from exc
    m0 = check_point(manifold, m0, "support center")
    radius = check_positive(radius, "support radius", allow_inf=True)
    if radius >= manifold.diameter:
        return None
    return m0, radius


def _radial_range(manifold, center, ball):
    r_max = manifold.diameter
    if ball is None:
        return 0.0, r_max
    m0, radius = ball
    offset = float(manifold.dist(center, m0))
    return max(0.0, offset - radius), min(r_max, offset + radius)


# ---------------------------------------------------------------------- drawing
def unit_tangents(manifold, center, m, rng):
    """``m`` tangent vectors at ``center``, uniform on the unit sphere of its tangent space."""
    x = np.broadcast_to(center, (m, *manifold.point_shape))
    v = manifold.random_tangent(x, rng)
    nv = manifold.norm(x, v)
    while np.any(nv == 0):  # probability zero, but possible in finite precision
        zero = nv == 0
        v[zero] = manifold.random_tangent(x[zero], rng)
        nv = manifold.norm(x, v)
    return v / manifold.pointwise(nv)


def _drawer(manifold, center, sigma, kind, r_lo, r_hi, rng, radial="exact"):
    """``draw(m)`` returning ``m`` draws from the law restricted to the radial shell."""
    own = _own_drawer(manifold)
    if own is not None:  # a sampler of its own (OWN_DRAWERS)
        return own(manifold, center, sigma, kind, r_lo, r_hi, rng)
    profile = volume_profile(manifold)
    # A sampler of its own: the untruncated Gaussian on R^d is center + sigma N(0, I).
    if manifold.is_linear and kind == "gaussian" and r_lo == 0 and r_hi == math.inf:
        return lambda m: center + sigma * rng.standard_normal((m, *manifold.point_shape))

    def draw(m):
        r = draw_radii(profile, sigma, kind, r_lo, r_hi, m, rng, radial)
        u = unit_tangents(manifold, center, m, rng)
        with np.errstate(over="ignore", invalid="ignore"):  # overflow is reported by the caller
            return manifold.exp(center, u * manifold.pointwise(r))

    return draw
