r"""Exact joint KNG for geodesic regression on the whole of :math:`TS^2` (no footpoint ball):
two public charts, each with its public output lattice (issue 28).

The target
----------
:math:`f = e^{-g/\sigma}` w.r.t. the Sasaki volume on the speed-bounded tangent bundle
:math:`\{(p, v): p \in S^2, |v| \le V\}`, :math:`V \le \pi` (the target of
:mod:`dpcore.sampling.bundle_sampler`, whose docstring states why KNG on a public support is
:math:`\epsilon`-DP with :math:`\sigma = 2\Delta/\epsilon`).

The public partition
--------------------
A public centre :math:`m_0` (the north pole unless the caller passes another public point;
never taken from the data) gives two charts
(:class:`~dpcore.sampling.sphere_enclosure.SphereBundleChart`) and their lattices
(:class:`~dpcore.sampling.bundle_lattice.BundleLattice`):

* **A**: centre :math:`m_0`, footpoint radius :math:`R_A = \pi/2`; region
  :math:`D_A` = its support :math:`D_L` (cells whose lattice point has :math:`|u| \le R_A -
  2\gamma_u`, :math:`|w| \le V - 2\gamma_w`);
* **B**: centre :math:`-m_0`, radius :math:`R_B = \pi/2 +` :data:`OVERLAP`; region
  :math:`D_B = \{x \in D'_B : x \notin D_A\}`, :math:`D'_B` the union of B's cells :math:`K'`
  with :math:`|u_{K'}| \le R_B - 2\gamma_u`, :math:`|w_{K'}| \le V - 2\gamma_w` *and whose
  lattice point* :math:`z_{K'}` *is not in* :math:`D_A` (:class:`ComplementLattice`; membership
  of a float point in :math:`D_A` is a fixed public float function: map it to
  :math:`(p, v)`, to A's coordinates, to A's cell, test A's support rule).

:math:`D_A` and :math:`D_B` are disjoint by construction, so the union :math:`D = D_A \cup
D_B` covers each point at most once; its complement in the speed-bounded bundle is public and
thin: the shells :math:`V - 2\gamma_w < |w| \le V` (as for the ball sampler), and near the
seam :math:`|u_A| = \pi/2` the points outside :math:`D_A` whose B-cell's lattice point lies in
:math:`D_A` (within two B-cells, about :math:`10^{-9}`, of the seam). ``R_B`` exceeds
:math:`\pi/2` by :data:`OVERLAP` so that every point of the hemisphere
:math:`|u_A| \ge \pi/2` is inside B's ball by a margin far larger than the float error of the
chart maps. The release's law is KNG on the public support :math:`D` (same guarantee as any
public support).

The sampler (exact)
-------------------
Each chart :math:`c` has a certified envelope :math:`fJ_c \le M_cq_c` on its support
(:class:`~dpcore.sampling.bundle_sphere_chart.SphereChartSampler`; the chart whose region
holds the unclipped fit whitens its K-norm component there, both when the fit is near the
seam; the other has no mode). A proposal picks chart :math:`c` with probability
:math:`\pi_c` (dyadic rationals :math:`k/2^{53}`, both positive), proposes :math:`x \sim q_c`
and rejects it unless its output cell lies in :math:`c`'s region (for B: in :math:`D'_B` and
:math:`x \notin D_A`); else it accepts with probability

.. math:: \frac{f(x)}{M\pi_cq_c(x)}, \qquad M = \max_c M_c/\pi_c,

which is at most 1 by the chart's certificate. So this is rejection sampling from the
sub-probability proposal :math:`\sum_c\pi_cq_c\mathbb 1_{D_c}` with :math:`f \le
M\pi_cq_c` on :math:`D_c` (the :math:`D_c` disjoint): the accepted :math:`x` has density
:math:`\propto f` on :math:`D` (exact arithmetic). A ratio above :math:`1 + 10^{-9}` raises
:class:`~dpcore.exceptions.EnvelopeViolation` (nothing is released).

Float safety (DESIGN §12)
-------------------------
The release is the pair (chart, cell index), i.e. the chart's fixed lattice point: a public
function of the index. The set of released pairs is the same for every data set: (i)
nothing outside :math:`D_A`'s cells or :math:`D'_B`'s cells is released (public tests on the
index); (ii) every such cell is released with positive probability: the chart is drawn with
probability :math:`\pi_c > 0`, its :math:`q_e` proposes the cell's own lattice point with
positive probability (every kept leaf has integer weight at least 1 and the in-cell offset is
0 at :math:`U = 1/2`), that point is in the region (for B by the definition of
:math:`D'_B`) and its acceptance probability is positive (finite :math:`g` and :math:`q`).
:meth:`WholeSphereBundleSampler.reachable` checks (ii) with that witness. The refinement of
each envelope, the fit, :math:`\pi_c` and :math:`M` read the data: a timing side channel, as
for every exact sampler here.
"""

from __future__ import annotations

import math

import numpy as np

from .._progress import stages
from .bundle_lattice import BundleLattice
from .bundle_sphere_chart import SphereChartSampler, chart_fit
from .bundle_sphere_draw import _UNITS, _chart_units, acceptance, draw_from_charts  # noqa: F401

__all__ = ["OVERLAP", "SPLIT_RADIUS", "ComplementLattice", "WholeSphereBundleSampler",
           "draw_from_charts"]

#: Footpoint radius of chart A (about the public centre).
SPLIT_RADIUS = 0.5 * math.pi
#: How far chart B's footpoint ball reaches past the seam.
OVERLAP = 0.01
#: A chart whitens its K-norm component at the fit when the unclipped fit's footpoint lies
#: within its radius plus this.
MODE_REACH = 0.3


class ComplementLattice(BundleLattice):
    r"""Chart B's public lattice: :class:`~dpcore.sampling.bundle_lattice.BundleLattice` whose
    support also excludes the cells whose lattice point lies in ``inner``'s support
    (module docstring).

    Parameters
    ----------
    center, radius, max_speed
        As for :class:`~dpcore.sampling.bundle_lattice.BundleLattice`.
    inner : BundleLattice
        Chart A's lattice.
    """

    def __init__(self, center, radius, max_speed, inner):
        super().__init__(center, radius, max_speed)
        self.inner = inner

    def in_inner(self, z):
        """Whether chart coordinates ``(m, 4)`` (of this chart) lie in ``inner``'s support."""
        z = np.asarray(z, dtype=float)
        p, v = self.chart.to_bundle(z[:, :2], z[:, 2:])
        u, w = self.inner.chart.from_bundle(p, v)
        return self.inner.in_support(self.inner.index_of(np.concatenate([u, w], axis=-1)))

    def in_support(self, index):
        ok = super().in_support(index)
        if np.any(ok):
            ok[ok] = ~self.in_inner(self.coordinates(np.asarray(index)[ok]))
        return ok


class WholeSphereBundleSampler:
    r"""Exact joint-regression KNG on the speed-bounded tangent bundle of :math:`S^2` (module
    docstring).

    Parameters
    ----------
    t : array (n,)
        Covariates in [0, 1].
    y : array (n, 3)
        Unit responses.
    tau, sigma : float
        Residual clip and KNG scale.
    max_speed : float
        Public shooting-vector bound :math:`V \le \pi`.
    center : array (3,), optional
        Public centre of chart A (default the north pole).
    draws, acceptance_goal, box_cost, max_boxes, compiled
        For each chart's :class:`~dpcore.sampling.bundle_sphere_chart.SphereChartSampler`
        (``max_boxes`` per chart).
    progress : callable, optional
        ``progress(fraction)`` of the two envelopes' construction, each chart half of it.
    """

    def __init__(self, t, y, tau, sigma, max_speed, *, center=(0.0, 0.0, 1.0), draws=1,
                 acceptance_goal=2e-3, box_cost=8.0, max_boxes=60_000, compiled=True,
                 progress=None):
        center = np.asarray(center, dtype=float).reshape(3)
        inner = BundleLattice(center, SPLIT_RADIUS, max_speed)
        outer = ComplementLattice(-center, SPLIT_RADIUS + OVERLAP, max_speed, inner)
        self.lattices = [inner, outer]
        t = np.asarray(t, dtype=float).reshape(-1)
        y = np.asarray(y, dtype=float)
        p_hat, v_hat = self._unclipped_fit(t, y)
        fits = []
        for lat in self.lattices:
            u, w = lat.chart.from_bundle(p_hat, v_hat)
            start = np.concatenate([u, w])
            near = bool(np.all(np.isfinite(start))
                        and np.linalg.norm(u) <= lat.radius + MODE_REACH)
            fits.append(chart_fit(lat.chart, t, y, tau, start) if near else None)
        if all(f is None for f in fits):          # no usable unclipped fit: start at A's centre
            fits[0] = chart_fit(inner.chart, t, y, tau, np.zeros(4))
        options = dict(draws=draws, acceptance_goal=acceptance_goal, box_cost=box_cost,
                       max_boxes=max_boxes, compiled=compiled)
        order = sorted(range(2), key=lambda c: fits[c] is None)   # mode charts first
        built = {}
        log_mode = None
        for c, part in zip(order, stages(progress, [1.0, 1.0]), strict=True):
            lat = self.lattices[c]
            exclude = lat.in_inner if isinstance(lat, ComplementLattice) else None
            built[c] = SphereChartSampler(t, y, tau, sigma, lat, fit=fits[c],
                                          log_mode_mass=None if fits[c] is not None
                                          else log_mode, exclude=exclude, progress=part,
                                          **options)
            if log_mode is None:
                log_mode = built[c].log_mode_mass
        self.charts = [built[0], built[1]]

    @staticmethod
    def _unclipped_fit(t, y):
        from ..learning import GeodesicRegression
        from ..manifolds import Sphere

        fit = GeodesicRegression(Sphere(2), covariate_range=(0.0, 1.0)).fit(t, y)
        return np.asarray(fit.footpoint_, dtype=float), np.asarray(fit.shooting_vector_,
                                                                      dtype=float)

    @property
    def acceptance_estimate(self):
        """Estimated acceptance of the combined envelope (data dependent)."""
        return acceptance(self.charts)

    def sample_indices(self, size, rng, progress=None):
        """``size`` exact draws as ``(chart ids, indices)``; returns them and the number of
        proposals; ``progress(have / size)`` after every batch."""
        return draw_from_charts(self.charts, int(size), rng, progress)

    def points(self, ids, index):
        """The released ``(p, v)`` of chart ids and indices (public lattice points)."""
        ids = np.asarray(ids, dtype=np.int64)
        index = np.asarray(index, dtype=np.int64)
        p = np.empty((ids.size, 3))
        v = np.empty((ids.size, 3))
        for c, lat in enumerate(self.lattices):
            rows = np.flatnonzero(ids == c)
            if rows.size:
                p[rows], v[rows] = lat.point(index[rows])
        return p, v

    def sample(self, size, rng, progress=None):
        """``size`` exact draws ``(p, v)`` (lattice points) and the number of proposals."""
        ids, index, tried = self.sample_indices(size, rng, progress)
        p, v = self.points(ids, index)
        return p, v, tried

    def region(self, p, v):
        """Which region (0: A, 1: B, -1: neither) holds ambient points ``(p, v)`` (m, 3) (the
        public partition; used by the tests)."""
        out = np.full(np.asarray(p).shape[0], -1, dtype=np.int64)
        for c, lat in enumerate(self.lattices):
            u, w = lat.chart.from_bundle(p, v)
            z = np.concatenate([u, w], axis=-1)
            ok = np.all(np.isfinite(z), axis=-1)
            ok[ok] = lat.in_support(lat.index_of(z[ok]))
            if c == 1:
                ok &= out != 0          # D_B excludes D_A
            out[ok & (out < 0)] = c
        return out

    def reachable(self, ids, index):
        """Whether each (chart, index) is released with positive probability (module
        docstring, the lattice point itself as the witness)."""
        ids = np.asarray(ids, dtype=np.int64)
        index = np.asarray(index, dtype=np.int64)
        ok = np.zeros(ids.size, dtype=bool)
        for c, chart in enumerate(self.charts):
            rows = np.flatnonzero(ids == c)
            if rows.size:
                ok[rows] = chart.reachable(index[rows])
        return ok

    @property
    def diagnostics(self):
        """Leaves per chart and in total, and the combined estimated acceptance (data
        dependent: keep them private)."""
        boxes = [int(c.lo_idx.shape[0]) for c in self.charts]
        return {"boxes": int(sum(boxes)), "chart_boxes": boxes,
                "modes": [bool(c.has_mode) for c in self.charts],
                "acceptance_estimate": float(self.acceptance_estimate)}
