r"""Independent numpy oracle for regression on S²: Huber energies, their Riemannian gradients
and exact samplers of the joint KNG.

Nothing here imports the library; the sphere's geometry is :mod:`tests.audit._oracle`'s.

Regression gradients (derived here; checked against finite differences of the energy in
:mod:`tests.audit.test_oracle`)
    For one term with u = t v, s = |u|, q = Exp_p(u) on the great circle
    γ(r) = cos r p + sin r ê (ê = u/s), let w = clip_τ(Log_q y) (the Huber-clipped residual) and
    split it into its part α along γ'(s) and its part β along the circle's normal m = p × ê.
    Jacobi fields along γ: a variation of p (with u parallel-transported) moves q by the
    transported variation, scaled by 1 along ê and by cos s along m; a variation of u moves q by
    1 along ê and by sin s / s along m. Hence, with ρ_τ the Huber loss,
    ∇_p ρ_τ(d(q, y)) = −(α ê + cos s β m) and ∇_u ρ_τ(d(q, y)) = −(α ê + (sin s / s) β m),
    and ∇_v of the term is t ∇_u. (At s = 0 both are −w.)

Sampling
    :func:`rejection_sample_joint` draws exactly from the joint KNG ∝ exp(−‖∇E‖/σ) on the
    tangent bundle (proposals from :func:`uniform_bundle`); :func:`oracle_draw_stats` applies an
    oracle's statistic to such draws (the power controls' mechanism).
"""

from __future__ import annotations

import numpy as np

from ._oracle import (
    dist,
    dot,
    exp,
    log,
    norm,
    tangent_frame,
    transport,
    uniform_ball,
    uniform_sphere,
)


# ----------------------------------------------------------------------------- regression
def covariate_t(x, lo, hi):
    """Strict mode's covariate map: clip to [lo, hi], then affinely onto [0, 1]."""
    return (np.clip(np.asarray(x, dtype=float), lo, hi) - lo) / (hi - lo)


def huber(d, tau):
    """ρ_τ(d) = d²/2 (d ≤ τ), τ d − τ²/2 (d > τ)."""
    return np.where(d <= tau, 0.5 * d * d, tau * d - 0.5 * tau * tau)


def regression_energy(p, v, t, y, tau):
    """E(p, v) = (1/n) Σ ρ_τ(d(Exp_p(t_i v), y_i)) for batches p, v of shape (..., 3)."""
    p = np.asarray(p, float)[..., None, :]
    v = np.asarray(v, float)[..., None, :]
    q = exp(p, t[:, None] * v)
    return huber(dist(q, y), tau).mean(axis=-1)


def clip_norm(w, tau):
    nw = norm(w)[..., None]
    return w * np.minimum(1.0, tau / np.where(nw > 0, nw, 1.0))


def _cross(a, b):
    """Cross product of 3-vectors over the last axis (broadcasting; faster than np.cross)."""
    return np.stack([a[..., 1] * b[..., 2] - a[..., 2] * b[..., 1],
                     a[..., 2] * b[..., 0] - a[..., 0] * b[..., 2],
                     a[..., 0] * b[..., 1] - a[..., 1] * b[..., 0]], axis=-1)


def _sinc(s):
    """sin(s)/s with the limit 1 at 0."""
    return np.where(s > 1e-6, np.sin(s) / np.where(s > 1e-6, s, 1.0), 1.0 - s * s / 6.0)


def term_gradients(p, u, y, tau):
    """(∇_p, ∇_u) of ρ_τ(d(Exp_p u, y)) for broadcastable batches of p, u ∈ T_p, y."""
    p, u, y = (np.asarray(a, float) for a in (p, u, y))
    s = norm(u)[..., None]
    e_hat = u / np.where(s > 0, s, 1.0)
    cos_s, sin_s = np.cos(s), np.sin(s)
    q = cos_s * p + sin_s * e_hat
    w = clip_norm(log(q, y), tau)
    gamma_dot = cos_s * e_hat - sin_s * p
    normal = _cross(p, e_hat)
    alpha = dot(w, gamma_dot)[..., None]
    beta = dot(w, normal)[..., None]
    along = alpha * e_hat
    beta_m = beta * normal
    gp = -(along + cos_s * beta_m)
    gu = -(along + _sinc(s) * beta_m)
    at_p = s == 0
    if np.any(at_p):
        gp = np.where(at_p, -w, gp)
        gu = np.where(at_p, -w, gu)
    return gp, gu


def _regression_terms(p, v, t, y, tau):
    """Per-term gradients (∇_p, ∇_u) of ρ_τ(d(Exp_p(t_i v), y_i)); shapes (B, n, 3)."""
    return term_gradients(p[:, None, :], t[None, :, None] * v[:, None, :], y[None], tau)


def regression_gradient(p, v, t, y, tau, chunk=20_000):
    """Horizontal and vertical gradients (∇_p E, ∇_v E) of the Huber-clipped energy.

    ``p``, ``v``: (B, 3) footpoints and tangent shooting vectors. Returns two (B, 3) arrays.
    """
    p = np.atleast_2d(np.asarray(p, float))
    v = np.atleast_2d(np.asarray(v, float))
    p, v = np.broadcast_arrays(p, v)
    t = np.asarray(t, float)
    y = np.asarray(y, float)
    gp = np.empty(p.shape)
    gv = np.empty(p.shape)
    step = max(1, chunk // t.size)
    for i in range(0, p.shape[0], step):
        a, b = _regression_terms(p[i:i + step], v[i:i + step], t, y, tau)
        gp[i:i + step] = a.mean(axis=1)
        gv[i:i + step] = (t[None, :, None] * b).mean(axis=1)
    return gp, gv


def fd_regression_gradient(p, v, t, y, tau, h=1e-5):
    """(∇_p E, ∇_v E) at one (p, v) by central differences of :func:`regression_energy`.

    Footpoint directions move p along Exp_p(±h e_k) and carry v by parallel transport (the
    horizontal lift); vector directions move v within T_p.
    """
    e = tangent_frame(p)
    gp = np.zeros(3)
    gv = np.zeros(3)
    for ek in e:
        plus, minus = exp(p, h * ek), exp(p, -h * ek)
        dp = (regression_energy(plus, transport(p, plus, v), t, y, tau)
              - regression_energy(minus, transport(p, minus, v), t, y, tau)) / (2 * h)
        dv = (regression_energy(p, v + h * ek, t, y, tau)
              - regression_energy(p, v - h * ek, t, y, tau)) / (2 * h)
        gp += dp * ek
        gv += dv * ek
    return gp, gv


def joint_gradient_norm(p, v, t, y, tau):
    gp, gv = regression_gradient(p, v, t, y, tau)
    return np.sqrt(dot(gp, gp) + dot(gv, gv))


def joint_gradient_norm_frame(p, v, t, y, tau, chunk=20_000):
    """:func:`joint_gradient_norm` for footpoints p (B, 3) and shooting vectors v (B, 3) ≠ 0,
    the same formulas reduced to scalars per term (agrees to rounding, ~1e-15 relative).

    Every term shoots along ê = v/‖v‖ (u = t_i v), so all terms share the orthonormal frame
    (ê, m = p × ê) of T_p. With s_i = t_i‖v‖ and q_i = cos s_i p + sin s_i ê, the frame
    (q_i, γ′_i = cos s_i ê − sin s_i p, m) is orthonormal, y_i = c q_i + a γ′_i + b m, and
    Log_{q_i} y_i = θ (a γ′_i + b m)/r with r = √(a² + b²), θ = atan2(r, c); clipped to τ it is
    k (a γ′_i + b m) with k = min(θ, τ)/r, so α_i = k a and β_i = k b in :func:`term_gradients`.
    Then n ∇_p E = −(Σ α_i ê + Σ cos s_i β_i m) and n ∇_v E = −(Σ t_i α_i ê + Σ t_i
    sinc(s_i) β_i m), whose norm needs no vectors per term. Where ‖v‖ = 0 or r = 0 the value is
    NaN (:func:`rejection_sample_joint` then uses :func:`joint_gradient_norm`).
    """
    p = np.asarray(p, float)
    v = np.asarray(v, float)
    t = np.asarray(t, float)
    y = np.asarray(y, float)
    # Rows are independent (every operation is elementwise or reduces within a row), so blocks
    # of about `chunk` (row, term) entries give the same numbers as one block, with the
    # temporaries in cache (about 3x faster at n = 40).
    step = max(1, chunk // max(t.size, 1))
    if p.shape[0] > step:
        return np.concatenate([_joint_gradient_norm_frame(p[i:i + step], v[i:i + step], t, y,
                                                          tau)
                               for i in range(0, p.shape[0], step)])
    return _joint_gradient_norm_frame(p, v, t, y, tau)


def _joint_gradient_norm_frame(p, v, t, y, tau):
    """One block of :func:`joint_gradient_norm_frame`."""
    with np.errstate(invalid="ignore", divide="ignore"):
        speed = np.sqrt(dot(v, v))
        e_hat = v / speed[:, None]
        m = _cross(p, e_hat)
        # einsum, not matmul: its own loops, no BLAS threads (which spin on a busy machine)
        yp, ye, ym = (np.einsum("bk,nk->bn", a, y) for a in (p, e_hat, m))
        s = speed[:, None] * t[None, :]
        cs, sn = np.cos(s), np.sin(s)
        c = cs * yp + sn * ye
        a = cs * ye - sn * yp
        r = np.sqrt(a * a + ym * ym)
        k = np.minimum(np.arctan2(r, c), tau) / r
        alpha, beta = k * a, k * ym
        sinc = np.where(s > 1e-6, sn / np.where(s > 1e-6, s, 1.0), 1.0 - s * s / 6.0)
        s1, s2 = alpha.sum(axis=1), (cs * beta).sum(axis=1)
        s3, s4 = np.einsum("bn,n->b", alpha, t), np.einsum("bn,n->b", sinc * beta, t)
        return np.sqrt(s1 * s1 + s2 * s2 + s3 * s3 + s4 * s4) / t.size


class PairSearchGrid:
    """Normalized joint-KNG log-densities on a tangent-bundle grid of the data sets
    shared ∪ {(t, y)}, for many candidate observations (t, y) at once: the objective of the
    audits' adversarial-pair searches, with the candidate's term by the scalar reduction of
    :func:`joint_gradient_norm_frame` (the shared terms by :func:`regression_gradient`, once).

    Every grid vector is ≠ 0, so (ê, m = p × ê), ê = v/‖v‖, is an orthonormal frame of T_p in
    which every term's gradient lives; the shared gradients are taken in it once, and a
    candidate adds −(α, cos s β) to the footpoint part and −t (α, sinc s β) to the vector part.
    """

    def __init__(self, grid, tau):
        self.points, self.vectors, self.weights = grid.points, grid.vectors, grid.weights
        self.tau = tau
        self.speed = norm(grid.vectors)
        assert np.all(self.speed > 0)
        # the grid's few distinct speeds: functions of t·speed are evaluated once per speed
        self.speeds, self.speed_of = np.unique(self.speed, return_inverse=True)
        self.e_hat = grid.vectors / self.speed[:, None]
        self.m = _cross(self.points, self.e_hat)

    def shared(self, t, y):
        """The shared observations' summed gradients in the frame: (4, G)."""
        gp, gv = regression_gradient(self.points, self.vectors, t, y, self.tau)
        k = np.asarray(t).size
        return k * np.stack([dot(gp, self.e_hat), dot(gp, self.m), dot(gv, self.e_hat),
                             dot(gv, self.m)])

    def log_f(self, shared, n, sigma, t_new, y_new):
        """(K, G) normalized log-densities of the K data sets shared ∪ {(t_new_k, y_new_k)}
        (n observations each), noise σ."""
        with np.errstate(invalid="ignore", divide="ignore"):
            # cos, sin and sinc of s = t·speed per distinct speed, then gathered for every node:
            # the same numbers as on the (K, G) products (equal speeds, equal products)
            s = t_new[:, None] * self.speeds[None]
            cs, sn = np.cos(s), np.sin(s)
            sinc = np.where(s > 1e-6, sn / np.where(s > 1e-6, s, 1.0), 1.0 - s * s / 6.0)
            cs, sn, sinc = cs[:, self.speed_of], sn[:, self.speed_of], sinc[:, self.speed_of]
            yp, ye, ym = (np.einsum("kd,gd->kg", y_new, a) for a in (self.points, self.e_hat,
                                                                     self.m))
            a = cs * ye - sn * yp
            r = np.sqrt(a * a + ym * ym)
            k = np.minimum(np.arctan2(r, cs * yp + sn * ye), self.tau) / r
            alpha, beta = k * a, k * ym
            tt = t_new[:, None]
            parts = (shared[0] - alpha, shared[1] - cs * beta, shared[2] - tt * alpha,
                     shared[3] - tt * sinc * beta)
            lf = -np.sqrt(sum(q * q for q in parts)) / n / sigma
        mx = lf.max(axis=1, keepdims=True)
        return lf - (mx + np.log(np.sum(self.weights * np.exp(lf - mx), axis=1,
                                        keepdims=True)))


#: Half-width, in log-density, of the band where :func:`rejection_sample_joint` decides with
#: the reference formula; and the largest disagreement it accepts between the two (checked).
DECISION_BAND = 1e-6
FRAME_TOLERANCE = 1e-9


def rejection_sample_joint(propose, data, tau, sigma, size, rng, batch=20_000, check=200):
    """``rejection_sample(propose, lambda z: -joint_gradient_norm(z[:, 0], z[:, 1], *data, tau)
    / sigma, size, rng, batch)``, the same draws bit for bit, about four times faster.

    The same proposals and uniforms are drawn from ``rng`` in the same order; the test
    u < exp(−g/σ) is made with :func:`joint_gradient_norm_frame` except within
    ``DECISION_BAND`` of the boundary (|log u + g/σ| small, or g not finite), where g is
    recomputed by :func:`joint_gradient_norm`. Both agree to ~1e-15 relative, far inside the
    band, so every decision is the reference formula's; this is checked on the recomputed
    proposals and on the first ``check`` of every batch (an error if they differ by more than
    ``FRAME_TOLERANCE`` in log-density).
    """
    t, y = data
    kept, count = [], 0
    while count < size:
        z = propose(batch, rng)
        u = rng.uniform(size=batch)
        g = joint_gradient_norm_frame(z[:, 0], z[:, 1], t, y, tau)
        with np.errstate(divide="ignore", invalid="ignore"):
            near = ~(np.abs(np.log(u) + g / sigma) >= DECISION_BAND)
        idx = np.union1d(np.flatnonzero(near), np.arange(min(check, batch)))
        g_ref = joint_gradient_norm(z[idx, 0], z[idx, 1], t, y, tau)
        known = np.isfinite(g[idx])
        err = np.abs(g[idx][known] - g_ref[known]) / sigma
        if err.size and not err.max() <= FRAME_TOLERANCE:
            raise AssertionError(f"frame formula off by {err.max():.1e} in log-density")
        g[idx] = g_ref
        keep = u < np.exp(-g / sigma)
        kept.append(z[keep])
        count += int(keep.sum())
    return np.concatenate(kept)[:size]


def footpoint_gradient_norm(p, p_hat, v_hat, t, y, tau):
    """‖∇_p E(p, Γ_{p̂→p} v̂)‖: the sequential scheme's footpoint score."""
    p = np.atleast_2d(np.asarray(p, float))
    v = transport(np.broadcast_to(p_hat, p.shape), p, np.broadcast_to(v_hat, p.shape))
    gp, _ = regression_gradient(p, v, t, y, tau)
    return norm(gp)


# ----------------------------------------------------------------------------- sampling
def uniform_bundle(max_speed, center=None, radius=None):
    """Proposal ``(k, rng) -> (k, 2, 3)`` uniform on S² x {|v| <= max_speed} (area x Lebesgue
    on each tangent disk), for rejection sampling of joint-regression targets; with ``center``
    and ``radius`` the footpoints are uniform on the ball B_radius(center) instead."""

    def propose(k, r):
        p = uniform_sphere(k, r) if center is None else uniform_ball(center, radius, k, r)
        f1, f2 = tangent_frame(p)
        rho = max_speed * np.sqrt(r.uniform(size=(k, 1)))
        phi = r.uniform(0, 2 * np.pi, size=(k, 1))
        return np.stack([p, rho * (np.cos(phi) * f1 + np.sin(phi) * f2)], axis=1)

    return propose


def oracle_draw_stats(oracle, max_speed, tau, sigma, size, seed, batch=50_000):
    """The oracle's statistic ``oracle.stat(p, v)`` of ``size`` draws of each neighbour's joint
    KNG at scale ``sigma`` (``oracle.d``, then ``oracle.e``), drawn by this module's own
    rejection sampler from uniform bundle proposals (the power controls' mechanism)."""
    rng = np.random.default_rng(seed)
    propose = uniform_bundle(max_speed)
    out = []
    for data in (oracle.d, oracle.e):
        # rejection_sample with log_f = −joint_gradient_norm/σ, the same draws bit for bit
        # (every accept/reject decision is the reference formula's; see rejection_sample_joint)
        z = rejection_sample_joint(propose, data, tau, sigma, size, rng, batch=batch)
        out.append(oracle.stat(z[:, 0], z[:, 1]))
    return out
