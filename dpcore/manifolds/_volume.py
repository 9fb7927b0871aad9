"""Volume laws of a manifold: default methods of :class:`~dpcore.manifolds.Manifold`.

The Riemannian volume in normal coordinates (the volume density of ``exp``) and in geodesic
polar coordinates (the radial volume law), as used by the samplers of distance-based densities.
:class:`VolumeLawsMixin` holds the defaults that :class:`~dpcore.manifolds.base.Manifold`
inherits: each raises ``NotImplementedError`` until a concrete space gives a closed form.
"""

from __future__ import annotations

import numpy as np

__all__ = ["VolumeLawsMixin"]


class VolumeLawsMixin:
    """Default volume laws of a manifold (mixed into ``Manifold``); uses its ``dim``."""

    # ------------------------------------------------------------------ volume
    # The Riemannian volume in normal coordinates (the volume density of exp) and in geodesic
    # polar coordinates (the radial volume law), as used by the samplers of distance-based
    # densities (dpcore.sampling.radial, dpcore.sampling.envelope). A space without a closed
    # form raises NotImplementedError; the samplers then fall back to MCMC or say so.
    def log_volume_density(self, x, v, *, rho=None):
        r"""Log of the volume density of the exponential map: :math:`\log|\det d\exp_x(v)|`.

        The determinant is taken between orthonormal bases of :math:`T_x M` and
        :math:`T_{\exp_x v} M`, so the Riemannian volume in normal coordinates at ``x`` is
        :math:`\theta_x(v)\,dv` with :math:`\theta_x = \exp(\text{this})`. On a locally
        symmetric space it is :math:`\sum_\lambda \log S(\lambda)` over the eigenvalues
        :math:`\lambda` of the curvature operator :math:`w \mapsto R(w, v)v` (DESIGN §3),
        :math:`S(\lambda) = \sin\sqrt\lambda/\sqrt\lambda` (``sinh`` for :math:`\lambda < 0`).
        It is 0 at ``v = 0`` and ``-inf`` at conjugate points.

        Parameters
        ----------
        x : array, shape ``(..., *point_shape)``
            Base points.
        v : array, shape ``(..., *point_shape)``
            Tangent vectors at ``x``.
        rho : array, shape ``(...)``, optional
            The norms ``|v|_x`` if the caller has them already (e.g. from the coordinates of
            ``v`` in an orthonormal basis); the spaces whose density depends on ``|v|`` alone
            use them as given instead of recomputing them.

        Returns
        -------
        ndarray, shape ``(...)``

        Raises
        ------
        NotImplementedError
            If no closed form is known for this space.
        """
        raise NotImplementedError(
            f"No closed-form volume density of the exponential map is known for {self!r}.")

    def log_volume_density_max(self, rho_lo, rho_hi):
        r"""Upper bound of :meth:`log_volume_density` over ``rho_lo <= |v| <= rho_hi``.

        The bound holds at every base point (it depends on the radii alone), for radii up to
        the injectivity radius.

        Parameters
        ----------
        rho_lo, rho_hi : array, shape ``(...)``
            Inner and outer radii of annuli of :math:`T_x M`, ``0 <= rho_lo <= rho_hi``.

        Returns
        -------
        ndarray, shape ``(...)``

        Raises
        ------
        NotImplementedError
            If no closed form is known for this space.
        """
        raise NotImplementedError(
            f"No bound of the volume density of the exponential map is known for {self!r}.")

    def radial_log_volume(self, r):
        r"""Log of the radial volume law :math:`J(r)`, up to an additive constant.

        The Riemannian volume in geodesic polar coordinates about any point is
        :math:`J(r)\,dr\,d\omega` (after integrating the direction where it matters), so a
        density :math:`\propto h(d(\eta, y))` gives the distance :math:`d(\eta, Y)` the 1-D
        density :math:`\propto h(r) J(r)` on :math:`[0, \mathrm{diameter}]`. For a space whose
        volume density depends on :math:`|v|` alone, :math:`J(r) = r^{d-1}\theta(r)`.

        Parameters
        ----------
        r : array, shape ``(...)``
            Radii in ``[0, diameter]``.

        Returns
        -------
        ndarray, shape ``(...)``
            (``-inf`` where :math:`J` vanishes.)

        Raises
        ------
        NotImplementedError
            If the space has no closed-form one-dimensional radial law.
        """
        raise NotImplementedError(
            f"No exact radial law for {self!r}; use dpcore.sampling.metropolis_hastings with "
            "the log density instead.")

    def _times_dim_minus_one(self, r, fn):
        """``fn(r, dim - 1)`` (0 in dimension 1): the radial law of a space of constant
        curvature, whose volume density is ``J(r)^(dim - 1)``; ``fn(r, a)`` is ``a log J(r)``
        or its derivative."""
        r = np.asarray(r, dtype=float)
        if self.dim == 1:
            return np.zeros_like(r)
        with np.errstate(divide="ignore", invalid="ignore"):
            return fn(r, self.dim - 1)

    def radial_dlog_volume(self, r):
        """Derivative of :meth:`radial_log_volume` with respect to ``r``.

        Parameters
        ----------
        r : array, shape ``(...)``

        Returns
        -------
        ndarray, shape ``(...)``

        Raises
        ------
        NotImplementedError
            If the space has no closed-form one-dimensional radial law.
        """
        self.radial_log_volume(r)  # raises the reason there is none
        raise NotImplementedError(f"No derivative of the radial law of {self!r}.")

    #: Whether the volume density of ``exp`` depends on ``|v|`` alone (the two-point
    #: homogeneous spaces: spheres, Kendall's CP^(k-2), hyperbolic spaces), which
    #: :meth:`sample_uniform_ball` needs.
    isotropic_volume = False

    def sample_uniform_ball(self, center, radius, size, rng):
        r"""``size`` points uniform for the Riemannian volume in the geodesic ball
        ``B_radius(center)``, or None where the space has no sampler of its own (the exact
        samplers then propose through its truncated Laplace law,
        :class:`~dpcore.sampling.rejection.UniformBall`).

        The default serves spaces with :attr:`isotropic_volume` and a radius within the
        injectivity radius: in normal coordinates the volume is :math:`\theta(|v|)\,dv`, so
        :math:`v` uniform in the Euclidean ball (a uniform direction, radius
        :math:`R U^{1/d}`) accepted with probability :math:`\theta(|v|)/\theta_{\max}`
        (:meth:`log_volume_density_max` over :math:`[0, R]`) and mapped by ``exp`` is uniform
        on the ball (exact rejection).

        Parameters
        ----------
        center : array, shape ``point_shape``
        radius : float
        size : int
        rng : numpy.random.Generator

        Returns
        -------
        ndarray, shape ``(size, *point_shape)``, or None
        """
        radius, size = float(radius), int(size)
        if not self.isotropic_volume or radius > self.injectivity_radius:
            return None
        center = np.asarray(center, dtype=float)
        log_top = float(self.log_volume_density_max(0.0, radius))
        out, have = [], 0
        while have < size:
            m = int(1.3 * (size - have)) + 8
            base = np.broadcast_to(center, (m, *center.shape))
            u = self.random_tangent(base, rng)
            rho = radius * rng.random(m) ** (1.0 / self.dim)
            v = u * self.pointwise(rho / self.norm(base, u))
            log_theta = np.asarray(self.log_volume_density(base, v, rho=rho))
            keep = rng.random(m) < np.exp(log_theta - log_top)
            out.append(self.exp(base[keep], v[keep]))
            have += int(keep.sum())
        return np.concatenate(out)[:size]

    @property
    def volume_growth_rate(self) -> float:
        r"""Exponential growth rate of the volume of geodesic balls.

        The largest :math:`c` such that :math:`\theta_x(r u) \approx e^{c r}` along some unit
        direction :math:`u` as :math:`r \to \infty`: the Laplace density
        :math:`\exp(-d/\sigma)` is integrable iff :math:`1/\sigma > c`. Zero on compact and
        flat spaces.

        Returns
        -------
        float

        Raises
        ------
        NotImplementedError
            If it is not known for this space.
        """
        raise NotImplementedError(f"no volume growth rate known for {self!r}.")
