r"""Independent numpy oracle for the privacy audit on the unit sphere S² ⊂ R³, and the
statistics of the black-box test.

Nothing here imports the library: the geometry, the Fréchet mean, the sensitivity formulas of
DESIGN §5, the Laplace law, quadrature rules, the adversarial search and the statistics of the
black-box test are written from the formulas alone. The search and the statistics do not
depend on the sphere; the audits of the other spaces reuse them. The regression energies, their
Riemannian gradients and the joint-KNG samplers are in :mod:`tests.audit._oracle_regression`.

Geometry (curvature 1, points are unit 3-vectors, tangent vectors at ``x`` are ⟂ ``x``)
    d(x, y) = atan2(|x × y|, x·y); Exp_x v = cos|v| x + (sin|v|/|v|) v;
    Log_x y = θ u/|u| with u = y − (x·y) x, θ = d(x, y); parallel transport along the minimizing
    geodesic x → y: Γ v = v − (y·v)/(1 + x·y) (x + y).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import stats

from ._gauss import leggauss

NORTH = np.array([0.0, 0.0, 1.0])


# ----------------------------------------------------------------------------- geometry
def dot(a, b):
    """Euclidean inner product over the last axis (broadcasting)."""
    a = np.asarray(a)
    b = np.asarray(b)
    if a.shape[-1] == 3 and b.shape[-1] == 3:  # unrolled: much faster than a reduction
        return a[..., 0] * b[..., 0] + a[..., 1] * b[..., 1] + a[..., 2] * b[..., 2]
    return np.sum(a * b, axis=-1)


def norm(a):
    return np.sqrt(np.maximum(dot(a, a), 0.0))


def normalize(a):
    a = np.asarray(a, dtype=float)
    return a / norm(a)[..., None]


def dist(x, y):
    """Geodesic distance, accurate for small and for near-antipodal angles."""
    x, y = np.broadcast_arrays(np.asarray(x, float), np.asarray(y, float))
    return np.arctan2(norm(np.cross(x, y)), dot(x, y))


def log(x, y):
    """Riemannian logarithm Log_x y (0 at y = x; undefined, returned as 0, at y = −x)."""
    x, y = np.asarray(x, float), np.asarray(y, float)
    if x.shape[-1] == 3 and y.shape[-1] == 3:
        # The same elementwise operations as the general branch below, on the three
        # components (broadcast only as far as each operation needs): the same numbers.
        x0, x1, x2 = x[..., 0], x[..., 1], x[..., 2]
        y0, y1, y2 = y[..., 0], y[..., 1], y[..., 2]
        c = x0 * y0 + x1 * y1 + x2 * y2
        u0, u1, u2 = y0 - c * x0, y1 - c * x1, y2 - c * x2
        s = np.sqrt(np.maximum(u0 * u0 + u1 * u1 + u2 * u2, 0.0))
        theta = np.arctan2(s, c)
        f = np.divide(theta, s, out=np.zeros_like(s), where=s > 0)
        out = np.empty(np.broadcast_shapes(x.shape, y.shape))
        np.multiply(f, u0, out=out[..., 0])
        np.multiply(f, u1, out=out[..., 1])
        np.multiply(f, u2, out=out[..., 2])
        return out
    x, y = np.broadcast_arrays(x, y)
    c = dot(x, y)[..., None]
    u = y - c * x
    s = norm(u)[..., None]
    theta = np.arctan2(s, c)
    return np.divide(theta, s, out=np.zeros_like(s), where=s > 0) * u


def exp(x, v):
    """Riemannian exponential Exp_x v."""
    x, v = np.broadcast_arrays(np.asarray(x, float), np.asarray(v, float))
    nv = norm(v)[..., None]
    return np.cos(nv) * x + np.sinc(nv / np.pi) * v


def transport(x, y, v):
    """Parallel transport of ``v`` ∈ T_x along the minimizing geodesic from ``x`` to ``y``."""
    x, y, v = np.broadcast_arrays(np.asarray(x, float), np.asarray(y, float),
                                  np.asarray(v, float))
    return v - (dot(y, v) / (1.0 + dot(x, y)))[..., None] * (x + y)


def tangent_frame(x):
    """An orthonormal frame (e1, e2) of T_x S², each of the shape of ``x``."""
    x = np.asarray(x, dtype=float)
    helper = np.where((np.abs(x[..., 0]) < 0.9)[..., None], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0])
    e1 = normalize(helper - dot(helper, x)[..., None] * x)
    return e1, np.cross(x, e1)


def point_at(center, rho, phi):
    """The point at distance ``rho`` from ``center`` in direction angle ``phi`` of its frame."""
    center = np.asarray(center, dtype=float)
    one = center.ndim > 1 and not any(center.strides[:-1])  # one centre broadcast: frame once
    e1, e2 = tangent_frame(center.reshape(-1, 3)[0] if one else center)
    rho = np.asarray(rho, float)[..., None]
    phi = np.asarray(phi, float)[..., None]
    return exp(center, rho * (np.cos(phi) * e1 + np.sin(phi) * e2))


def project_ball(points, center, radius):
    """Geodesic projection onto the closed ball B_radius(center) (strict mode's clipping)."""
    points = np.asarray(points, dtype=float)
    d = dist(points, center)
    v = log(np.broadcast_to(center, points.shape), points)
    scale = np.where(d > radius, radius / np.where(d > 0, d, 1.0), 1.0)
    return np.where((d > radius)[..., None], exp(center, v * scale[..., None]), points)


def uniform_ball(center, radius, size, rng):
    """Uniform draws (for area) on the geodesic ball B_radius(center): cos ρ uniform."""
    rho = np.arccos(1.0 - rng.uniform(size=size) * (1.0 - np.cos(radius)))
    phi = rng.uniform(0.0, 2.0 * np.pi, size=size)
    return point_at(np.broadcast_to(center, (size, 3)), rho, phi)


def uniform_sphere(size, rng):
    z = rng.standard_normal((size, 3))
    return normalize(z)


# ----------------------------------------------------------------------------- sensitivity
def frechet_h(radius):
    """h(r, κ=1) = 2r cot(2r) of paper 001 Thm 2."""
    return 2.0 * radius / np.tan(2.0 * radius)


def frechet_mean_sensitivity(n, radius):
    """Δ = 2r(2 − h)/(n h) on S² (κ = 1), DESIGN §5."""
    assert 0 < radius < np.pi / 4, "paper 001 needs r < r* = min(π, π/2)/2 = π/4 on S²"
    h = frechet_h(radius)
    return 2.0 * radius * (2.0 - h) / (n * h)


def frechet_gradient_sensitivity(n, radius):
    """Δ_g = 2r(2 − h)/n of the Fréchet energy's gradient (KNG), DESIGN §5."""
    assert 0 < radius < np.pi / 4
    h = frechet_h(radius)
    return 2.0 * radius * (2.0 - h) / n


def regression_sensitivity(n, tau):
    """(Δ_p, Δ_v) = (2τ/n, 2τ/n) for κ_l = 1 ≥ 0 (paper 002 Thm 3.3 / D.1), DESIGN §5."""
    return 2.0 * tau / n, 2.0 * tau / n


# ----------------------------------------------------------------------------- Fréchet mean
def frechet_mean(y, tol=1e-13, max_iter=10_000):
    """Minimizer of (1/2n) Σ d(z, y_i)² by the Karcher iteration z ← Exp_z(mean Log_z y_i)."""
    y = np.asarray(y, dtype=float)
    z = normalize(y.mean(axis=0))
    for _ in range(max_iter):
        g = log(z, y).mean(axis=0)
        if norm(g) < tol:
            return z
        z = normalize(exp(z, g))
    raise RuntimeError("Karcher iteration did not converge")


def frechet_mean_batch(y, tol=1e-13, max_iter=10_000):
    """:func:`frechet_mean` of a batch of data sets ``y`` of shape (K, n, 3) → (K, 3)."""
    y = np.asarray(y, dtype=float)
    z = normalize(y.mean(axis=1))
    for _ in range(max_iter):
        g = log(z[:, None, :], y).mean(axis=1)
        if np.max(norm(g)) < tol:
            return z
        z = normalize(exp(z, g))
    raise RuntimeError("Karcher iteration did not converge")


def frechet_gradient_norm(z, y, chunk=20_000):
    """‖(1/n) Σ Log_z y_i‖ for a batch ``z`` of shape (m, 3)."""
    z = np.atleast_2d(np.asarray(z, dtype=float))
    y = np.asarray(y, dtype=float)
    out = np.empty(z.shape[0])
    step = max(1, chunk // y.shape[0])
    for i in range(0, z.shape[0], step):
        zb = z[i:i + step]
        out[i:i + step] = norm(log(zb[:, None, :], y[None]).mean(axis=1))
    return out


def frechet_gradient_norms(z, datasets, chunk=20_000):
    """``[frechet_gradient_norm(z, y) for y in datasets]``, bit for bit, each distinct data
    point's Log_z computed once (neighbouring data sets share all points but one): a data
    set's (m, n, 3) array of logs is gathered in its own order and averaged as there."""
    z = np.atleast_2d(np.asarray(z, dtype=float))
    index, points, columns = {}, [], []
    for y in datasets:
        cols = []
        for row in np.asarray(y, dtype=float):
            cols.append(index.setdefault(row.tobytes(), len(points)))
            if cols[-1] == len(points):
                points.append(row)
        columns.append(np.array(cols))
    points = np.array(points)
    out = [np.empty(z.shape[0]) for _ in datasets]
    step = max(1, chunk // points.shape[0])
    for i in range(0, z.shape[0], step):
        logs = log(z[i:i + step, None, :], points[None])
        for o, cols in zip(out, columns, strict=True):
            o[i:i + step] = norm(logs[:, cols].mean(axis=1))
    return out


# ----------------------------------------------------------------------------- Laplace
def laplace_log_normalizer(sigma):
    """log ∫_{S²} exp(−d(m, z)/σ) dA(z) = log 2π (1 + e^{−π/σ}) / (1 + 1/σ²)."""
    a = 1.0 / sigma
    return np.log(2.0 * np.pi) + np.log1p(np.exp(-np.pi * a)) - np.log1p(a * a)


def laplace_radial_cdf(rho, sigma):
    """CDF of d(m, Z) for Z ∝ exp(−d(m, z)/σ) on S² (radial density ∝ e^{−ρ/σ} sin ρ)."""
    a = 1.0 / sigma
    rho = np.clip(np.asarray(rho, dtype=float), 0.0, np.pi)
    part = 1.0 - np.exp(-a * rho) * (a * np.sin(rho) + np.cos(rho))
    return part / (1.0 + np.exp(-a * np.pi))


def sample_laplace(center, sigma, size, rng):
    """Exact draws ∝ exp(−d(center, z)/σ) on S²: radius by rejection from Gamma(2, σ)
    (accept with sin ρ / ρ, reject ρ > π), uniform direction."""
    out = np.empty(0)
    while out.size < size:
        rho = rng.gamma(2.0, sigma, size=2 * size)
        keep = (rho <= np.pi) & (rng.uniform(size=rho.size) < np.sinc(rho / np.pi))
        out = np.concatenate([out, rho[keep]])
    rho = out[:size]
    phi = rng.uniform(0.0, 2.0 * np.pi, size=size)
    return point_at(np.broadcast_to(center, (size, 3)), rho, phi)


def rejection_sample(propose, log_f, size, rng, batch=20_000):
    """Exact draws from ∝ exp(log_f) (log_f ≤ 0) by rejection from the proposal ``propose``
    (uniform for the reference measure): accept a proposal z with probability exp(log_f(z))."""
    kept, count = [], 0
    while count < size:
        z = propose(batch, rng)
        keep = rng.uniform(size=batch) < np.exp(log_f(z))
        kept.append(z[keep])
        count += int(keep.sum())
    return np.concatenate(kept)[:size]



# ----------------------------------------------------------------------------- quadrature
@dataclass
class Grid:
    """Quadrature nodes with weights (area on S², or area × Lebesgue on the bundle)."""

    points: np.ndarray
    weights: np.ndarray
    vectors: np.ndarray | None = None  # shooting vectors on the tangent-bundle grid


def sphere_grid(n_theta, n_phi=None):
    """Gauss–Legendre in cos θ × uniform φ; weights sum to 4π."""
    n_phi = 2 * n_theta if n_phi is None else n_phi
    z, wz = leggauss(n_theta)
    phi = (np.arange(n_phi) + 0.5) * 2.0 * np.pi / n_phi
    zz, pp = np.meshgrid(z, phi, indexing="ij")
    r = np.sqrt(1.0 - zz**2)
    pts = np.stack([r * np.cos(pp), r * np.sin(pp), zz], axis=-1).reshape(-1, 3)
    w = np.repeat(wz, n_phi) * (2.0 * np.pi / n_phi)
    return Grid(pts, w)


def ball_grid(center, radius, n_rho, n_phi=None):
    """Geodesic polar grid on B_radius(center): Gauss–Legendre in ρ, uniform φ, weight sin ρ."""
    n_phi = 2 * n_rho if n_phi is None else n_phi
    x, wx = leggauss(n_rho)
    rho = 0.5 * radius * (x + 1.0)
    w_rho = 0.5 * radius * wx * np.sin(rho)
    phi = (np.arange(n_phi) + 0.5) * 2.0 * np.pi / n_phi
    rr, pp = np.meshgrid(rho, phi, indexing="ij")
    pts = point_at(np.broadcast_to(center, rr.shape + (3,)), rr, pp).reshape(-1, 3)
    w = np.repeat(w_rho, n_phi) * (2.0 * np.pi / n_phi)
    return Grid(pts, w)


def disk_grid(radius, n_rho, n_phi=None):
    """Polar grid on the disk |c| ≤ radius of R²: coordinates (m, 2) and Lebesgue weights."""
    n_phi = 2 * n_rho if n_phi is None else n_phi
    x, wx = leggauss(n_rho)
    rho = 0.5 * radius * (x + 1.0)
    w_rho = 0.5 * radius * wx * rho
    phi = (np.arange(n_phi) + 0.5) * 2.0 * np.pi / n_phi
    rr, pp = np.meshgrid(rho, phi, indexing="ij")
    coords = np.stack([rr * np.cos(pp), rr * np.sin(pp)], axis=-1).reshape(-1, 2)
    return coords, np.repeat(w_rho, n_phi) * (2.0 * np.pi / n_phi)


def bundle_grid(n_theta, n_rho, max_speed, n_phi=None, n_psi=None):
    """Product grid on {(p, v): p ∈ S², v ∈ T_p, |v| ≤ max_speed} for area(dp) × Lebesgue(dv).

    The fibre grid is laid out in the frame of :func:`tangent_frame`; any orthonormal frame
    gives a valid quadrature of the disk (Lebesgue measure is rotation invariant).
    """
    return disk_bundle(sphere_grid(n_theta, n_phi), n_rho, max_speed, n_psi)


def disk_bundle(base, n_rho, max_speed, n_psi=None):
    """Product of a footpoint grid ``base`` with polar grids of the tangent disks |v| <= max_speed
    (frame of :func:`tangent_frame`), for area(dp) x Lebesgue(dv) (:func:`bundle_grid`)."""
    coords, wv = disk_grid(max_speed, n_rho, n_psi)
    e1, e2 = tangent_frame(base.points)
    v = coords[None, :, 0:1] * e1[:, None] + coords[None, :, 1:2] * e2[:, None]
    pts = np.repeat(base.points, coords.shape[0], axis=0)
    return Grid(pts, np.outer(base.weights, wv).ravel(), v.reshape(-1, 3))


def log_integral(log_f, weights):
    """log Σ w_j exp(log_f_j), stably."""
    m = np.max(log_f)
    return m + np.log(np.sum(weights * np.exp(log_f - m)))


# ----------------------------------------------------------------------------- search
def local_search(fun, x0, rng, steps=300, scale=0.5, min_scale=1e-7):
    """Maximize ``fun`` (vectorized over rows) from every row of ``x0`` at once.

    A (1+1) evolution strategy per row: Gaussian proposal, keep it if it improves, widen the
    step after a success and shrink it after a failure. Returns the final rows and values.
    """
    x = np.array(x0, dtype=float)
    f = fun(x)
    step = np.full(x.shape[0], float(scale))
    for _ in range(steps):
        prop = x + step[:, None] * rng.standard_normal(x.shape)
        fp = fun(prop)
        better = fp > f
        x[better], f[better] = prop[better], fp[better]
        step = np.maximum(np.where(better, 2.0 * step, 0.8 * step), min_scale)
    return x, f


def squash_disk(a, radius):
    """Rows of R² → the open disk of ``radius`` (smooth, onto)."""
    a = np.asarray(a, dtype=float)
    r = np.sqrt(np.sum(a * a, axis=-1, keepdims=True))
    return a * np.divide(radius * np.tanh(r), r, out=np.full_like(r, radius), where=r > 0)


def ball_point(a, center, radius):
    """Rows of R² → points of the open ball B_radius(center) (frame of ``center``)."""
    e1, e2 = tangent_frame(center)
    c = squash_disk(a, radius)
    return exp(center, c[..., 0:1] * e1 + c[..., 1:2] * e2)


# ----------------------------------------------------------------------------- statistics
def cp_lower(k, n, alpha):
    """One-sided Clopper–Pearson lower bound: P(p < bound) ≤ alpha."""
    return 0.0 if k == 0 else float(stats.beta.ppf(alpha, k, n - k + 1))


def cp_upper(k, n, alpha):
    """One-sided Clopper–Pearson upper bound: P(p > bound) ≤ alpha."""
    return 1.0 if k == n else float(stats.beta.ppf(1.0 - alpha, k + 1, n - k))


@dataclass
class EventBound:
    """Certified bounds for one event A and one direction (P_a(A) vs e^ε P_b(A))."""

    direction: str
    threshold: float
    hits_a: int
    hits_b: int
    p_lower: float
    q_upper: float
    excess: float  # p_lower − e^ε q_upper: a certified violation if > δ
    eps_lower: float  # certified lower bound on log(P_a(A) / P_b(A)) (0 if none)

    def __str__(self):
        return (f"{self.direction} c={self.threshold:+.3f}: hits {self.hits_a}/{self.hits_b}, "
                f"P_a ≥ {self.p_lower:.4f}, P_b ≤ {self.q_upper:.4f}, so P_a − e^ε P_b ≥ "
                f"{self.excess:+.4f} and log(P_a/P_b) ≥ {self.eps_lower:.3f}")


def event_thresholds(stat_grid, log_f_d, log_f_e, weights, n_draws, alpha_total, k=3,
                     n_candidates=60):
    """Thresholds of the distinguishing events, chosen from the oracle alone (before sampling).

    For A_c = {stat > c} (tested as P_D vs P_D′) and B_c = {stat < −c} (P_D′ vs P_D), with
    stat = log f_D − log f_D′, the oracle's quadrature gives both probabilities of every
    candidate c in [0, sup]; each direction keeps the ``k`` thresholds whose events would have
    the largest certified log-ratio log(P_lower / P_upper) if the counts were their
    expectations under ``n_draws`` draws (the Clopper–Pearson level the test will use). The
    choice only affects power: the certification is valid for any events fixed in advance.

    Returns
    -------
    (list of float, list of float)
        Thresholds for the two directions.
    """
    alpha = alpha_total / (2 * k) / 2.0
    pd = weights * np.exp(log_f_d - np.max(log_f_d))
    pe = weights * np.exp(log_f_e - np.max(log_f_e))
    pd, pe = pd / pd.sum(), pe / pe.sum()
    out = []
    for s, pa, pb in ((stat_grid, pd, pe), (-stat_grid, pe, pd)):
        top = max(0.0, float(np.max(s)))
        cands = np.linspace(0.0, top, n_candidates, endpoint=False)
        scores = []
        for c in cands:
            ka = int(round(n_draws * pa[s > c].sum()))
            kb = int(round(n_draws * pb[s > c].sum()))
            lo, hi = cp_lower(ka, n_draws, alpha), cp_upper(kb, n_draws, alpha)
            scores.append(np.log(lo / hi) if lo > 0 else -np.inf)
        out.append(sorted(float(c) for c in cands[np.argsort(scores)[::-1][:k]]))
    return out[0], out[1]


def distinguishing_bounds(stat_d, stat_e, thresholds, epsilon, alpha_total):
    """Clopper–Pearson bounds for the events of a black-box distinguishing test.

    Parameters
    ----------
    stat_d, stat_e : ndarray
        The oracle's log f_D(z) − log f_D′(z) at the draws made under D and under D′.
    thresholds : (sequence of float, sequence of float)
        Event A_c = {stat > c} for c in the first list is tested as P_D(A_c) vs e^ε P_D′(A_c);
        B_c = {stat < −c} for c in the second as P_D′(B_c) vs e^ε P_D(B_c). Chosen from the
        oracle before any draw is made (:func:`event_thresholds`).
    epsilon : float
    alpha_total : float
        Family-wise error: each of the k event-directions gets alpha_total / k, split equally
        between its two one-sided bounds, so a correct ε-DP mechanism certifies
        ``excess > δ`` anywhere with chance ≤ alpha_total.

    Returns
    -------
    list of EventBound
    """
    up, down = (list(t) for t in thresholds)
    alpha = alpha_total / (len(up) + len(down)) / 2.0
    cases = [("D over D'", c, stat_d, stat_e, stat_d > c, stat_e > c) for c in up]
    cases += [("D' over D", c, stat_e, stat_d, stat_e < -c, stat_d < -c) for c in down]
    out = []
    for name, c, sa, sb, hit_a, hit_b in cases:
        ka, kb = int(hit_a.sum()), int(hit_b.sum())
        p_lo = cp_lower(ka, sa.size, alpha)
        q_hi = cp_upper(kb, sb.size, alpha)
        eps_lo = max(0.0, float(np.log(p_lo / q_hi))) if p_lo > 0 else 0.0
        out.append(EventBound(name, float(c), ka, kb, p_lo, q_hi,
                              p_lo - np.exp(epsilon) * q_hi, eps_lo))
    return out


def chi_square_pvalue(bin_of_draws, expected_probs):
    """Pearson χ² goodness-of-fit p-value of the draws' bins against expected probabilities."""
    expected_probs = np.asarray(expected_probs, float)
    counts = np.bincount(bin_of_draws, minlength=expected_probs.size)
    n = counts.sum()
    exp_counts = n * expected_probs / expected_probs.sum()
    small = exp_counts < 5  # pool sparse bins (χ² needs expected counts ≥ 5)
    if small.any():
        pooled_e, pooled_c = exp_counts[small].sum(), counts[small].sum()
        exp_counts, counts = exp_counts[~small], counts[~small]
        if pooled_e >= 5:
            exp_counts, counts = np.append(exp_counts, pooled_e), np.append(counts, pooled_c)
        else:
            i = int(np.argmax(exp_counts))
            exp_counts[i] += pooled_e
            counts[i] += pooled_c
    chi2 = np.sum((counts - exp_counts) ** 2 / exp_counts)
    return float(stats.chi2.sf(chi2, exp_counts.size - 1))


def level_bins(log_f_grid, weights, n_levels):
    """Cut points splitting the normalized grid mass into ``n_levels`` bins of log-density."""
    order = np.argsort(log_f_grid)
    mass = weights[order] * np.exp(log_f_grid[order] - log_f_grid.max())
    cdf = np.cumsum(mass) / mass.sum()
    idx = np.searchsorted(cdf, np.arange(1, n_levels) / n_levels)
    return log_f_grid[order][idx]
