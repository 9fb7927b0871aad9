r"""Float-safe exact draws of distance-based laws (Riemannian Laplace and Gaussian), released
on a public lattice (DESIGN §12, floating point).

The radial samplers of :mod:`dpcore.sampling.exact` return ``exp_eta(r u)``: floats computed
from the data's statistic :math:`\eta`, so the set of floats a data set can emit depends on it
(Mironov, CCS 2012). Here the law :math:`\propto e^{\varphi(d(\eta, z))}` is drawn by
:class:`~dpcore.sampling.envelope.RefinedEnvelope` in normal coordinates at a *public* centre,
with :math:`g(z) = d(\eta, z)`, which is 1-Lipschitz (triangle inequality), and the lattice
cell of the draw is released: post-processing of the exact continuous law, with the same ε or
µ, and a set of possible outputs that does not depend on the data.

Domains (all public):

- a public support ball ``support=(c, R)``: the chart ball itself;
- a compact manifold (Sphere, KendallShape) without support: the chart at the manifold's
  :attr:`~dpcore.manifolds.Manifold.origin` with radius its diameter, which covers the whole
  space but the cut locus of the origin (a null set);
- a non-compact homogeneous space (Euclidean, SPD, Hyperbolic), Laplace only, given a public
  ball :math:`B_r(m_0)` known to hold :math:`\eta`: the law is truncated to
  :math:`B_{r+s}(m_0) \supseteq B_s(\eta)`. Its normalizing constant then lies in
  :math:`[I - T(s), I]` with :math:`I` the (centre-free) whole-space constant and :math:`T(s)`
  the mass beyond distance :math:`s`, so neighbouring log-densities differ by at most
  :math:`\Delta/\sigma + \mathrm{slack}`, :math:`\mathrm{slack} = -\log(1 - T(s)/I)`.
  :func:`truncation_slack` bounds :math:`T(s)/I` rigorously (annuli with the manifold's bound of
  the volume density, against :math:`I \ge e^{-1}\,\mathrm{vol}(B_\sigma)` since the density
  is at least 1 where curvature is non-positive), and :func:`truncation_radius` picks ``s`` so
  the slack is at most a given share of ε; the caller shrinks ``1/sigma`` by that share, so the
  stated ε holds exactly.

The cells of an envelope grow like :math:`2^d`; :data:`MAX_LATTICE_DIM` caps the dimension
where this sampler is used.
"""

from __future__ import annotations

import math

import numpy as np

from .._lazy import lazy_module
from .envelope import NormalChart, RefinedEnvelope

special = lazy_module("scipy.special")  # imported on first use

#: Largest intrinsic dimension drawn on the lattice (2^d children per split above it cost
#: more than the refinement can afford).
MAX_LATTICE_DIM = 4
#: Share of epsilon a truncated Laplace release may spend on its truncation slack.
TRUNCATION_SHARE = 1e-9


def lattice_available(manifold, kind, *, support=None, public_ball=None):
    """Whether :func:`lattice_distance_draws` can serve this request (public inputs only)."""
    if manifold.dim > MAX_LATTICE_DIM:
        return False
    try:
        manifold.log_volume_density_max(0.0, 0.0)
    except NotImplementedError:
        return False
    if support is not None or manifold.is_compact:
        return True
    return (kind == "laplace" and public_ball is not None and manifold.is_homogeneous
            and manifold.curvature_bounds[1] <= 0)


def chart_is_sound(manifold, center, radius, *, directions=64, rtol=1e-6):
    """Whether normal coordinates at ``center`` are numerically sound out to ``radius``.

    Far out on a non-compact space the chart's points are numerically degenerate (SPD
    matrices whose eigenvalue ratio exceeds 1/eps), and distances there come out wrong or NaN.
    Checks ``d(center, exp_center(u)) == |u|`` to ``rtol`` at ``|u| = radius`` in a fixed set of
    directions: public inputs only, the same answer for every data set.
    """
    if not math.isfinite(float(radius)):
        return False
    chart = NormalChart(manifold, np.asarray(center, dtype=float))
    u = np.random.default_rng(20_261_128).standard_normal((directions, chart.dim))
    u *= float(radius) / np.linalg.norm(u, axis=-1, keepdims=True)
    with np.errstate(all="ignore"):
        d = np.asarray(manifold.dist(chart.center, chart.to_point(u)), dtype=float)
    return bool(np.all(np.isfinite(d)) and np.all(np.abs(d - radius) <= rtol * radius))


def _log_ball_volume(d, radius):
    return _log_unit_ball(d) + d * math.log(radius)


def _log_unit_ball(d):
    """log of the volume of the unit ball of R^d (the first two terms of
    :func:`_log_ball_volume`, in its order of operations)."""
    return (d / 2) * math.log(math.pi) - float(special.gammaln(d / 2 + 1))


def truncation_slack(manifold, sigma, s, *, annuli=4000):
    r"""Rigorous upper bound of :math:`-\log(1 - T(s)/I)` for the Laplace law of scale
    ``sigma`` on a non-compact homogeneous ``manifold`` (module docstring).

    :math:`T(s) \le \sum_k e^{-\rho_k/\sigma}\,\mathrm{vol}_{\mathbb R^d}(A_k)\,\max_{A_k} J`
    over annuli :math:`A_k = \{\rho_k \le |u| < \rho_{k+1}\}` of width :math:`\sigma/4` from
    ``s``; past the last annulus the terms decay at least geometrically (``1/sigma`` above the
    volume growth rate, which the caller ensures), bounded by the last term times
    :math:`q/(1-q)` with :math:`q` the last ratio (or infinity if the terms still grow).
    """
    d = manifold.dim
    width = sigma / 4.0
    edges = s + width * np.arange(annuli + 1)
    lo, hi = edges[:-1], edges[1:]
    unit = _log_unit_ball(d)
    log_shell = np.log(np.maximum(np.exp(d * np.log(hi) - d * np.log(np.maximum(lo, 1e-300)))
                                  - 1.0, 0.0) + 1e-300) + np.array(
        [unit + d * math.log(r) for r in lo.tolist()]) if s > 0 else None
    if log_shell is None:
        return math.inf
    log_j = np.asarray(manifold.log_volume_density_max(lo, hi), dtype=float)
    terms = -lo / sigma + log_shell + log_j
    q = math.exp(min(terms[-1] - terms[-2], 0.0)) if terms[-1] < terms[-2] else math.inf
    top = terms.max()
    log_t = top + math.log(np.sum(np.exp(terms - top)))
    if not math.isfinite(q):
        return math.inf
    log_t = np.logaddexp(log_t, terms[-1] + math.log(q / (1.0 - q)))
    log_i = -1.0 + _log_ball_volume(d, sigma)
    ratio = math.exp(min(log_t - log_i, 0.0))
    return -math.log1p(-ratio) if ratio < 1 else math.inf


def truncation_radius(manifold, sigma, epsilon):
    """Smallest ``s`` in a doubling sequence with :func:`truncation_slack` at most
    ``TRUNCATION_SHARE * epsilon``; returns ``(s, slack)``."""
    s = 8.0 * sigma * max(manifold.dim, 1)
    for _ in range(40):
        slack = truncation_slack(manifold, sigma, s)
        if slack <= TRUNCATION_SHARE * epsilon:
            return s, slack
        s *= 1.5
    raise ValueError(f"No truncation radius keeps the slack below {TRUNCATION_SHARE:g} x "
                     f"epsilon for sigma = {sigma:g} on {manifold!r}: pass a public support.")


def lattice_distance_draws(manifold, center, sigma, kind, size, rng, *, support=None,
                           public_ball=None, truncation=None):
    """Exact draws of :math:`\\propto e^{\\varphi(d(\\eta, z))}` released on a public lattice.

    Parameters
    ----------
    manifold : Manifold
    center : array
        The statistic :math:`\\eta` (the data's; it only enters the target, never a float
        that is emitted).
    sigma : float
    kind : {"laplace", "gaussian"}
    size : int
    rng : Generator
    support : (center, radius), optional
        A public support ball.
    public_ball : (center, radius), optional
        A public ball known to hold ``center`` (for the truncated whole-space Laplace).
    truncation : float, optional
        The distance ``s`` beyond the public ball (from :func:`truncation_radius`).

    Returns
    -------
    points : ndarray ``(size, *point_shape)``
    lattice : dict
        The public lattice (spacing, origin, coordinates) for the record.
    """
    env = distance_envelope(manifold, center, sigma, kind, size, support=support,
                            public_ball=public_ball, truncation=truncation)
    points, _ = env.sample(int(size), rng)
    return points, env.lattice


def distance_envelope(manifold, center, sigma, kind, draws=1, *, support=None,
                      public_ball=None, truncation=None):
    """The envelope (and public lattice) :func:`lattice_distance_draws` samples from; the
    float audit decides reachability on it."""
    m = manifold
    if support is not None:
        c0, radius = support
    elif m.is_compact:
        c0, radius = m.origin, float(m.diameter)
    else:
        c0, radius = public_ball[0], float(public_ball[1]) + float(truncation)
    eta = np.asarray(center, dtype=float)
    c0 = np.asarray(c0, dtype=float)
    offset = float(m.dist(c0, eta))

    def distance(z):
        return np.asarray(m.dist(eta, z), dtype=float)

    def floor(centers, half):
        # Triangle inequality: d(eta, z) >= d(m0, z) - d(m0, eta), and d(m0, z) = |u| in the
        # chart ball (inside the injectivity radius); |u| >= the cube's distance to 0.
        near = np.linalg.norm(np.maximum(np.abs(centers) - half[:, None], 0.0), axis=-1)
        return near - offset

    return RefinedEnvelope(NormalChart(m, c0), float(radius), distance, 1.0, sigma,
                           profile=kind, draws=int(draws), g_floor=floor)


__all__ = ["MAX_LATTICE_DIM", "TRUNCATION_SHARE", "chart_is_sound", "distance_envelope",
           "lattice_available",
           "lattice_distance_draws", "truncation_radius", "truncation_slack"]
