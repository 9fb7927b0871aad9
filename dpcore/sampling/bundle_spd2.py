r"""Exact joint KNG for geodesic regression on SPD(2) over whitened leaves certified by the
affine enclosure of :mod:`dpcore.sampling.spd2_affine` (issue 28 point 1; a prototype, not
wired into the releases).

Target, support, lattice, proposal, refinement, sampling loop and release rule are those of
:class:`~dpcore.sampling.bundle_whitened.WhitenedBundleSampler` through
:class:`~dpcore.sampling.bundle_flat.FlatBundleSampler`, in the six chart coordinates
:math:`z = (a, b)` of :mod:`dpcore.sampling.spd2_chart` (read both first): the public support
is :math:`|a| \le R` (footpoints within :math:`R` of the chart's centre) and :math:`|b| \le V`
(speeds up to :math:`V`), the output lattice that of a
:class:`~dpcore.sampling.bundle_lattice.FlatLattice` centred at 0 in these coordinates (a
released lattice point maps to :math:`(p, v)` by the public chart). What changes:

* the target's density in :math:`z` is :math:`e^{-g/\sigma}J(a)` with the chart's volume
  density :math:`J` (:meth:`~dpcore.sampling.spd2_chart.SPD2Chart.volume_density`), bounded
  on a leaf by :func:`~dpcore.sampling.spd2_affine.log_volume_bound` over its hull;
* a leaf's :math:`G = G_0 + L\varepsilon + \xi` comes from
  :func:`~dpcore.sampling.spd2_affine.enclose_spd2_gradient` (the rounding slack of the
  parallelepiped enters the enclosure as each coordinate's error), and :math:`g_B` is the
  larger of the box bound and the bound along :math:`G_0/|G_0|`, less :math:`|\xi|`; there is
  no convexity bound (the energy is not convex in these coordinates; its defect is bounded in
  :mod:`dpcore.sampling.spd2_convexity`, whose leaf version is too weak for these leaves yet:
  docs/measurements.md, session 29);
* :math:`g` at a proposal is :func:`~dpcore.sampling.spd2_chart.frame_gradient`'s norm (the
  library's gradient in the A-frame, equal to it within rounding: ``tests/sampling/
  test_spd2_chart.py``); its rounding error is assumed within the certificate's relative
  margin of :math:`10^{-10}` (as for the sphere's library kernel; not yet proven here).

Measured (``benchmarks/bench_spd2_enclosure.py``; docs/measurements.md, "SPD(2) at large
n·ε"): the enclosure's remainder is 3.6-16 times the remainder the gradient actually has, a
leaf costs about 4.5 ms at n = 250 (numpy), and on the page's design the envelope needs more
leaves than the cap already at n·ε = 200 (33 M proposals for 9 draws). Missing before it can
serve releases: a second-order enclosure, a leaf version of the proven convexity bound of
:mod:`dpcore.sampling.spd2_convexity` that keeps its strength on leaves of half-width 0.1-0.2,
compiled kernels.
"""

from __future__ import annotations

import numpy as np

from .bundle_flat import FlatBundleSampler
from .bundle_whitened import WhitenedBundleSampler
from .spd2_affine import enclose_spd2_gradient, log_volume_bound, response_enclosure
from .spd2_chart import SPD2Chart, clipped_fit, frame_gradient, gradient_jacobian

__all__ = ["SPD2BundleSampler"]

#: Damped Newton steps of the fit (unclipped, then clipped).
FIT_STEPS = 40


class SPD2BundleSampler(FlatBundleSampler):
    r"""Exact joint-regression KNG on SPD(2) (module docstring).

    Parameters
    ----------
    t : array (n,)
        Covariates in [0, 1].
    y : array (n, 2, 2)
        Responses.
    tau : float
        Residual clipping bound.
    sigma : float
        KNG scale.
    center : array (2, 2)
        The public centre of the footpoint ball.
    lattice : FlatLattice
        Public support and output lattice in chart coordinates (centre 0 in
        :math:`\mathbb{R}^3`: footpoint radius, speed bound).
    **options
        Those of :class:`~dpcore.sampling.bundle_whitened.WhitenedBundleSampler`.
    """

    def __init__(self, t, y, tau, sigma, center, lattice, **options):
        if lattice.foot_dim != 3 or np.any(lattice.center != 0):
            raise ValueError("The lattice must be centred at 0 in the three footpoint "
                             "coordinates of the chart.")
        self.compiled = False
        self.spd_chart = SPD2Chart(center)
        self.y_spd = np.asarray(y, dtype=float)
        self.ytil, self.logdet = self.spd_chart.responses(self.y_spd)
        self.ys = response_enclosure(self.spd_chart.T, self.y_spd)
        self.d = 3
        self.g_slack = 1e-12 * float(tau)
        self.e_slack = 0.0
        WhitenedBundleSampler.__init__(self, t, self.ytil, tau, sigma, lattice, **options)

    # ------------------------------------------------------------------ the space's part
    def _gradient(self, z, tau):
        return frame_gradient(np.atleast_2d(z), self.t, self.ytil, self.logdet, tau)

    def _fit(self, start):
        z = clipped_fit(self.t, self.ytil, self.logdet, self.tau, start, FIT_STEPS)
        return z, gradient_jacobian(z, self.t, self.ytil, self.logdet, self.tau)

    def _log_volume(self, z):
        return np.log(SPD2Chart.volume_density(np.atleast_2d(z)))

    def _log_volume_bound(self, zlo, zhi):
        return log_volume_bound(zlo, zhi)

    def _g(self, z):
        return np.sqrt(np.sum(self._gradient(z, self.tau) ** 2, axis=-1))

    # ------------------------------------------------------------------ bounds
    def _certify(self, zc, basis, zslack):
        """(g lower bound, e_B parts, g at the centre, per-axis score) of parallelepipeds from
        the affine enclosure (module docstring)."""
        enc = enclose_spd2_gradient(zc, basis, zslack, self.t, self.ys, self.tau)
        g0, q = enc.value, enc.linear
        loss = np.sqrt(np.sum(enc.error * enc.error, axis=-1)) * (1 + 1e-12)
        h_zeta = np.zeros(zc.shape[0])
        pg, pq, rad, box, along, g_0 = self._affine_bounds(g0, q)
        size = g_0 + np.sum(rad, axis=-1) + np.where(np.isfinite(loss), loss, 0.0)
        # steering only: g at the centre from the formula (a leaf whose enclosure failed has
        # G_0 = 0, and its estimate must still show how far from the fit it lies)
        g_c = self._g(zc)
        with np.errstate(invalid="ignore"):
            g_lb = np.maximum(box, along) - loss - self.g_slack - 1e-12 * size
        g_lb = np.where(np.isfinite(g_lb), np.maximum(g_lb, 0.0), 0.0)
        reach = np.sqrt(np.sum(basis * basis, axis=1))
        share = np.where(np.isfinite(loss), loss, 1e300)[:, None] * reach / np.maximum(
            np.sum(reach, axis=1, keepdims=True), 1e-300)
        return g_lb, (loss, h_zeta, pg, pq, size), g_c, share
