r"""The asymptotic law of the strict geodesic-regression mechanisms of a budget split, with a
check of each law against its exact target (DESIGN §8, §12). A **prediction**, never a release.

**The problem.** :class:`StrictProblem` holds a strict release's inputs after the release's own
preprocessing (:func:`~dpcore.release.private_geodesic_regression`): covariates clipped and
rescaled, responses projected onto the public ball where needed, the sensitivities, the
supports (footpoint region, speed bound) and the non-private fit.

**The sequential law.** In the normal coordinates :math:`\delta = (a, b)` of the tangent
bundle about the zero :math:`z^*` of the clipped gradient
(:class:`~dpcore.release.asymptotic.BundleChart`, the chart of
:class:`~dpcore.release.asymptotic.AsymptoticKNG`), :math:`G(\delta) \approx H\delta` with
:math:`H` the Hessian of :math:`E_\tau` (blocks :math:`H_{pp}, H_{pv}, H_{vp}, H_{vv}`). The
footpoint stage (budget :math:`\epsilon_p`) fixes :math:`v` at the fit's vector, coordinates
:math:`b_0`; its gradient is :math:`H_{pp}a + H_{pv}b_0`, so :math:`a = a_0 + H_{pp}^{-1}w`
with :math:`a_0 = -H_{pp}^{-1}H_{pv}b_0` and :math:`w \propto e^{-|w|/\sigma_p}` on
:math:`\mathbb R^d`. At the drawn footpoint the vector stage's gradient (budget
:math:`\epsilon_v`) is :math:`H_{vp}a + H_{vv}b` (the chart is an isometry of each fibre), so
:math:`b = H_{vv}^{-1}(w' - H_{vp}a)`, :math:`w' \propto e^{-|w'|/\sigma_v}`. Each stage's law
is restricted to its support, as the mechanism restricts its target (the footpoint region by
redrawing; the speed ball, exact in these coordinates, by :func:`ball_truncated_knorm`). The
joint law (one ε over (p, v)) is :class:`~dpcore.release.asymptotic.AsymptoticKNG`'s,
restricted to the support likewise.

**The check.** :meth:`BudgetLaws.distance` estimates the total variation distance between a
stage's law and its exact target at the basin's centre, by self-normalized importance
sampling from a defensive mixture: :data:`CHECK_DRAWS` draws, a share
:data:`UNIFORM_SHARE` of them uniform on the stage's support (so mass the law misses, a far
mode or a flat tail where the clipped gradient saturates, is seen) and the rest from the law.
A law more than :data:`MAX_DISTANCE` from its target is not trusted: the cell is *flagged*
(shown, never recommended). Narrow far modes that no uniform draw hits are not seen; the
vector stage is checked at the basin's footpoint only.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
from scipy.special import gammaln, logsumexp

from ..exceptions import LawOutsideSupport
from ..learning import GeodesicRegression
from ..learning.regression import regression_gradient
from ..mechanisms.base import Ball
from ..release._common import project_to_ball
from ..release.asymptotic import AsymptoticKNG, joint_sigma
from ..release.asymptotic import _Law as KNormLaw
from ..sampling.radial import log_euclidean_ball_volume
from ..sensitivity import default_max_speed, geodesic_regression_sensitivity
from .metrics import geodesic_predictions

__all__ = [
    "CHECK_DRAWS",
    "MAX_DISTANCE",
    "MIN_DIRECTIONS",
    "UNIFORM_SHARE",
    "BudgetLaws",
    "LawOutsideSupport",
    "StrictProblem",
    "TangentBall",
    "ball_truncated_knorm",
]

#: Draws per stage and budget of the law's check.
CHECK_DRAWS = 1000
#: Share of the check's draws that are uniform on the support.
UNIFORM_SHARE = 0.3
#: Largest estimated total variation distance between the law and the exact target.
MAX_DISTANCE = 0.1
#: Rounds of redrawing the law's draws that fall outside the footpoint support.
_MAX_ROUNDS = 200
#: Fewest effective candidate directions of the polar sampler of a restricted law.
MIN_DIRECTIONS = 20
#: Speed bound of the search for the zero of the clipped gradient (none in effect).
_UNBOUNDED = 1e6


@dataclass
class StrictProblem:
    """A strict release's inputs after the release's own preprocessing (as
    :func:`~dpcore.release.private_geodesic_regression` does it in strict mode): covariates
    clipped to the public range and rescaled to [0, 1], responses projected onto the public
    ball where the manifold needs one, the sensitivities, the supports and the non-private fit
    that the sequential footpoint stage evaluates its gradient at.

    Attributes
    ----------
    manifold, t, y, y_raw, tau, tau_m, delta_p, delta_v, foot_ball, max_speed, p_hat, v_hat,
    v_start
    """

    manifold: object
    t: np.ndarray
    y: np.ndarray
    y_raw: np.ndarray
    tau: float
    tau_m: float | None
    delta_p: float
    delta_v: float
    foot_ball: Ball | None
    max_speed: float
    p_hat: np.ndarray
    v_hat: np.ndarray
    v_start: np.ndarray

    @classmethod
    def make(cls, m, x, y, *, tau, covariate_range, tau_m=None, center=None, max_speed=None,
             footpoint_radius=None):
        """The problem of a strict release of ``(x, y)`` with these public bounds."""
        from ..data.synthetic import default_center

        lo, hi = (float(c) for c in covariate_range)
        t = (np.clip(np.asarray(x, dtype=float), lo, hi) - lo) / (hi - lo)
        y_raw = np.asarray(y, dtype=float)
        kappa_low = m.curvature_bounds[0]
        needs_ball = kappa_low < 0 or not m.is_compact
        if center is None and (needs_ball or footpoint_radius is not None):
            center = default_center(m)
        y = project_to_ball(m, y_raw, center, tau_m) if needs_ball else y_raw
        delta_p, delta_v = geodesic_regression_sensitivity(
            y.shape[0], float(tau), kappa_low, tau_m if kappa_low < 0 else None)
        if max_speed is None:
            max_speed = default_max_speed(m, tau_m, tau)
        foot = None
        if needs_ball:
            foot = Ball.make(m, center, tau_m + tau)
        if footpoint_radius is not None:
            foot = Ball.make(m, center, float(footpoint_radius))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            fit = GeodesicRegression(m, covariate_range=(0.0, 1.0), tol=1e-8).fit(t, y)
        p_hat, v_hat = fit.footpoint_, fit.shooting_vector_
        speed = float(m.norm(p_hat, v_hat))
        v_start = v_hat if speed <= max_speed else v_hat * (0.999 * max_speed / speed)
        return cls(m, t, y, y_raw, float(tau), tau_m, float(delta_p), float(delta_v), foot,
                   float(max_speed), p_hat, v_hat, v_start)

    @property
    def n(self):
        return int(self.t.size)

    def sigmas(self, eps_p, eps_v):
        """The strict sequential scales :math:`\\sigma = 2\\Delta/\\epsilon` of both stages."""
        return 2.0 * self.delta_p / float(eps_p), 2.0 * self.delta_v / float(eps_v)

    def footpoint_gradient_norm(self, p):
        """The footpoint stage's :math:`\\|\\nabla_p E_\\tau(p, \\Gamma_{\\hat p \\to p}
        v)\\|` at a batch of footpoints (the release's target, :mod:`dpcore.mechanisms.kng`)."""
        m = self.manifold
        v = m.transport(self.p_hat, p, self.v_start)
        g, _ = regression_gradient(m, p, v, self.t, self.y, tau=self.tau, which="footpoint")
        return np.asarray(m.norm(p, g), dtype=float)

    def vector_gradient_norm(self, p, v):
        """The vector stage's :math:`\\|\\nabla_v E_\\tau(p, v)\\|` at a batch ``(p, v)``."""
        m = self.manifold
        _, g = regression_gradient(m, p, v, self.t, self.y, tau=self.tau, which="vector")
        return np.asarray(m.norm(p, g), dtype=float)

    def mse(self, footpoints, vectors):
        """Per-geodesic MSE on the unprojected data (as :func:`~dpcore.experiments.
        release_mse`), shape ``(m, r)``."""
        m = self.manifold
        pred = geodesic_predictions(m, footpoints, vectors, self.t)
        target = np.broadcast_to(self.y_raw, pred.shape)
        ps = tuple(m.point_shape)
        sq = np.asarray(m.squared_dist(pred.reshape((-1, *ps)), target.reshape((-1, *ps))))
        return sq.reshape(pred.shape[:3]).mean(axis=-1)


class TangentBall:
    """Uniform proposals ``|c| <= radius`` in orthonormal coordinates of one tangent space."""

    def __init__(self, dim, radius):
        self.dim, self.radius = int(dim), float(radius)

    def sample(self, k, rng):
        xi = rng.standard_normal((k, self.dim))
        xi /= np.linalg.norm(xi, axis=1, keepdims=True)
        return xi * (self.radius * rng.random(k) ** (1.0 / self.dim))[:, None]



def _truncated(draw, inside, size):
    """``size`` draws of ``draw(k)`` (rows) with ``inside(rows)`` True: the law restricted to
    the support, by redrawing."""
    out, have = [], 0
    for _ in range(_MAX_ROUNDS):
        z = draw(max(2 * (size - have), 8))
        z = z[inside(z)]
        out.append(z)
        have += z.shape[0]
        if have >= size:
            return np.concatenate(out)[:size]
    raise LawOutsideSupport("footpoint stage")


def _log_gamma_survival(k, x):
    """Log of the upper regularized incomplete gamma function of integer ``k`` at ``x >= 0``
    (``e^{-x} sum_{j<k} x^j/j!``: stable far in the tail), elementwise."""
    x = np.asarray(x, dtype=float)
    with np.errstate(divide="ignore"):
        log_x = np.log(x)
    terms = np.stack([np.zeros_like(x)] + [j * log_x - gammaln(j + 1.0)
                                           for j in range(1, int(k))])
    top = terms.max(axis=0)
    return -x + top + np.log(np.exp(terms - top).sum(axis=0))


def ball_truncated_knorm(a_matrix, sigma, centres, radius, gen, *, directions=256,
                         bisections=60):
    r"""Draws :math:`c = c_0 + A w`, :math:`w \propto e^{-|w|/\sigma}` on :math:`\mathbb R^k`,
    restricted to the ball :math:`|c| \le` ``radius``, one per row ``c_0`` of ``centres``.

    Rejection from the unrestricted law first (exact); a row still outside after a few rounds
    (the law's centre lies outside the ball or near its edge, so little of its mass is inside)
    is drawn in polar form :math:`w = r u`: along a direction :math:`u` the restriction is an
    interval :math:`[r_1, r_2]` of :math:`r \sim \mathrm{Gamma}(k, \sigma)`, so ``directions``
    candidates are resampled by their interval's Gamma mass (sampling importance resampling:
    exact as ``directions`` grows; candidates concentrate about the heaviest direction while
    the weights are too uneven, :func:`_directions`) and :math:`r` is drawn from the Gamma law
    on the chosen interval by bisection of its survival function.

    Returns
    -------
    ndarray, shape ``centres.shape``

    Raises
    ------
    LawOutsideSupport
        When, after the candidates have concentrated about the heaviest direction, fewer than
        :data:`MIN_DIRECTIONS` of them still carry a row's mass (effective number of the
        resampling weights), or none meets the ball at all.
    """
    centres = np.asarray(centres, dtype=float)
    a_matrix = np.asarray(a_matrix, dtype=float)
    m, k = centres.shape
    out = np.empty_like(centres)
    todo = np.arange(m)
    for _ in range(4):
        r = gen.gamma(k, sigma, size=todo.size)
        u = gen.standard_normal((todo.size, k))
        c = centres[todo] + (r[:, None] * (u / np.linalg.norm(u, axis=1, keepdims=True))) \
            @ a_matrix.T
        ok = np.linalg.norm(c, axis=1) <= radius
        out[todo[ok]] = c[ok]
        todo = todo[~ok]
        if todo.size == 0:
            return out
    # polar form: candidate directions resampled by the law's mass along them, in blocks
    for start in range(0, todo.size, _BLOCK):
        rows = todo[start:start + _BLOCK]
        s_dir, lo, hi = _directions(centres[rows], a_matrix, sigma, radius, directions, gen)
        s_lo, s_hi = _log_gamma_survival(k, lo), _log_gamma_survival(k, hi)
        # S(r) = S(lo) - U (S(lo) - S(hi)), by bisection on [lo, hi]
        target = s_lo + np.log1p(gen.random(rows.size) * np.expm1(np.minimum(s_hi - s_lo,
                                                                             0.0)))
        for _ in range(bisections):
            mid = 0.5 * (lo + hi)
            above = _log_gamma_survival(k, mid) > target
            lo, hi = np.where(above, mid, lo), np.where(above, hi, mid)
        out[rows] = centres[rows] + (0.5 * (lo + hi) * sigma)[:, None] * s_dir
    return out


#: Rows of the polar sampler handled at once (memory: rows x directions x k).
_BLOCK = 1024


def _directions(c0, a_matrix, sigma, radius, count, gen, rounds=10):
    """For each row ``c0`` (shape ``(m, k)``) one direction ``s = A u`` drawn by sampling
    importance resampling of candidate directions ``u`` (weights: the law's Gamma mass along
    the ray ``c0 + r sigma s`` inside the ball, over the candidates' density), and the
    interval ``[r1, r2]`` (units of sigma) of that ray inside the ball.

    The first round is uniform on the sphere of directions; a row whose weights' effective
    number is below :data:`MIN_DIRECTIONS` draws its next round half in a cap about its
    heaviest direction, four times narrower each round (the other half stays uniform, so the
    weights stay valid wherever the mass is)."""
    m, k = c0.shape
    grid = np.linspace(0.0, math.pi, 8193)
    dens = np.sin(grid) ** (k - 2) if k > 2 else np.ones_like(grid)
    cdf = np.concatenate([[0.0], np.cumsum(0.5 * (dens[1:] + dens[:-1]) * np.diff(grid))])
    out_s, out_lo, out_hi = np.empty((m, k)), np.empty(m), np.empty(m)
    todo = np.arange(m)
    mu, width = None, np.full(m, math.pi)
    for _ in range(rounds):
        u = gen.standard_normal((todo.size, count, k))
        u /= np.linalg.norm(u, axis=2, keepdims=True)
        rel = np.ones((todo.size, count))  # candidates' density relative to the uniform one
        if mu is not None:
            half = count // 2
            w = width[todo]
            theta, share = _cap_angles(w, half, k, grid, cdf, gen)
            xi = gen.standard_normal((todo.size, half, k))
            xi -= np.einsum("rc,rk->rck", np.einsum("rck,rk->rc", xi, mu[todo]), mu[todo])
            xi /= np.linalg.norm(xi, axis=2, keepdims=True)
            u[:, :half] = (np.cos(theta)[..., None] * mu[todo][:, None]
                           + np.sin(theta)[..., None] * xi)
            inside = np.einsum("rck,rk->rc", u, mu[todo]) >= np.cos(w)[:, None] - 1e-12
            rel = 0.5 + 0.5 * inside / share[:, None]
        s = u @ a_matrix.T
        c = c0[todo][:, None, :]
        aa, bb = np.sum(s * s, 2), np.sum(s * c, 2)
        disc = bb * bb - aa * (np.sum(c * c, 2) - radius**2)
        root = np.sqrt(np.maximum(disc, 0.0))
        r1 = np.maximum((-bb - root) / aa, 0.0) / sigma
        r2 = (-bb + root) / aa / sigma
        hit = (disc > 0) & (r2 > r1)
        if mu is None and not np.all(hit.any(axis=1)):
            raise LawOutsideSupport("vector stage")
        log1 = _log_gamma_survival(k, np.where(hit, r1, 0.0))
        log2 = _log_gamma_survival(k, np.where(hit, r2, 1.0))
        with np.errstate(divide="ignore", invalid="ignore"):
            log_w = np.where(hit, log1 + np.log(-np.expm1(np.minimum(log2 - log1, 0.0))),
                             -np.inf) - np.log(rel)
            prob = np.exp(log_w - log_w.max(axis=1, keepdims=True))
            ess = prob.sum(axis=1) ** 2 / np.sum(prob**2, axis=1)
        done = np.isfinite(ess) & (ess >= MIN_DIRECTIONS)
        if done.any():
            p = prob[done] / prob[done].sum(axis=1, keepdims=True)
            pick = (np.cumsum(p, axis=1) < gen.random(int(done.sum()))[:, None]).sum(axis=1)
            pick = np.minimum(pick, count - 1)
            sel = np.arange(int(done.sum()))
            rows = todo[done]
            out_s[rows] = s[done][sel, pick]
            out_lo[rows], out_hi[rows] = r1[done][sel, pick], r2[done][sel, pick]
        best = u[np.arange(todo.size), np.argmax(np.where(np.isfinite(prob), prob, -1.0),
                                                 axis=1)]
        if mu is None:
            mu = np.zeros((m, k))
        mu[todo] = best
        width[todo] = np.where(width[todo] < math.pi, width[todo] / 4.0,
                               _first_width(k, count))
        todo = todo[~done]
        if todo.size == 0:
            return out_s, out_lo, out_hi
    raise LawOutsideSupport("vector stage")


def _first_width(k, count):
    """A cap about as wide as the spacing of ``count`` uniform directions, times four."""
    return min(math.pi / 2, 4.0 * (2.0 * math.pi / count) ** (1.0 / max(k - 1, 1)))


def _cap_angles(width, count, k, grid, cdf, gen):
    """Polar angles of ``count`` directions uniform in caps of angular radius ``width`` (one
    per row) on the unit sphere of R^k (density ``sin^(k-2)``), and each cap's share of the
    sphere."""
    in_cap = np.interp(width, grid, cdf)
    small = width < 8 * grid[1]  # below the grid's resolution: the small-angle form
    uu = gen.random((width.size, count))
    theta = np.where(small[:, None], width[:, None] * uu ** (1.0 / (k - 1)), 0.0)
    share = np.where(small, width ** (k - 1) / (k - 1) / cdf[-1], in_cap / cdf[-1])
    for i in np.flatnonzero(~small):
        theta[i] = np.interp(uu[i] * in_cap[i], cdf, grid)
    return theta, share


class BudgetLaws:
    """The sequential and joint asymptotic laws of one data set, with their checks."""

    def __init__(self, problem):
        self.problem = pr = problem
        m = pr.manifold
        # The zero of the clipped gradient, searched without the supports (they restrict the
        # law's draws instead: a fit just beyond the speed bound still has its law, truncated).
        self.kng = AsymptoticKNG(
            m, pr.t, pr.y, pr.p_hat, pr.v_hat, tau=pr.tau, max_speed=_UNBOUNDED,
            sigma_n_eps=joint_sigma(m, pr.n, 1.0, pr.tau, pr.tau_m) * pr.n)
        self.valid = self.kng.valid
        self.reason = self.kng.reason
        d = self.d = m.dim
        if not self.valid:
            return
        h = self.kng.hessian
        self.h_pv, self.h_vp = h[:d, d:], h[d:, :d]
        self.law_p, self.law_v = KNormLaw(np.linalg.inv(h[:d, :d])), KNormLaw(
            np.linalg.inv(h[d:, d:]))
        chart, (p0, v0) = self.kng.chart, self.kng.center
        w = m.transport(pr.p_hat, p0, pr.v_start)
        b0 = (chart.coordinates(p0[None], w[None]) - chart.coordinates(p0[None], v0[None]))[0]
        self.a0 = -self.law_p.a @ (self.h_pv @ b0)

    # ---------------------------------------------------------------- draws
    def _foot_inside(self, a):
        """Whether footpoint coordinates ``a`` lie in the footpoint support."""
        pr = self.problem
        if pr.foot_ball is None:
            return np.ones(a.shape[0], dtype=bool)
        p, _ = self.kng.chart.to_bundle(np.concatenate([a, np.zeros_like(a)], axis=1))
        return np.asarray(pr.foot_ball.contains(pr.manifold, p), dtype=bool)

    def _inside(self, delta):
        """Whether bundle coordinates ``delta`` lie in the support (footpoint region and
        speed bound)."""
        pr = self.problem
        p, v = self.kng.chart.to_bundle(delta)
        ok = np.asarray(pr.manifold.norm(p, v)) <= pr.max_speed
        if pr.foot_ball is not None:
            ok &= np.asarray(pr.foot_ball.contains(pr.manifold, p), dtype=bool)
        return ok

    def sequential(self, eps_p, eps_v, n_footpoints, n_vectors, gen):
        """Footpoints ``(m, *ps)`` and vectors ``(m, r, *ps)`` of the sequential law, each
        stage's law restricted to its support (the footpoint region, the speed bound), as the
        mechanism restricts its target."""
        pr = self.problem
        s_p, s_v = pr.sigmas(eps_p, eps_v)
        a = _truncated(lambda k: self.a0 + self.law_p.sample(s_p, k, gen), self._foot_inside,
                       n_footpoints)
        a = np.repeat(a, n_vectors, axis=0)
        # b = b*(a) + H_vv^{-1} w' restricted to the speed ball |c(v*) + b| <= V (the chart
        # is an isometry of each fibre, so the ball is exact in these coordinates).
        p0, v0 = self.kng.center
        centre = (self.kng.chart.coordinates(p0[None], v0[None])[0]
                  - a @ (self.law_v.a @ self.h_vp).T)
        b = ball_truncated_knorm(self.law_v.a, s_v, centre, pr.max_speed, gen) \
            - self.kng.chart.coordinates(p0[None], v0[None])[0]
        p, v = self.kng.chart.to_bundle(np.concatenate([a, b], axis=1))
        shape = (n_footpoints, n_vectors, *pr.manifold.point_shape)
        return p.reshape(shape)[:, 0], v.reshape(shape)

    def joint(self, total, draws, gen):
        """Footpoints ``(k, *ps)`` and vectors ``(k, 1, *ps)`` of the joint law, restricted
        to the support."""
        sigma = self.kng.sigma(self.problem.n * float(total))
        delta = _truncated(lambda k: self.kng.law.sample(sigma, k, gen), self._inside, draws)
        p, v = self.kng.chart.to_bundle(delta)
        return p, v[:, None]

    # ---------------------------------------------------------------- checks
    def _cover_radius(self):
        """Radius about the basin's footpoint of a chart ball holding the footpoint support."""
        pr, m = self.problem, self.problem.manifold
        inj = float(m.injectivity_radius)
        if pr.foot_ball is None:
            return inj
        gap = float(m.dist(self.kng.center[0], pr.foot_ball.center))
        return min(gap + float(pr.foot_ball.radius), inj)

    def _proposals(self, stage, law, shift, sigma, gen):
        """Chart coordinates from the defensive mixture ``(1 - u) law + u uniform``
        (:data:`UNIFORM_SHARE`), with the log densities of the law and of the mixture."""
        d, k = self.d, CHECK_DRAWS
        n_law = k - int(UNIFORM_SHARE * k)
        blocks, log_u = [], 0.0
        if stage in ("p", "joint"):
            radius = self._cover_radius()
            blocks.append(TangentBall(d, radius).sample(k - n_law, gen))
            log_u -= log_euclidean_ball_volume(d, radius)
        if stage in ("v", "joint"):
            c = TangentBall(d, self.problem.max_speed).sample(k - n_law, gen)
            p0, v0 = self.kng.center
            blocks.append(c - self.kng.chart.coordinates(p0[None], v0[None])[0])
            log_u -= log_euclidean_ball_volume(d, self.problem.max_speed)
        delta = np.concatenate([shift + law.sample(sigma, n_law, gen),
                                np.concatenate(blocks, axis=1)])
        log_q = law.log_density(delta - shift, sigma)
        log_r = np.logaddexp(math.log1p(-UNIFORM_SHARE) + log_q,
                             math.log(UNIFORM_SHARE) + log_u)
        return delta, log_q, log_r

    def _log_target(self, stage, full, sigma):
        """Log stage density (times the chart's volume) at chart coordinates ``full``
        (``-inf`` outside the support)."""
        pr, m, chart = self.problem, self.problem.manifold, self.kng.chart
        p, v = chart.to_bundle(full)
        with np.errstate(all="ignore"):
            if stage == "p":
                g = pr.footpoint_gradient_norm(p)
            elif stage == "v":
                g = pr.vector_gradient_norm(p, v)
            else:
                g = np.hypot(*(np.asarray(m.norm(p, x)) for x in regression_gradient(
                    m, p, v, pr.t, pr.y, tau=pr.tau)))
            log_j = chart.log_volume(full) if stage != "v" else 0.0
            logf = -g / sigma + log_j
            inside = np.linalg.norm(full[:, :self.d], axis=1) < float(m.injectivity_radius)
            if stage != "v" and pr.foot_ball is not None:
                inside &= np.asarray(pr.foot_ball.contains(m, p), dtype=bool)
            if stage != "p":
                inside &= np.asarray(m.norm(p, v)) <= pr.max_speed
        return np.where(inside & np.isfinite(logf), logf, -np.inf)

    def distance(self, stage, sigma, gen):
        """Estimated total variation distance between a stage's law (restricted to the
        support) and its exact target (module docstring), at the basin's centre."""
        d = self.d
        law, shift, embed = {
            "p": (self.law_p, self.a0, lambda x: np.concatenate([x, np.zeros_like(x)], 1)),
            "v": (self.law_v, np.zeros(d), lambda x: np.concatenate([np.zeros_like(x), x], 1)),
            "joint": (self.kng.law, np.zeros(2 * d), lambda x: x)}[stage]
        delta, log_q, log_r = self._proposals(stage, law, shift, sigma, gen)
        log_f = self._log_target(stage, embed(delta), sigma)
        if not np.any(np.isfinite(log_f)):
            return 1.0
        log_q = np.where(np.isfinite(log_f), log_q, -np.inf)  # the law on the support
        pi = np.exp(log_f - log_r - logsumexp(log_f - log_r))
        q = np.exp(log_q - log_r - logsumexp(log_q - log_r))
        return float(0.5 * np.abs(pi - q).sum())

    def check(self, stage, sigma, gen):
        """None when the law passes its check at ``sigma``, else the reason."""
        if not self.valid:
            return self.reason
        tv = self.distance(stage, sigma, gen)
        if tv > MAX_DISTANCE:
            name = {"p": "footpoint stage", "v": "vector stage", "joint": "joint law"}[stage]
            return (f"{name}: the asymptotic law is {tv:.2f} from the exact target in total "
                    f"variation (> {MAX_DISTANCE:g})")
        return None
