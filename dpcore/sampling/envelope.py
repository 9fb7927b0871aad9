r"""Exact KNG by rejection from a refined piecewise envelope (DESIGN §12).

The uniform proposal of :mod:`dpcore.sampling.rejection` accepts at rate
:math:`\int_K f/\mathrm{vol}(K)`, which becomes tiny once :math:`n\epsilon` makes the KNG
target concentrate. Where the gradient norm :math:`g` is Lipschitz on the support, a piecewise
envelope fixes that: on a cell :math:`C` whose points lie within :math:`h` of an anchor
:math:`a`, :math:`g \ge g(a) - L h`, hence :math:`f = e^{-g/\sigma} \le
\min(1, e^{-(g(a) - L h)/\sigma})`. Refining the cells where that bound is loose gives an
envelope within a small factor of :math:`f` everywhere that matters; rejection from it is exact.

Cells live in normal coordinates :math:`u \in \mathbb{R}^d` at the centre :math:`m_0` of the
public ball :math:`K = B_r(m_0)` (coordinates in an orthonormal basis of :math:`T_{m_0}M`).
The target in these coordinates has density :math:`f(\exp_{m_0} u)\, J(u)` w.r.t. Lebesgue
measure on the ball :math:`|u| \le r`, with :math:`J` the volume density of the exponential map
(:class:`NormalChart`, which reads it and its bounds from the manifold:
:meth:`~dpcore.manifolds.Manifold.log_volume_density` and
:meth:`~dpcore.manifolds.Manifold.log_volume_density_max`). A cell is an axis-aligned cube of
half-side :math:`s` and centre :math:`c`; its anchor is :math:`a = P(c)`, the projection of
:math:`c` onto the ball. For :math:`u` in the cube and the ball,
:math:`|u - a| \le |u - c| \le s\sqrt d` (projection onto a convex set is non-expansive),
the segment from :math:`a` to :math:`u` stays in the ball, and so

.. math:: d(\exp_{m_0} u, \exp_{m_0} a) \le \mathrm{Lip}(\exp_{m_0}|_{B_r})\, s\sqrt d = h.

By Rauch's comparison theorem, with sectional curvature :math:`K \ge \kappa_l`,
:math:`|d\exp_{m_0}(u)| \le 1` if :math:`\kappa_l \ge 0` and
:math:`\le \sinh(\sqrt{-\kappa_l}\rho)/(\sqrt{-\kappa_l}\rho)` at :math:`|u| = \rho` otherwise.

Lipschitz constant of the Fréchet-mean gradient norm. :math:`G(z) = -\frac1n\sum_i \log_z y_i`
is the gradient of :math:`F(z) = \frac1{2n}\sum_i d(z, y_i)^2`, so its covariant derivative is
the Hessian of :math:`F`. By the Hessian comparison theorem the eigenvalues of
:math:`\mathrm{Hess}\,\tfrac12 d(\cdot, y)^2` at distance :math:`\delta` lie between
:math:`\sqrt{\kappa_h}\delta\cot(\sqrt{\kappa_h}\delta)` and :math:`1` when :math:`\kappa_l \ge 0`,
and up to :math:`\sqrt{-\kappa_l}\delta\coth(\sqrt{-\kappa_l}\delta)` when :math:`\kappa_l < 0`
(the same comparison behind paper 001, Thm 2, whose :math:`h(r, \kappa)` is the lower end).
In :math:`B_r(m_0)` with :math:`r < r^*` every :math:`\delta \le 2r < \pi/(2\sqrt{\kappa_h})`, so
the lower end is positive and :math:`\|\nabla G\| \le L` with :math:`L = 1` (:math:`\kappa_l\ge0`)
or :math:`L = \sqrt{-\kappa_l}\,2r\coth(\sqrt{-\kappa_l}\,2r)`. Along a geodesic in the (convex)
ball, :math:`|g(z) - g(w)| \le |\Gamma G(z) - G(w)| \le L\, d(z, w)`.

The charts, the domains and the Lipschitz constants live in
:mod:`dpcore.sampling._envelope_domains` (re-exported here); this module holds the envelope.

Run time depends on the data (a timing side channel); the output's law does not.
"""

from __future__ import annotations

import math

import numpy as np

from .._progress import report
from ..exceptions import EnvelopeViolation
from ._envelope_domains import (  # noqa: F401  (re-exported)
    BallDomain,
    NormalChart,
    ProductBallDomain,
    frechet_gradient_lipschitz,
    regression_joint_lipschitz,
)
from .floatsafe import IntegerWeights, bernoulli_exp

#: Largest number of cells an envelope may hold (the refinement stops there).
MAX_CELLS = 60_000
#: Halvings of the initial cube side down to the output lattice (spacing 2^-32 of a cube side).
LATTICE_LEVELS = 32
#: Targets the envelope bounds: exp(-g / sigma) and exp(-g^2 / (2 sigma^2)).
PROFILES = ("laplace", "gaussian")


class RefinedEnvelope:
    r"""Piecewise envelope of a target ``exp(phi(g))`` on a public domain, and exact draws
    released on a public lattice.

    The target is :math:`f = e^{\varphi(g)}` with :math:`g \ge 0` Lipschitz on the domain and
    :math:`\varphi` non-increasing: ``profile="laplace"`` gives :math:`\varphi(g) = -g/\sigma`
    (KNG with g the gradient norm; the Riemannian Laplace law with g the distance to its
    centre), ``"gaussian"`` gives :math:`-g^2/(2\sigma^2)` (the Riemannian Gaussian law).

    **The released value is the lattice cell of an exact draw.** The public lattice, in the
    domain's coordinates, is :math:`u_K = -w + \gamma (K + \tfrac12)` for integer vectors
    :math:`K`, with :math:`w` the domain's half-widths and :math:`\gamma = 2 s / 2^{L}`
    (``LATTICE_LEVELS`` halvings of the initial cube side :math:`2s`; all public). The
    mechanism releases ``domain.to_point(u_K)`` for the lattice cell
    :math:`[u_K - \gamma/2, u_K + \gamma/2)^d` holding a draw from the continuous law. That is
    post-processing of the continuous mechanism, so it keeps its ε (or µ) exactly. Every output
    is a fixed float function of an integer vector, and a lattice cell has positive probability
    for one data set exactly when it has for every data set (below), so a data set can emit no
    float its neighbour cannot (DESIGN §12; the float audit in
    ``tests/audit/test_float_safety.py``). At :math:`2^{-32}` of the domain's width the spacing
    is far below any scale the law resolves; :attr:`lattice` states it for the record.

    **Cells are dyadic.** A cell at level :math:`\ell` is a cube of :math:`2^{L-\ell}` lattice
    cells per axis with an integer corner; refinement splits it into :math:`2^d` children that
    partition its lattice cells exactly. A cube is dropped only if, padded by γ, it misses the
    domain, so every lattice cell meeting the domain (as the float ``inside`` test sees it)
    lies in exactly one kept cell.

    **The bound** (module docstring): every point :math:`u` of a lattice cell of a cube of
    half-side :math:`s_\ell` lies within :math:`(s_\ell + \gamma)\sqrt d` of the anchor
    :math:`a` (the cube centre projected onto the domain; γ also pads float rounding), hence
    :math:`g(u) \ge g(a) - L h` with :math:`h = \mathrm{Lip}(\exp)(s_\ell + \gamma)\sqrt d`
    and :math:`f J \le e^{\min(0, \varphi(\max(0, g(a) - Lh)))} \max J`.

    **Sampling** (exact): draw a cube with probability proportional to an integer weight
    :math:`W_i \ge 1` (:class:`~dpcore.sampling.floatsafe.IntegerWeights`), a lattice cell of
    it uniformly (exact integer draws per axis), a point :math:`u` uniformly in that lattice
    cell, and accept with probability :math:`f J(u) / \mathrm{bound}_i \cdot (2^{52} m_i / M)
    / W_i \le 1` (:func:`~dpcore.sampling.floatsafe.bernoulli_exp`: positive for every finite
    target). The proposal density times the acceptance is :math:`f J(u) \cdot` a constant,
    whatever the rounding of the masses :math:`m_i`, so the accepted :math:`u` follows the
    target and its lattice cell is released. Which lattice cells can be emitted depends only
    on public things: the floats :math:`u` a cell can propose and the ``inside`` test; the
    data only change probabilities, never make them zero. A proposal whose acceptance exceeds 1
    by more than ``1e-9`` (a failed premise, e.g. a wrong Lipschitz constant) raises
    :class:`~dpcore.exceptions.EnvelopeViolation`.

    Parameters
    ----------
    chart : NormalChart
    radius : float
    gradient_norm : callable
        Maps points ``(m, *point_shape)`` to ``g >= 0`` ``(m,)``.
    lipschitz : float
        A proven Lipschitz constant of ``g`` on the domain.
    sigma : float
    max_cells : int
    n_terms : int
        Data terms per gradient evaluation (sizes the batches).
    draws : int
        Draws the envelope will serve (the refinement stops once more cells would cost more
        gradient evaluations than the proposals they save).
    domain : BallDomain or ProductBallDomain, optional
        The support in coordinates; default the ball ``radius`` of ``chart`` (``chart`` and
        ``radius`` are unused when a domain is given).
    profile : {"laplace", "gaussian"}
        The target :math:`e^{-g/\sigma}` or :math:`e^{-g^2/(2\sigma^2)}`.
    g_floor : callable, optional
        ``g_floor(centers, half)``: a proven lower bound of ``g`` on each cube (e.g. the
        triangle inequality :math:`d(\eta, z) \ge |u| - d(m_0, \eta)` for a distance
        target), combined with the Lipschitz bound by ``max``. It lets far cubes, whose
        Lipschitz bound is loose, carry a negligible mass without refinement.
    """

    def __init__(self, chart, radius, gradient_norm, lipschitz, sigma, *, max_cells=MAX_CELLS,
                 n_terms=1, draws=1, domain=None, profile="laplace", g_floor=None):
        if profile not in PROFILES:
            raise ValueError(f"`profile` must be one of {PROFILES}, got {profile!r}.")
        self.profile = profile
        self.g_floor = g_floor
        self.domain = BallDomain(chart, radius) if domain is None else domain
        self.g = gradient_norm
        self.lipschitz = float(lipschitz)
        self.sigma = float(sigma)
        self.max_cells = int(max_cells)
        self.exp_lip = self.domain.exp_lip
        self.evaluations = 0
        self.draws = int(draws)
        # Points per gradient call, so that points x data terms stays near 2e6.
        self.chunk = int(max(16, 2_000_000 // max(int(n_terms), 1)))
        d = self.domain.dim
        # Start with a grid of at most ~4^d (and <= max_cells / 4) cubes covering the domain's
        # bounding box (cubes of one side: the longest half-width sets it). All public.
        per_dim = max(1, min(4, int((self.max_cells / 4) ** (1.0 / d))))
        widths = np.asarray(self.domain.half_width, dtype=float)
        s = float(widths.max()) / per_dim
        counts = [max(1, int(np.ceil(w / s - 1e-9))) for w in widths]
        self.origin = -widths
        self.levels = LATTICE_LEVELS
        self.spacing = 2.0 * s / 2.0**LATTICE_LEVELS
        self.root_half = s
        axes = [np.arange(c, dtype=np.int64) << LATTICE_LEVELS for c in counts]
        corners = np.stack(np.meshgrid(*axes, indexing="ij"), -1).reshape(-1, d)
        self._set_cells(corners, np.zeros(corners.shape[0], dtype=np.int64))
        self._refine()

    def log_profile(self, g):
        """:math:`\varphi(g)`, the log target as a function of ``g >= 0`` (non-increasing)."""
        if self.profile == "laplace":
            return -g / self.sigma
        return -0.5 * (g / self.sigma) ** 2

    @property
    def lattice(self):
        """The public output lattice: spacing, origin and coordinates (for the record)."""
        return {"lattice_spacing": float(self.spacing),
                "lattice_origin": self.origin.tolist(), "lattice_levels": int(self.levels),
                "lattice_coordinates": self.domain.coordinates_note}

    # ------------------------------------------------------------------ lattice
    def coordinates(self, index):
        """Lattice points ``u_K = origin + spacing (K + 1/2)`` for integer ``K`` ``(m, d)``."""
        return self.origin + self.spacing * (np.asarray(index, dtype=np.int64) + 0.5)

    def point(self, index):
        """The released float points of lattice indices ``(m, d)``: a fixed public function."""
        return self.domain.to_point(self.coordinates(index))

    def _geometry(self, corners, level):
        side = np.left_shift(np.int64(1), (self.levels - level).astype(np.int64))
        centers = self.origin + self.spacing * (corners + side[:, None] / 2.0)
        half = self.spacing * side / 2.0
        return centers, half

    # ------------------------------------------------------------------ construction
    def _set_cells(self, corners, level):
        d = self.domain.dim
        centers, half = self._geometry(corners, level)
        # Conservative: pad by one lattice spacing so that no cube holding a lattice point
        # the float `inside` test accepts is dropped.
        keep = ~self.domain.misses(centers, half + self.spacing)
        corners, level, centers, half = corners[keep], level[keep], centers[keep], half[keep]
        # Anchors: the cube centres projected onto the (convex) domain; every lattice point of
        # the cube is within (s + gamma) sqrt(d) of the anchor (gamma pads its rounding).
        anchors = self.domain.project(centers)
        h = self.exp_lip * (half + self.spacing) * math.sqrt(d)
        g = np.concatenate([
            np.asarray(self.g(self.domain.to_point(anchors[i:i + self.chunk])), dtype=float)
            for i in range(0, anchors.shape[0], self.chunk)]) if anchors.shape[0] else (
            np.zeros(0))
        self.evaluations += anchors.shape[0]
        log_j_max, log_j_low = self.domain.log_jacobian_bounds(centers, half + self.spacing)
        self.corners, self.level = corners, level
        self.centers, self.half, self.h = centers, half, h
        g_low = np.maximum(0.0, g - self.lipschitz * h)
        if self.g_floor is not None and centers.shape[0]:
            g_low = np.maximum(g_low, np.asarray(self.g_floor(centers, half + self.spacing),
                                                 dtype=float))
        self.log_bound = np.minimum(0.0, self.log_profile(g_low)) + log_j_max
        # A lower bound of the target on the cell, used only to decide where to refine.
        self.log_low = self.log_profile(g + self.lipschitz * h) + log_j_low
        self.log_volume = d * np.log(2 * half)

    _FIELDS = ("corners", "level", "centers", "half", "h", "log_bound", "log_low", "log_volume")

    def _refine(self):
        d = self.domain.dim
        children = 2**d
        offsets = np.stack(np.meshgrid(*([[0, 1]] * d), indexing="ij"), -1).reshape(-1, d)
        while True:
            mass = np.exp(self.log_bound + self.log_volume - self.log_bound.max())
            low = np.exp(np.minimum(self.log_low, self.log_bound) + self.log_volume
                         - self.log_bound.max())
            excess = mass - low
            excess[self.level >= self.levels] = 0.0  # lattice cells cannot be split
            total, total_excess = mass.sum(), excess.sum()
            room = (self.max_cells - self.centers.shape[0]) // (children - 1)
            # Stop once the envelope is provably within a factor 4 of the target in total
            # (acceptance >= 1/4; in practice higher, the lower bounds are loose).
            # Also stop when more cells would cost more gradient evaluations than the proposals
            # they save: expected proposals are at most draws x total / lower mass.
            low_total = max(total - total_excess, 1e-300)
            if (total - total_excess >= 0.25 * total or room < 1 or total_excess <= 0
                    or 4.0 * self.draws * total < self.centers.shape[0] * low_total):
                break
            order = np.argsort(excess)[::-1]
            cum = np.cumsum(excess[order])
            # Split the loosest cells holding half the excess, as many as there is room for.
            k = int(min(room, max(1, np.searchsorted(cum, 0.5 * total_excess) + 1)))
            split = order[:k]
            rest = np.ones(self.centers.shape[0], dtype=bool)
            rest[split] = False
            old = {f: getattr(self, f)[rest] for f in self._FIELDS}
            child_level = self.level[split] + 1
            step = np.left_shift(np.int64(1), (self.levels - child_level).astype(np.int64))
            new_corners = (self.corners[split][:, None, :]
                           + offsets[None] * step[:, None, None]).reshape(-1, d)
            self._set_cells(new_corners, np.repeat(child_level, children))
            for f in self._FIELDS:
                setattr(self, f, np.concatenate([old[f], getattr(self, f)]))

    def acceptance_lower_bound(self):
        """Proven lower bound on the acceptance rate (lower over upper envelope mass)."""
        low = np.exp(np.minimum(self.log_low, self.log_bound) + self.log_volume)
        return float(low.sum() / np.exp(self.log_bound + self.log_volume).sum())

    # ------------------------------------------------------------------ reachability
    def cell_of(self, index):
        """The kept cell holding each lattice index ``(m, d)`` (-1 where none does)."""
        index = np.asarray(index, dtype=np.int64)
        out = np.full(index.shape[0], -1, dtype=np.int64)
        for lev in np.unique(self.level):
            mine = np.flatnonzero(self.level == lev)
            shift = int(self.levels - lev)
            table = {tuple(c): i for c, i in zip((self.corners[mine] >> shift).tolist(), mine,
                                                   strict=True)}
            keys = (index >> shift).tolist()
            for j, key in enumerate(keys):
                hit = table.get(tuple(key))
                if hit is not None:
                    out[j] = hit
        return out

    def log_acceptance(self, u, cells, weights):
        """Log acceptance probability of coordinates ``u`` ``(m, d)`` proposed from ``cells``."""
        z = self.domain.to_point(u)
        g = np.asarray(self.g(z), dtype=float)
        log_t = self.log_profile(g) + self.domain.log_jacobian(u)
        return log_t - self.log_bound[cells] + weights.log_ratio(cells)

    def reachable(self, index):
        """Whether this envelope's sampler emits each lattice index with positive probability.

        Decided from the sampler's own structure, with the lattice point :math:`u_K` as the
        witness: it is a float the sampler proposes in cell ``K`` (the in-cell offset
        ``spacing * (U - 1/2)`` is exactly 0 at ``U = 1/2``), so ``K`` is emitted with positive
        probability if it lies in a kept cube (integer weight >= 1, lattice cells drawn
        uniformly), :math:`u_K` is inside the domain and its log acceptance is finite
        (:func:`~dpcore.sampling.floatsafe.bernoulli_exp` accepts every finite one with
        positive probability). False does not prove the converse (another float of the cell
        might be inside), but the audit only needs the positive direction.
        """
        index = np.asarray(index, dtype=np.int64)
        cells = self.cell_of(index)
        u = self.coordinates(index)
        ok = (cells >= 0) & self.domain.inside(u)
        if np.any(ok):
            weights = IntegerWeights(self.log_bound + self.log_volume)
            ok[ok] = np.isfinite(self.log_acceptance(u[ok], cells[ok], weights))
        return ok

    # ------------------------------------------------------------------ sampling
    def sample_indices(self, size, rng, *, n_terms=1, progress=None):
        """``size`` exact draws as lattice indices; returns ``(indices, proposals)``.

        ``progress(fraction)``, if given, is called after every batch of proposals with the
        accepted share of the ``size`` draws (:mod:`dpcore._progress`; it may raise to cancel).

        Raises
        ------
        EnvelopeViolation
            If a proposal's acceptance exceeds 1 by more than ``1e-9``.
        """
        d = self.domain.dim
        weights = IntegerWeights(self.log_bound + self.log_volume)
        side = np.left_shift(np.int64(1), (self.levels - self.level).astype(np.int64))
        out, have, tried = [], 0, 0
        batch = int(max(64, min(200_000, 2_000_000 // max(int(n_terms), 1), 4 * size)))
        while have < size:
            cells = weights.draw(batch, rng)
            index = self.corners[cells] + rng.integers(0, side[cells][:, None], size=(batch, d),
                                                       dtype=np.int64)
            # A uniform point of the lattice cell (U = 1/2 gives the lattice point itself).
            u = self.coordinates(index) + self.spacing * (rng.random((batch, d)) - 0.5)
            inside = self.domain.inside(u)
            x = np.full(batch, np.inf)
            if np.any(inside):
                log_acc = self.log_acceptance(u[inside], cells[inside], weights)
                worst = float(np.max(log_acc))
                if worst > 1e-9:
                    raise EnvelopeViolation(
                        f"The refined envelope is below the target by a factor e^{worst:.3g} "
                        "at a proposal: its Lipschitz bound does not hold here, so the draws "
                        "would not be exact. Nothing was released.")
                x[inside] = -np.minimum(log_acc, 0.0)
            ok = bernoulli_exp(x, rng)
            hits = np.flatnonzero(ok)[: size - have]
            tried += batch if hits.size < size - have else int(hits[-1]) + 1
            if hits.size:
                out.append(index[hits])
                have += hits.size
            report(progress, have / size)
        return np.concatenate(out)[:size], tried

    def sample(self, size, rng, *, n_terms=1, progress=None):
        """``size`` exact draws; returns ``(points, proposals)`` (the draws' lattice points)."""
        index, tried = self.sample_indices(size, rng, n_terms=n_terms, progress=progress)
        return self.point(index), tried


def predict_refined_cost(chart, radius, lipschitz, sigma, draws=1):
    """Public prediction of the refined sampler's cost (no data involved).

    Builds the envelope for the model target ``g(z) = d(z, m0)`` (a cone of slope 1 at the
    ball's centre: the Fréchet gradient grows at least that fast away from the mean, by the
    Hessian comparison, up to the factor h(r, kappa) of paper 001) and returns its number of
    cells and the proposals per draw it implies. The data's own envelope differs (its cost is
    data dependent, a timing side channel); this only says before sampling whether the request
    is within reach.

    Returns
    -------
    (cells, proposals_per_draw) : tuple of float
    """
    man, center = chart.manifold, chart.center

    def cone(z):
        return np.asarray(man.dist(z, center), dtype=float)

    env = RefinedEnvelope(chart, radius, cone, lipschitz, sigma, draws=draws)
    return float(env.centers.shape[0]), 1.0 / max(env.acceptance_lower_bound(), 1e-300)


def refined_worst_case(dim, radius, exp_lip, lipschitz, sigma, max_cells=MAX_CELLS):
    """Public bound on the refined sampler's cost, whatever the data.

    With ``max_cells`` cells the refinement can at worst end as a uniform grid of
    ``max_cells^(1/d)`` cubes per axis, of half-side ``s = r / that``; each cube's bound then
    exceeds the target by at most ``exp(2 L h / sigma)``, ``h = Lip(exp) s sqrt(d)``, up to the
    Jacobian's spread and the cubes' parts outside the ball (a factor 4 allowance).

    Returns
    -------
    (cells, proposals_per_draw) : tuple of float
    """
    per_dim = max(1, int(max_cells ** (1.0 / dim)))
    h = exp_lip * (radius / per_dim) * math.sqrt(dim)
    return float(per_dim**dim), 4.0 * math.exp(min(2.0 * lipschitz * h / sigma, 700.0))


__all__ = ["LATTICE_LEVELS", "MAX_CELLS", "PROFILES", "BallDomain", "NormalChart",
           "ProductBallDomain", "RefinedEnvelope", "frechet_gradient_lipschitz",
           "regression_joint_lipschitz",
           "predict_refined_cost", "refined_worst_case"]
