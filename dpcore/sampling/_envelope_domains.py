r"""Where a refined envelope lives: normal charts, its domains and the Lipschitz constants.

:class:`NormalChart` gives normal coordinates at the centre of a public ball with the volume
density of ``exp`` and its bounds; :class:`BallDomain` (the ball of a Fréchet KNG) and
:class:`ProductBallDomain` (footpoint ball times speed ball of a joint regression KNG on R^d)
are the convex domains :class:`~dpcore.sampling.envelope.RefinedEnvelope` refines cubes over;
:func:`frechet_gradient_lipschitz` and :func:`regression_joint_lipschitz` bound the Lipschitz
constants of the gradient norms. The proofs are in the docstring of
:mod:`dpcore.sampling.envelope`, which re-exports every name here.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["BallDomain", "NormalChart", "ProductBallDomain", "frechet_gradient_lipschitz",
           "regression_joint_lipschitz"]


class NormalChart:
    r"""Normal coordinates at ``center``: :math:`u \mapsto \exp_{m_0}(\sum_a u_a e_a)`.

    Parameters
    ----------
    manifold : Manifold
        One with a closed-form volume density of ``exp`` (every built-in manifold).
    center : array, shape ``point_shape``

    Raises
    ------
    NotImplementedError
        If the manifold has no closed-form volume density (e.g. a geomstats space).

    Notes
    -----
    Volume density :math:`J(u) = \prod_\lambda S(\lambda)` over the eigenvalues :math:`\lambda`
    of the curvature operator :math:`w \mapsto R(w, u)u` (DESIGN §3, the singular values of
    :math:`d\exp`), a fact of the manifold
    (:meth:`~dpcore.manifolds.Manifold.log_volume_density`, bounded over annuli by
    :meth:`~dpcore.manifolds.Manifold.log_volume_density_max`):
    :math:`(\sin\rho/\rho)^{d-1}` on :math:`S^d`;
    :math:`(\sin\rho/\rho)^{2m-2}\,\sin 2\rho/(2\rho)` on Kendall's :math:`CP^m`;
    :math:`(\sinh\rho/\rho)^{d-1}` on :math:`H^d`; on SPD(k),
    :math:`\prod_{i<j}\sinh(|\lambda_i-\lambda_j|/2)/(|\lambda_i-\lambda_j|/2)` with
    :math:`\lambda` the eigenvalues of :math:`m_0^{-1/2} V m_0^{-1/2}`; 1 on :math:`\mathbb{R}^d`.
    """

    def __init__(self, manifold, center):
        try:
            manifold.log_volume_density_max(0.0, 0.0)  # raises where there is no closed form
        except NotImplementedError as exc:
            raise NotImplementedError(f"No normal chart for {manifold!r}.") from exc
        self.manifold = manifold
        self.center = np.asarray(center, dtype=float)
        self.dim = manifold.dim
        self.basis = manifold.orthonormal_basis(self.center)  # (d, *ps)
        self.kappa_low = float(manifold.curvature_bounds[0])

    def tangent(self, u):
        """Tangent vectors at the centre from coordinates ``(m, d)``."""
        return np.einsum("ma,a...->m...", u, self.basis)

    def to_point(self, u):
        """Points ``exp_center(u)``, shape ``(m, *point_shape)``."""
        return self.manifold.exp(self.center, self.tangent(u))

    def log_jacobian(self, u):
        """``log J(u)`` for coordinates ``(m, d)``, shape ``(m,)``: the manifold's
        :meth:`~dpcore.manifolds.Manifold.log_volume_density` at the centre (``|u|`` is the
        norm of the tangent vector, the basis being orthonormal)."""
        rho = np.linalg.norm(u, axis=-1)
        return self.manifold.log_volume_density(self.center, self.tangent(u), rho=rho)

    def log_jacobian_max(self, rho_lo, rho_hi):
        """Upper bound of ``log J`` over ``rho_lo <= |u| <= rho_hi`` (arrays): the manifold's
        :meth:`~dpcore.manifolds.Manifold.log_volume_density_max`."""
        return self.manifold.log_volume_density_max(rho_lo, rho_hi)

    def exp_lipschitz(self, rho):
        """Lipschitz constant of ``exp_center`` on ``|u| <= rho`` (Rauch comparison)."""
        if self.kappa_low >= 0:
            return 1.0
        x = math.sqrt(-self.kappa_low) * rho
        return math.sinh(x) / x if x > 0 else 1.0


def frechet_gradient_lipschitz(manifold, radius):
    """Lipschitz constant of ``z -> |grad F(z)|`` on ``B_radius`` (see
    :mod:`dpcore.sampling.envelope`)."""
    kappa_low = float(manifold.curvature_bounds[0])
    if kappa_low >= 0:
        return 1.0
    x = math.sqrt(-kappa_low) * 2.0 * radius
    return x / math.tanh(x) if x > 0 else 1.0


class BallDomain:
    """The ball ``|u| <= radius`` of a :class:`NormalChart` (the support of a Fréchet KNG)."""

    coordinates_note = "normal coordinates at the public ball's centre (orthonormal basis)"

    def __init__(self, chart, radius):
        self.chart = chart
        self.radius = float(radius)
        self.dim = chart.dim
        self.exp_lip = chart.exp_lipschitz(self.radius)
        self.half_width = np.full(self.dim, self.radius)

    def inside(self, u):
        return np.linalg.norm(u, axis=-1) <= self.radius

    def misses(self, centers, half):
        """Cubes that do not meet the domain."""
        return np.linalg.norm(np.maximum(np.abs(centers) - half[:, None], 0.0),
                              axis=-1) > self.radius

    def project(self, c):
        cn = np.linalg.norm(c, axis=-1)
        return c * np.minimum(1.0, self.radius / np.where(cn > 0, cn, 1.0))[:, None]

    def log_jacobian_bounds(self, centers, half):
        """(upper bound of log J on each cube's part in the domain, a lower bound used only
        to steer the refinement)."""
        cn = np.linalg.norm(centers, axis=-1)
        rho_lo = np.linalg.norm(np.maximum(np.abs(centers) - half[:, None], 0.0), axis=-1)
        rho_hi = np.minimum(self.radius, cn + half * math.sqrt(self.dim))
        upper = self.chart.log_jacobian_max(np.minimum(rho_lo, self.radius), rho_hi)
        # J is smallest at the far end for curvature >= 0 and at least 1 for curvature <= 0.
        lower = (self.chart.log_jacobian_max(rho_hi, rho_hi) if self.chart.kappa_low >= 0
                 else np.zeros(rho_hi.shape))
        return upper, lower

    def to_point(self, u):
        return self.chart.to_point(u)

    def log_jacobian(self, u):
        return self.chart.log_jacobian(u)


def regression_joint_lipschitz(t):
    r"""Lipschitz constant of :math:`z \mapsto \|\nabla_z E(z)\|` for joint regression in
    :math:`\mathbb{R}^d`, :math:`z = (p, v)`, with residuals clipped to norm τ.

    The clipped energy's gradient (paper 002, eqs. 5-8, flat case: :math:`d_p Exp = I`,
    :math:`d_v Exp = t I`) is :math:`G(z) = -\frac1n \sum_i B_i^\top \Pi_\tau(y_i - B_i z)`
    with :math:`B_i z = p + t_i v` and :math:`\Pi_\tau` the projection onto the ball of radius
    τ, which is non-expansive. :math:`\|B_i\| = \sqrt{1 + t_i^2}`, hence
    :math:`\|G(z) - G(z')\| \le \frac1n \sum_i (1 + t_i^2) \|z - z'\|`, and the norm
    :math:`g = \|G\|` is Lipschitz with the same constant (at most 2 for covariates rescaled
    to [0, 1]). The Sasaki metric of :math:`T\mathbb{R}^d` is the flat metric of
    :math:`\mathbb{R}^{2d}`, the one the KNG density uses. The bound holds on all of
    :math:`\mathbb{R}^{2d}`, so envelope anchors may lie anywhere.

    Parameters
    ----------
    t : array, shape ``(n,)``
        Covariates rescaled to [0, 1].

    Returns
    -------
    float
    """
    t = np.asarray(t, dtype=float)
    return float(1.0 + np.mean(t * t))


class ProductBallDomain:
    r"""The support :math:`B_R(c) \times \{\|v\| \le V\}` of a joint KNG in
    :math:`\mathbb{R}^d`, in coordinates :math:`u = (p - c, v) \in \mathbb{R}^{2d}`.

    A product of balls is convex and its projection is the blockwise one (non-expansive), as
    :class:`RefinedEnvelope` needs. Points are returned stacked ``(m, 2, d)`` (``[:, 0]``
    footpoints, ``[:, 1]`` vectors), the layout of the joint mechanism. The volume density is 1.

    Parameters
    ----------
    center : array, shape ``(d,)``
    radius : float
        Footpoint ball radius R.
    max_norm : float
        Shooting-vector bound V.
    """

    coordinates_note = "(footpoint - public centre, shooting vector)"

    def __init__(self, center, radius, max_norm):
        self.center = np.asarray(center, dtype=float).reshape(-1)
        self.d = self.center.size
        self.radius, self.max_norm = float(radius), float(max_norm)
        self.dim = 2 * self.d
        self.exp_lip = 1.0
        self.half_width = np.array([self.radius] * self.d + [self.max_norm] * self.d)

    def _blocks(self):
        return ((slice(0, self.d), self.radius), (slice(self.d, self.dim), self.max_norm))

    def inside(self, u):
        return np.all([np.linalg.norm(u[:, sl], axis=-1) <= r for sl, r in self._blocks()],
                      axis=0)

    def misses(self, centers, half):
        """Cubes that do not meet the domain (exact: a cube's nearest point to each block's
        centre is the coordinatewise clamp)."""
        gap = np.maximum(np.abs(centers) - half[:, None], 0.0)
        return np.any([np.linalg.norm(gap[:, sl], axis=-1) > r for sl, r in self._blocks()],
                      axis=0)

    def project(self, c):
        out = np.array(c, dtype=float)
        for sl, r in self._blocks():
            nn = np.linalg.norm(c[:, sl], axis=-1)
            out[:, sl] = c[:, sl] * np.minimum(1.0, r / np.where(nn > 0, nn, 1.0))[:, None]
        return out

    def log_jacobian_bounds(self, centers, half):
        zero = np.zeros(centers.shape[0])
        return zero, zero

    def to_point(self, u):
        return np.stack([self.center + u[:, :self.d], u[:, self.d:]], axis=1)

    def log_jacobian(self, u):
        return np.zeros(u.shape[0])
