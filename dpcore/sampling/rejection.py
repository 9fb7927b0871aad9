r"""Exact K-norm gradient sampling by rejection from a uniform proposal (DESIGN §12).

The KNG target on a support :math:`K` has unnormalized density
:math:`f(z) = \exp(-g(z)/\sigma)` with :math:`g(z) = \|\nabla E(z; D)\| \ge 0`, so
:math:`f \le 1`. Drawing :math:`z` uniformly on :math:`K` (w.r.t. the Riemannian volume) and
accepting it with probability :math:`f(z)` returns an exact draw from
:math:`f / \int_K f`: rejection sampling with envelope :math:`M q = 1` (q the uniform density,
:math:`M = \mathrm{vol}(K)`). Exactness needs nothing of :math:`g` beyond :math:`g \ge 0`; the
release is then pure ε-DP with δ = 0 whenever the sensitivity of :math:`g` is proven.

Cost. The acceptance rate is :math:`\int_K f / \mathrm{vol}(K) \ge \exp(-g_{\max}/\sigma)` for any
public bound :math:`g_{\max} \ge \sup_K g` valid for every data set. The expected number of
proposals per draw is therefore at most :math:`\exp(g_{\max}/\sigma)`, a figure computed from
public inputs only: :func:`worst_case_proposals` gives it, and callers decide *before* sampling
whether the request is within reach. The sampler itself never gives up: a refusal that
depended on the data would be observable and break the guarantee. Its run time does depend on
the data (a timing side channel, not a change of the output's distribution).

Supports (uniform proposals, all exact):

- :class:`WholeSpace`: a compact manifold (Sphere, KendallShape) via its ``random_point``, which
  is uniform for the Riemannian volume (normalized Gaussian vectors; for Kendall's space the
  uniform preshape sphere pushed through the Riemannian submersion onto :math:`CP^{k-2}`).
- :class:`UniformBall`: a geodesic ball :math:`B_R(m_0)` on any manifold with an exact truncated
  Laplace sampler: propose from the Laplace law :math:`\propto e^{-d(m_0, z)/R}` restricted to
  the ball and accept with probability :math:`e^{(d(m_0, z) - R)/R} \in [e^{-1}, 1]`, which
  leaves the uniform law (ratio of the two densities up to a constant). Euclidean balls use the
  closed form :math:`m_0 + R U^{1/d} \xi / |\xi|`, SPD(2) its own
  (:meth:`~dpcore.manifolds.Manifold.sample_uniform_ball`: a line times a hyperbolic plane,
  about 8 times faster than the truncated Laplace route).
- :class:`BundleBall`: pairs :math:`(p, v)` with :math:`p` uniform on a base support and
  :math:`v` uniform in the ball :math:`\|v\| \le V` of :math:`T_pM`, uniform for the volume of the
  Sasaki metric on the tangent bundle, which is the product of the base volume and Lebesgue
  measure on each fibre (the horizontal and vertical subspaces are orthogonal and each is
  isometric to its model).
"""

from __future__ import annotations

import math

import numpy as np

from .._progress import report
from .floatsafe import bernoulli_exp

#: Proposals evaluated per batch are capped so that ``batch x n`` stays near this many terms
#: (the gradient of one proposal costs O(n)); keeps the temporaries in memory and cache.
_TERMS_PER_BATCH = 2_000_000


class WholeSpace:
    """Uniform proposals on a compact manifold (Sphere, KendallShape).

    Parameters
    ----------
    manifold : Manifold
        Must have a ``random_point`` that is uniform for the Riemannian volume.
    """

    def __init__(self, manifold):
        self.manifold = manifold
        self.dim = manifold.dim

    def sample(self, m, rng):
        """``m`` uniform points, shape ``(m, *point_shape)``."""
        return self.manifold.random_point(m, rng)

    def describe(self):
        return f"uniform on {self.manifold!r}"


class UniformBall:
    """Uniform proposals on a closed geodesic ball ``B_radius(center)``.

    Parameters
    ----------
    manifold : Manifold
        One with an exact truncated Laplace sampler (:func:`dpcore.sampling.sample_laplace`):
        Euclidean, Sphere, KendallShape, Hyperbolic, SPD(k <= 2).
    center : array, shape ``point_shape``
    radius : float
    """

    def __init__(self, manifold, center, radius):
        self.manifold = manifold
        self.center = np.asarray(center, dtype=float)
        self.radius = float(radius)
        self.dim = manifold.dim

    def sample(self, m, rng):
        """``m`` uniform points of the ball, shape ``(m, *point_shape)``."""
        man, r = self.manifold, self.radius
        if man.is_linear:  # the closed form m0 + R U^(1/d) xi
            xi = rng.standard_normal((m, man.dim))
            xi /= np.linalg.norm(xi, axis=-1, keepdims=True)
            rad = r * rng.random(m) ** (1.0 / man.dim)
            return self.center + rad[:, None] * xi
        closed = man.sample_uniform_ball(self.center, r, m, rng)   # SPD(2)
        if closed is not None:
            return closed
        from .exact import sample_laplace

        out, have = [], 0
        while have < m:
            k = max(int(1.6 * (m - have)) + 8, 16)
            z = sample_laplace(man, self.center, r, size=k, rng=rng,
                               support=(self.center, r))
            d = man.dist(z, self.center)
            keep = rng.random(k) < np.exp((d - r) / r)
            out.append(z[keep])
            have += int(keep.sum())
        return np.concatenate(out)[:m]

    def describe(self):
        return f"uniform on the geodesic ball of radius {self.radius:g}"


class BundleBall:
    """Uniform proposals ``(p, v)``: ``p`` from ``base``, ``v`` uniform with ``|v| <= max_norm``.

    Draws are returned stacked as ``(m, 2, *point_shape)`` (``[:, 0]`` footpoints, ``[:, 1]``
    tangent vectors), the layout of :class:`~dpcore.mechanisms.bundle.TangentBundleWalk`.
    """

    def __init__(self, base, max_norm):
        self.base = base
        self.manifold = base.manifold
        self.max_norm = float(max_norm)
        self.dim = 2 * base.dim

    def sample(self, m, rng):
        man = self.manifold
        p = self.base.sample(m, rng)
        # A standard Gaussian in the metric (the manifold contract tests its coordinates in an
        # orthonormal basis), normalized: uniform directions; radius V U^(1/d): uniform in the
        # d-ball. No basis per point (it cost 10-50 us per proposal on SPD and Kendall).
        v = man.random_tangent(p, rng)
        scale = self.max_norm * rng.random(m) ** (1.0 / man.dim) / man.norm(p, v)
        return np.stack([p, v * man.pointwise(scale)], axis=1)

    def describe(self):
        return (f"({self.base.describe()}) x (uniform tangent ball of radius "
                f"{self.max_norm:g})")


def worst_case_proposals(g_max, sigma):
    """Public bound on the expected number of proposals per draw, ``exp(g_max / sigma)``."""
    return math.exp(min(float(g_max) / float(sigma), 700.0))


def take_accepted(ok, z, size, have, tried, got):
    """Book one batch of proposals ``z`` with acceptances ``ok`` (n_groups, m) into the open
    groups (``have < size``): each takes its first accepted proposals up to ``size`` (appended
    to ``got[k]``) and counts as tried every proposal up to the last one it used (the whole
    batch if it is still open). Updates ``have``, ``tried`` and ``got`` in place; returns the
    proposals taken per group."""
    taken = np.zeros_like(have)
    for k in np.flatnonzero(have < size):
        take = np.flatnonzero(ok[k])[: size - have[k]]
        tried[k] += (z.shape[0] if take.size < size - have[k] or take.size == 0
                     else int(take[-1]) + 1)
        got[k].append(z[take])
        have[k] += take.size
        taken[k] = take.size
    return taken


def sample_kng_exact(gradient_norm, sigma, support, size, rng=None, *, n_terms=1,
                     progress=None):
    r"""Exact draws from :math:`\propto \exp(-g(z)/\sigma)` on ``support`` by uniform rejection.

    Parameters
    ----------
    gradient_norm : callable
        Maps a batch of proposals ``(m, *shape)`` to ``g`` values ``(m,)``, all ``>= 0``.
        ``+inf`` (density zero) is allowed.
    sigma : float or array (n_groups,)
        Scale. An array draws ``size`` points for each scale from the same proposals' ``g``
        values (each group accepts independently), which is how several budgets share one run.
    support : WholeSpace, UniformBall or BundleBall
    size : int
        Draws per scale.
    rng : None, int or Generator
    n_terms : int
        Cost of one ``g`` evaluation in data terms (``n``), used to size the batches.
    progress : callable, optional
        ``progress(fraction)`` after every batch of proposals: the accepted share of all the
        draws asked for (:mod:`dpcore._progress`; it may raise to cancel).

    Returns
    -------
    values : ndarray ``(n_groups, size, *shape)`` (``(size, *shape)`` for a scalar ``sigma``)
    proposals : ndarray of int ``(n_groups,)``
        Proposals evaluated until each group was full (data dependent: keep it private).
    """
    rng = np.random.default_rng(rng)
    sigmas = np.atleast_1d(np.asarray(sigma, dtype=float))
    scalar = np.ndim(sigma) == 0
    size = int(size)
    n_groups = sigmas.size
    batch_cap = max(64, _TERMS_PER_BATCH // max(int(n_terms), 1))
    got = [[] for _ in range(n_groups)]
    have = np.zeros(n_groups, dtype=int)
    tried = np.zeros(n_groups, dtype=int)
    accepted = np.zeros(n_groups, dtype=int)
    m = min(batch_cap, 4 * size + 16)
    while np.any(have < size):
        z = support.sample(m, rng)
        g = np.asarray(gradient_norm(z), dtype=float)
        if g.shape != (m,) or np.any(np.isnan(g)) or np.any(g < 0):
            raise RuntimeError("gradient_norm must return m values >= 0 (or +inf), no NaN.")
        # Bernoulli(exp(-g / sigma)) with positive probability for every finite g: whether a
        # proposal (a float drawn independently of the data) can be accepted never depends on
        # the data (dpcore.sampling.floatsafe; DESIGN §12, floating point).
        ok = bernoulli_exp(g[None, :] / sigmas[:, None], rng)
        accepted += take_accepted(ok, z, size, have, tried, got)
        # Grow the batch from the worst open group's observed rate.
        open_groups = have < size
        if np.any(open_groups):
            rate = max(float((accepted[open_groups] + 0.5).min()
                             / max(tried[open_groups].max(), 1)), 1e-12)
            need = int((size - have[open_groups]).max())
            m = int(min(batch_cap, max(64, math.ceil(1.3 * need / rate))))
        report(progress, np.minimum(have, size).sum() / (n_groups * size))
    values = np.stack([np.concatenate(c)[:size] for c in got])
    return (values[0] if scalar else values), tried


__all__ = ["BundleBall", "UniformBall", "WholeSpace", "sample_kng_exact", "take_accepted",
           "worst_case_proposals"]
