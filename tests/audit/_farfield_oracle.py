r"""Independent local oracle for the far-field release audit at large n·ε on S²
(:mod:`tests.audit.test_farfield_release`).

Nothing here imports the library: the geometry is :mod:`tests.audit._oracle`'s and the gradient
:mod:`tests.audit._oracle_regression`'s, the fit, its Hessian, the whitening and the quadrature
are written here.

Coordinates. About a base point (p̂, v̂) with the orthonormal frame (e1, e2) of T_p̂ S²,
δ = (a, b) ∈ R⁴ stands for p = Exp_p̂(a₁e1 + a₂e2), v = Γ_{p̂→p}(v̂ + b₁e1 + b₂e2) (Γ the
parallel transport along the minimizing geodesic). For fixed a the map b ↦ v is an isometry of
R² onto T_p S², and Exp_p̂ has area density sin|a|/|a|, so the Sasaki volume (area(dp) ×
Lebesgue(dv), the measure of the target density) is sinc|a| dδ.

Gradient field. G(δ) ∈ R⁴ are the components of (∇_p E, ∇_v E) at (p, v) in the transported
frame (Γe1, Γe2) (orthonormal, so |G| = g, the oracle's joint gradient norm). The fit is the
zero of G found by Newton's method with a central-difference Jacobian, re-centred at every
step; H is that Jacobian at the fit (the Hessian of E in these coordinates).

Whitened coordinates x = H δ / σ: near the fit g ≈ σ|x|, so the target is close to the K-norm
law ∝ exp(−|x|) (|x| ~ Gamma(4, 1)). Bins are boxes in the polar coordinates
x = r (√(1−s) cos β, √(1−s) sin β, √s cos γ, √s sin γ) (dx = ½ r³ dr ds dβ dγ): radial shells
× {s < ½, s ≥ ½} × sign x₁ × sign x₃; each bin's probability is a product Gauss–Legendre rule
in (r, s, β, γ) on the box, so bin boundaries are exact and only the smooth integrand
exp(−g/σ) sinc|a| is approximated (error stated by halving the nodes).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from . import _oracle as O
from . import _oracle_regression as RG
from ._gauss import leggauss

#: Central-difference step of the Jacobian of G.
FD_STEP = 1e-6


def geodesic_data(n_obs, center, seed):
    """``((t, y), (p0, v0))``: ``n_obs`` sorted covariates on [0, 1] and responses about the
    public geodesic from ``center`` with speed ``0.8 e2 + 0.2 e1`` (tangent noise 0.1 rad)."""
    rng = np.random.default_rng(seed)
    e1, e2 = O.tangent_frame(center)
    p0, v0 = center, 0.8 * e2 + 0.2 * e1
    t = np.sort(rng.uniform(0, 1, n_obs))
    q = O.exp(np.broadcast_to(p0, (n_obs, 3)), t[:, None] * v0)
    f1, f2 = O.tangent_frame(q)
    z = 0.1 * rng.standard_normal((n_obs, 2))
    return (t, O.exp(q, z[:, 0:1] * f1 + z[:, 1:2] * f2)), (p0, v0)


def chart_point(base_p, base_v, frame, delta):
    """(p, v) of coordinates ``delta`` (m, 4) about (p̂, v̂) (module docstring)."""
    e1, e2 = frame
    delta = np.atleast_2d(delta)
    a, b = delta[:, :2], delta[:, 2:]
    p = O.exp(np.broadcast_to(base_p, (delta.shape[0], 3)), a[:, :1] * e1 + a[:, 1:] * e2)
    v = O.transport(np.broadcast_to(base_p, p.shape), p,
                    base_v + b[:, :1] * e1 + b[:, 1:] * e2)
    return p, v


def chart_coords(base_p, base_v, frame, p, v):
    """Inverse of :func:`chart_point`: coordinates (m, 4) of (p, v)."""
    e1, e2 = frame
    bp = np.broadcast_to(base_p, np.shape(p))
    a = O.log(bp, p)
    w = O.transport(p, bp, v) - base_v
    return np.stack([O.dot(a, e1), O.dot(a, e2), O.dot(w, e1), O.dot(w, e2)], axis=-1)


def field(base_p, base_v, frame, delta, t, y, tau):
    """G(δ) (m, 4): gradient components in the transported frame."""
    e1, e2 = frame
    p, v = chart_point(base_p, base_v, frame, delta)
    gp, gv = RG.regression_gradient(p, v, t, y, tau)
    bp = np.broadcast_to(base_p, p.shape)
    f1, f2 = O.transport(bp, p, np.broadcast_to(e1, p.shape)), O.transport(
        bp, p, np.broadcast_to(e2, p.shape))
    return np.stack([O.dot(gp, f1), O.dot(gp, f2), O.dot(gv, f1), O.dot(gv, f2)], axis=-1)


def jacobian(base_p, base_v, frame, t, y, tau, h=FD_STEP):
    """Central-difference Jacobian of G at δ = 0 (4 × 4, column j = ∂G/∂δ_j)."""
    steps = np.vstack([h * np.eye(4), -h * np.eye(4)])
    g = field(base_p, base_v, frame, steps, t, y, tau)
    return ((g[:4] - g[4:]) / (2 * h)).T


@dataclass
class Fit:
    p: np.ndarray
    v: np.ndarray
    frame: tuple
    hessian: np.ndarray
    g_at_fit: float


def clipped_fit(t, y, tau, p0, v0, iters=40):
    """The zero of the clipped gradient near (p0, v0) by Newton's method (module docstring)."""
    p, v = O.normalize(np.asarray(p0, float)), np.asarray(v0, float)
    v = v - O.dot(v, p) * p
    for _ in range(iters):
        frame = O.tangent_frame(p)
        g = field(p, v, frame, np.zeros((1, 4)), t, y, tau)[0]
        if np.linalg.norm(g) < 1e-14:
            break
        step = -np.linalg.solve(jacobian(p, v, frame, t, y, tau), g)
        pn, vn = chart_point(p, v, frame, step[None])
        p, v = pn[0], vn[0]
    frame = O.tangent_frame(p)
    g = float(np.linalg.norm(field(p, v, frame, np.zeros((1, 4)), t, y, tau)[0]))
    return Fit(p, v, frame, jacobian(p, v, frame, t, y, tau), g)


class LocalLaw:
    """The target ∝ exp(−g/σ) (Sasaki volume) near the oracle's fit, in whitened coordinates."""

    def __init__(self, fit, t, y, tau, sigma, support):
        self.fit, self.t, self.y, self.tau, self.sigma = fit, t, y, tau, sigma
        self.center, self.radius, self.max_speed = support
        self.h_inv = np.linalg.inv(fit.hessian)
        # dδ = σ⁴ / |det H| dx
        self.log_jac = 4 * np.log(sigma) - np.log(abs(np.linalg.det(fit.hessian)))

    def to_bundle(self, x):
        return chart_point(self.fit.p, self.fit.v, self.fit.frame, self.sigma * x @ self.h_inv.T)

    def whitened(self, p, v):
        d = chart_coords(self.fit.p, self.fit.v, self.fit.frame, p, v)
        return d @ self.fit.hessian.T / self.sigma

    def g(self, p, v):
        return RG.joint_gradient_norm(p, v, self.t, self.y, self.tau)

    def log_density_x(self, x):
        """log of exp(−g/σ) × sinc|a| × dδ/dx at whitened points x (m, 4) (unnormalised; −inf
        outside the support)."""
        d = self.sigma * x @ self.h_inv.T
        a = np.hypot(d[:, 0], d[:, 1])
        p, v = chart_point(self.fit.p, self.fit.v, self.fit.frame, d)
        inside = (O.dist(p, self.center) <= self.radius) & (O.norm(v) <= self.max_speed)
        out = -self.g(p, v) / self.sigma + np.log(np.sinc(a / np.pi)) + self.log_jac
        return np.where(inside, out, -np.inf)


def polar_to_x(r, s, beta, gamma):
    c, q = np.sqrt(1 - s), np.sqrt(s)
    return np.stack([r * c * np.cos(beta), r * c * np.sin(beta), r * q * np.cos(gamma),
                     r * q * np.sin(gamma)], axis=-1)


def _gl(lo, hi, k):
    x, w = leggauss(k)
    return 0.5 * (hi - lo) * (x + 1) + lo, 0.5 * (hi - lo) * w


#: Angular sectors: (s interval, β interval, γ interval); sign x₁ ≥ 0 ⇔ cos β ≥ 0.
_S = [(0.0, 0.5), (0.5, 1.0)]
_HALF = [(-0.5 * np.pi, 0.5 * np.pi), (0.5 * np.pi, 1.5 * np.pi)]
N_SECTORS = 8


def sector_of(x):
    """Angular sector index (0..7) of whitened points: s-half, sign x₁, sign x₃."""
    r2 = np.sum(x * x, axis=-1)
    s = (x[:, 2] ** 2 + x[:, 3] ** 2) / np.where(r2 > 0, r2, 1.0)
    return 4 * (s >= 0.5) + 2 * (x[:, 0] < 0) + (x[:, 2] < 0)


def bin_of(x, edges):
    """Bin index of whitened points: radial shell (``edges``) × sector; −1 beyond the last
    edge."""
    r = np.sqrt(np.sum(x * x, axis=-1))
    shell = np.searchsorted(edges, r, side="right") - 1
    out = shell * N_SECTORS + sector_of(x)
    return np.where((shell >= 0) & (shell < len(edges) - 1), out, -1)


#: Longest radial piece of the quadrature (whitened units; the integrand decays like e^{-r}).
MAX_PIECE = 2.5


def bin_log_masses(law, edges, nodes):
    """log ∫ over each bin (shell × sector, shell-major) of the unnormalised target, by product
    Gauss–Legendre with ``nodes`` = (n_r, n_s, n_β, n_γ) per bin (the radial rule on pieces of
    length ≤ :data:`MAX_PIECE` of each shell)."""
    nr, ns, nb, ng = nodes
    xs, ws = [], []
    for k in range(len(edges) - 1):
        cuts = np.linspace(edges[k], edges[k + 1],
                           int(np.ceil((edges[k + 1] - edges[k]) / MAX_PIECE)) + 1)
        parts = [_gl(a, b, nr) for a, b in zip(cuts[:-1], cuts[1:], strict=True)]
        r, wr = np.concatenate([q[0] for q in parts]), np.concatenate([q[1] for q in parts])
        for si in range(2):
            s, w_s = _gl(*_S[si], ns)
            for bi in range(2):
                b, wb = _gl(*_HALF[bi], nb)
                for gi in range(2):
                    g, wg = _gl(*_HALF[gi], ng)
                    R, S, B, C = np.meshgrid(r, s, b, g, indexing="ij")
                    W = np.einsum("i,j,k,l->ijkl", wr * 0.5 * r**3, w_s, wb, wg)
                    xs.append(polar_to_x(R.ravel(), S.ravel(), B.ravel(), C.ravel()))
                    ws.append(W.ravel())
    x, w = np.concatenate(xs), np.concatenate(ws)
    lf = law.log_density_x(x) + np.log(w)
    starts = np.cumsum([0] + [a.size for a in ws])
    out = np.empty(len(ws))
    for j in range(len(ws)):
        seg = lf[starts[j]:starts[j + 1]]
        m = seg.max()
        out[j] = m + np.log(np.sum(np.exp(seg - m)))
    return out


def outside_min(law, center, radius, max_speed, r_max, rng, n_rho=10, n_rho_v=8, starts=16):
    """Smallest g/σ found on the support {d(p, center) ≤ radius, |v| ≤ max_speed} outside the
    whitened ball |x| ≤ ``r_max``: a product grid of the support (geodesic polar × polar
    tangent disks), then a local search from its ``starts`` lowest points (moves that leave
    the region are refused). A measurement, not a proof: it bounds the mass outside the ball by
    vol(support) e^{−min}."""
    grid = O.disk_bundle(O.ball_grid(center, radius, n_rho), n_rho_v, max_speed)
    p, v = grid.points, grid.vectors
    r = np.linalg.norm(law.whitened(p, v), axis=-1)
    out = r > r_max
    g = law.g(p[out], v[out]) / law.sigma
    idx = np.argsort(g)[:starts]
    p0, v0 = p[out][idx], v[out][idx]
    f1, f2 = O.tangent_frame(p0)

    def moved(a):
        pp = O.exp(p0, a[:, 0:1] * f1 + a[:, 1:2] * f2)
        vv = O.transport(p0, pp, v0 + a[:, 2:3] * f1 + a[:, 3:4] * f2)
        return pp, vv

    def objective(a):
        pp, vv = moved(a)
        ok = ((O.dist(pp, center) <= radius) & (O.norm(vv) <= max_speed)
              & (np.linalg.norm(law.whitened(pp, vv), axis=-1) > r_max))
        return np.where(ok, -law.g(pp, vv) / law.sigma, -np.inf)

    _, f = O.local_search(objective, np.zeros((idx.size, 4)), rng, steps=60, scale=0.02)
    return float(min(g.min(), -f.max()))


def support_volume(radius, max_speed):
    """Sasaki volume of {d(p, c) ≤ radius} × {|v| ≤ max_speed}: 2π(1 − cos r) π V²."""
    return 2 * np.pi * (1 - np.cos(radius)) * np.pi * max_speed**2
