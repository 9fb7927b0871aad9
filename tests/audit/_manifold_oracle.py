r"""Independent numpy oracle for the audit on R² and Kendall's shape space Σ²₃, and the
machinery the audits of R², SPD(2), Kendall shape spaces and H² share: quadrature grids of
coordinate balls, adversarial searches, the Fréchet-KNG densities and goodness of fit.

Like :mod:`tests.audit._oracle` (whose sphere geometry, search and statistics are reused), this
module imports nothing from the library: every formula below is written from first principles
and checked in :mod:`tests.audit.test_manifold_oracle` against scipy and finite differences.
SPD(2) is in :mod:`tests.audit._manifold_oracle_spd`.

R² (Euclidean(2))
    d(x, y) = |x − y|, Log_z y = y − z, volume = Lebesgue. The Fréchet gradient is z − ȳ; the
    regression gradients of E(p, v) = (1/n) Σ ρ_τ(|p + t_i v − y_i|) are
    ∇_p E = −(1/n) Σ w_i and ∇_v E = −(1/n) Σ t_i w_i with w_i = clip_τ(y_i − p − t_i v).

Kendall Σ²₃ (KendallShape(3))
    A preshape (3 × 2 real, centred, unit Frobenius norm) is a unit vector of C³ in the plane
    of centred vectors, z = Hᵀ x ∈ S³ ⊂ C² for an orthonormal (Helmert) basis H. The Hopf map
    Φ(z) = (2 Re z̄₁z₂, 2 Im z̄₁z₂, |z₁|² − |z₂|²) ∈ S² is invariant under rotations z ↦ e^{iθ}z
    and satisfies cos d_{S²}(Φz, Φw) = 2 |⟨z, w⟩|² − 1, i.e. d_{S²} = 2 arccos |⟨z, w⟩_C|
    = 2 d_Kendall. So Φ is a homothety (factor 2) from Σ²₃ onto the unit sphere: Kendall's
    geodesics, Exp, Log and transport are the sphere's, lengths are halved and areas quartered.
    Consequences used by the audit (all scale factors cancel in normalized ratios):
    * Laplace exp(−d_K/σ) = exp(−d_S/(2σ)); Fréchet means coincide; B_r ↦ B_{2r};
    * ‖(1/n) Σ Log^K_z y_i‖_K = ½ ‖(1/n) Σ Log^S_z y_i‖_S (KNG: σ_S = 2σ);
    * ρ_τ(d_S/2) = ¼ ρ_{2τ}(d_S), and with the metric scaled by ¼ gradients scale by 4 and
      norms by ½, so the joint regression gradient norm is ½ ‖∇ E_S^{(2τ)}‖_S: Kendall's joint
      KNG with (τ, σ, max speed π/2) is the sphere's with (2τ, 2σ, π).
    A released shooting vector v (horizontal at preshape p) maps to dΦ_p v ∈ T_{Φp} S² with
    |dΦ_p v| = 2 |v|.
"""

from __future__ import annotations

import numpy as np

from . import _oracle as O
from . import _oracle_regression as RG
from ._gauss import leggauss

SQRT2 = np.sqrt(2.0)


# ============================================================================ quadrature
def ball3_grid(radius, n_rho, n_theta=None, n_phi=None):
    """Spherical product grid on the ball |c| ≤ radius of R³ (Lebesgue weights).

    Gauss–Legendre in ρ (weight ρ²) and in cos θ, uniform in φ. Returns coordinates (m, 3) and
    weights (m,), which sum to 4π radius³/3.
    """
    n_theta = n_rho if n_theta is None else n_theta
    n_phi = 2 * n_theta if n_phi is None else n_phi
    x, wx = leggauss(n_rho)
    rho = 0.5 * radius * (x + 1.0)
    w_rho = 0.5 * radius * wx * rho**2
    ct, wt = leggauss(n_theta)
    st = np.sqrt(1.0 - ct**2)
    phi = (np.arange(n_phi) + 0.5) * 2.0 * np.pi / n_phi
    rr, tt, pp = np.meshgrid(rho, np.arange(n_theta), phi, indexing="ij")
    coords = np.stack([rr * st[tt] * np.cos(pp), rr * st[tt] * np.sin(pp), rr * ct[tt]], axis=-1)
    w = (w_rho[:, None, None] * wt[None, :, None] * (2.0 * np.pi / n_phi)
         * np.ones((1, 1, n_phi)))
    return coords.reshape(-1, 3), w.ravel()


def disk_star_grid(apex, radius, n_rho, n_phi):
    """Polar grid of the disk |c| ≤ radius about an interior apex: for each of ``n_phi`` uniform
    angles φ, Gauss–Legendre nodes on [0, s(φ)], s(φ) the distance from the apex to the circle
    along u(φ). Integrands smooth along rays from the apex (e.g. exp(−|c − apex|/σ)) converge
    exponentially. Returns coordinates (m, 2) and Lebesgue weights (ρ dρ dφ)."""
    apex = np.asarray(apex, dtype=float)
    phi = (np.arange(n_phi) + 0.5) * 2.0 * np.pi / n_phi
    u = np.stack([np.cos(phi), np.sin(phi)], axis=-1)
    bu = u @ apex
    s = -bu + np.sqrt(np.maximum(bu**2 - apex @ apex + radius**2, 0.0))
    x, wx = leggauss(n_rho)
    rho = 0.5 * s[:, None] * (x[None] + 1.0)
    w = 0.5 * s[:, None] * wx[None] * rho * (2.0 * np.pi / n_phi)
    coords = apex + rho[..., None] * u[:, None, :]
    return coords.reshape(-1, 2), w.ravel()


def ball3_star_grid(apex, radius, n_rho, n_theta, n_phi=None):
    """Spherical grid of the ball |c| ≤ radius of R³ about an interior apex: Gauss–Legendre in
    cos θ, uniform φ, and for each direction u Gauss–Legendre on [0, s(u)], s(u) the distance
    from the apex to the sphere along u. Returns coordinates (m, 3) and Lebesgue weights."""
    apex = np.asarray(apex, dtype=float)
    n_phi = 2 * n_theta if n_phi is None else n_phi
    ct, wt = leggauss(n_theta)
    st = np.sqrt(1.0 - ct**2)
    phi = (np.arange(n_phi) + 0.5) * 2.0 * np.pi / n_phi
    u = np.stack([st[:, None] * np.cos(phi)[None], st[:, None] * np.sin(phi)[None],
                  np.repeat(ct[:, None], n_phi, axis=1)], axis=-1).reshape(-1, 3)
    w_dir = np.repeat(wt, n_phi) * (2.0 * np.pi / n_phi)
    bu = u @ apex
    s = -bu + np.sqrt(np.maximum(bu**2 - apex @ apex + radius**2, 0.0))
    x, wx = leggauss(n_rho)
    rho = 0.5 * s[:, None] * (x[None] + 1.0)
    w = 0.5 * s[:, None] * wx[None] * rho**2 * w_dir[:, None]
    return (apex + rho[..., None] * u[:, None, :]).reshape(-1, 3), w.ravel()


def _sum_squares_is_numpys():
    """Whether a left-to-right sum of 2, 3 or 4 squares gives ``np.sum(a * a, axis=-1)`` bit for
    bit here (numpy adds fewer than eight floats in order): :func:`norm_last`'s fast path."""
    rng = np.random.default_rng(0)
    for k in (2, 3, 4):
        a = rng.normal(size=(1000, k)) * 10.0 ** rng.integers(-150, 150, size=(1000, k))
        a.flat[::4] = 0.0
        q = a * a
        total = q[..., 0]
        for j in range(1, k):
            total = total + q[..., j]
        if not np.array_equal(np.sum(q, axis=-1), total):
            return False
    return True


_SUM_SQUARES = _sum_squares_is_numpys()


def norm_last(a):
    """Euclidean norm over the last axis."""
    a = np.asarray(a, dtype=float)
    q = a * a
    if _SUM_SQUARES and 2 <= q.shape[-1] <= 4 and q.strides[-1] == q.itemsize:
        total = q[..., 0] + q[..., 1]  # the same sum, without a reduction over a few entries
        for j in range(2, q.shape[-1]):
            total = total + q[..., j]
        return np.sqrt(total)
    return np.sqrt(np.sum(q, axis=-1))


def sinhc(x):
    """sinh(x)/x with the limit 1 at 0."""
    x = np.asarray(x, dtype=float)
    small = np.abs(x) < 1e-4
    safe = np.where(small, 1.0, x)
    return np.where(small, 1.0 + x * x / 6.0, np.sinh(safe) / safe)


# ============================================================================ R²
def r2_project(points, center, radius):
    """Projection onto the closed disk B_radius(center) (strict mode's clipping on R²)."""
    points = np.asarray(points, dtype=float)
    d = norm_last(points - center)
    scale = np.where(d > radius, radius / np.where(d > 0, d, 1.0), 1.0)
    return center + (points - center) * scale[..., None]


def r2_regression_gradient(p, v, t, y, tau):
    """(∇_p E, ∇_v E) of E(p, v) = (1/n) Σ ρ_τ(|p + t_i v − y_i|) for batches p, v (..., 2)."""
    p = np.asarray(p, float)[..., None, :]
    v = np.asarray(v, float)[..., None, :]
    w = _clip2(y - p - t[:, None] * v, tau)
    return -w.mean(axis=-2), -(t[:, None] * w).mean(axis=-2)


def _clip2(w, tau):
    nw = norm_last(w)[..., None]
    return w * np.minimum(1.0, tau / np.where(nw > 0, nw, 1.0))


def r2_regression_energy(p, v, t, y, tau):
    p = np.asarray(p, float)[..., None, :]
    v = np.asarray(v, float)[..., None, :]
    return RG.huber(norm_last(y - p - t[:, None] * v), tau).mean(axis=-1)



# ============================================================================ Kendall Σ²₃
#: Orthonormal basis (columns) of the centred vectors of R³ (Helmert).
HELMERT3 = np.array([[1 / SQRT2, 1 / np.sqrt(6.0)],
                     [-1 / SQRT2, 1 / np.sqrt(6.0)],
                     [0.0, -2 / np.sqrt(6.0)]])


def preshape_to_c2(x):
    """(…, 3, 2) real preshape (centred) → (…, 2) complex: z = Hᵀ (x₀ + i x₁)."""
    x = np.asarray(x, dtype=float)
    zc = x[..., 0] + 1j * x[..., 1]
    zc = zc - zc.mean(axis=-1, keepdims=True)
    return zc @ HELMERT3


def c2_to_preshape(z):
    """(…, 2) complex → (…, 3, 2) real centred landmarks H z."""
    zc = np.asarray(z) @ HELMERT3.T
    return np.stack([zc.real, zc.imag], axis=-1)


def hopf(z):
    """Φ(z) = (2 Re z̄₁z₂, 2 Im z̄₁z₂, |z₁|² − |z₂|²)."""
    z = np.asarray(z)
    w = np.conj(z[..., 0]) * z[..., 1]
    return np.stack([2 * w.real, 2 * w.imag, np.abs(z[..., 0]) ** 2 - np.abs(z[..., 1]) ** 2],
                    axis=-1)


def hopf_push(z, w):
    """dΦ_z(w) for w ∈ C² (tangent to S³ at z)."""
    z, w = np.asarray(z), np.asarray(w)
    d = np.conj(w[..., 0]) * z[..., 1] + np.conj(z[..., 0]) * w[..., 1]
    h = 2 * (np.conj(z[..., 0]) * w[..., 0]).real - 2 * (np.conj(z[..., 1]) * w[..., 1]).real
    return np.stack([2 * d.real, 2 * d.imag, h], axis=-1)


def hopf_section(u):
    """A unit z ∈ C² with Φ(z) = u (u on the unit sphere): z₁ real ≥ 0 in the north
    hemisphere, z₂ real ≥ 0 in the south one (no division by small numbers)."""
    u = np.asarray(u, dtype=float)
    u1, u2, u3 = u[..., 0], u[..., 1], u[..., 2]
    north = u3 >= 0
    a = np.sqrt(np.maximum(0.5 * (1 + u3), 0.0))
    b = np.sqrt(np.maximum(0.5 * (1 - u3), 0.0))
    za = np.stack([a + 0j, (u1 + 1j * u2) / (2 * np.where(north, a, 1.0))], axis=-1)
    zb = np.stack([(u1 - 1j * u2) / (2 * np.where(north, 1.0, b)), b + 0j], axis=-1)
    return np.where(north[..., None], za, zb)


def kendall_to_s2(x):
    """Preshape(s) (…, 3, 2) → points of the unit sphere (…, 3) (Φ after Helmert)."""
    return hopf(preshape_to_c2(x))


def s2_to_kendall(u):
    """Points of the unit sphere → preshapes (…, 3, 2) with kendall_to_s2(result) = u."""
    return c2_to_preshape(hopf_section(u))


def kendall_vector_to_s2(x, v):
    """A tangent vector v (…, 3, 2) at preshape x → dΦ_x v ∈ T_{Φx} S² (length 2|v| if v is
    horizontal)."""
    return hopf_push(preshape_to_c2(x), preshape_to_c2(v))


def herm(x, y):
    """Hermitian product ⟨x, y⟩_C = Σ_j conj(x_j) y_j of preshapes (…, 3, 2)."""
    zx = np.asarray(x, float)[..., 0] + 1j * np.asarray(x, float)[..., 1]
    zy = np.asarray(y, float)[..., 0] + 1j * np.asarray(y, float)[..., 1]
    return np.sum(np.conj(zx) * zy, axis=-1)


def kendall_dist(x, y):
    """Kendall's distance arccos |⟨x, y⟩_C| in the stable form atan2(|y' − |c| x|, |c|)."""
    c = herm(x, y)
    mod = np.abs(c)
    phase = np.where(mod > 0, c / np.where(mod > 0, mod, 1.0), 1.0)
    zx = np.asarray(x, float)[..., 0] + 1j * np.asarray(x, float)[..., 1]
    zy = np.asarray(y, float)[..., 0] + 1j * np.asarray(y, float)[..., 1]
    u = zy * np.conj(phase)[..., None] - mod[..., None] * zx
    return np.arctan2(np.sqrt(np.sum(np.abs(u) ** 2, axis=-1)), mod)


def kendall_log(x, y):
    """Log_x y in the horizontal space at x: align y by the phase of ⟨x, y⟩_C, then the
    sphere's log of the preshape sphere (0 on the cut locus)."""
    c = herm(x, y)
    mod = np.abs(c)
    phase = np.where(mod > 0, c / np.where(mod > 0, mod, 1.0), 1.0)
    zx = np.asarray(x, float)[..., 0] + 1j * np.asarray(x, float)[..., 1]
    zy = np.asarray(y, float)[..., 0] + 1j * np.asarray(y, float)[..., 1]
    u = zy * np.conj(phase)[..., None] - mod[..., None] * zx
    s = np.sqrt(np.sum(np.abs(u) ** 2, axis=-1))
    theta = np.arctan2(s, mod)
    f = np.where(s > 0, theta / np.where(s > 0, s, 1.0), 0.0)[..., None] * u
    return np.stack([f.real, f.imag], axis=-1)


# ============================================================================ searches
def mean_shift_search(pt, n_param, mean_batch, dist, n, delta, rng, steps=150, starts=120):
    """Largest d(m(D), m(D′))/Δ found over neighbouring data sets in a ball.

    ``pt`` maps parameter rows (K, n_param) to points of the ball (onto its interior, so the
    boundary is reached as parameters grow); ``mean_batch`` maps (K, n, …) data sets to means.
    Configurations: one cluster of n − 1 shared points, two clusters (sizes 1 and (n−1)//2),
    and every point free for n ≤ 5; the replaced point and its replacement are free. Returns
    (ratio, D, D′).
    """
    best = (-np.inf, None)
    k = n_param

    def shift(shared, y, w):
        m1 = mean_batch(np.concatenate([shared, y[:, None]], axis=1))
        m2 = mean_batch(np.concatenate([shared, w[:, None]], axis=1))
        return dist(m1, m2) / delta

    def consider(params, build):
        nonlocal best
        x, f = O.local_search(lambda a: shift(*build(a)), params, rng, steps=steps)
        i = int(np.argmax(f))
        if f[i] > best[0]:
            shared, y, w = build(x[i:i + 1])
            best = (float(f[i]), (shared[0], y[0], w[0]))

    rep = lambda p, m: np.repeat(p[:, None], m, axis=1)
    consider(rng.normal(scale=2.0, size=(starts, 3 * k)),
             lambda a: (rep(pt(a[:, :k]), n - 1), pt(a[:, k:2 * k]), pt(a[:, 2 * k:])))
    for j in sorted({1, (n - 1) // 2}):
        if 1 <= j <= n - 2:
            consider(rng.normal(scale=2.0, size=(starts, 4 * k)),
                     lambda a, j=j: (np.concatenate([rep(pt(a[:, :k]), j),
                                                     rep(pt(a[:, k:2 * k]), n - 1 - j)], axis=1),
                                     pt(a[:, 2 * k:3 * k]), pt(a[:, 3 * k:])))
    if n <= 5:
        consider(rng.normal(scale=2.0, size=(starts, (n + 1) * k)),
                 lambda a: (np.stack([pt(a[:, j * k:(j + 1) * k]) for j in range(n - 1)], axis=1),
                            pt(a[:, (n - 1) * k:n * k]), pt(a[:, n * k:])))
    ratio, (shared, y, w) = best
    return ratio, np.concatenate([shared, y[None]]), np.concatenate([shared, w[None]])


def kng_grid_log_density(log_coords, grid_pts, weights, shared_sum, new, n, sigma):
    """Normalized log-densities of the Fréchet KNG on a grid for data sets shared ∪ {new_k}.

    ``shared_sum`` (G, dim): Σ over the shared points of the coordinates of Log_z y at the grid;
    ``new`` (K, …): candidate new points. Returns (K, G).
    """
    g = norm_last((shared_sum[None] + log_coords(grid_pts[None], new[:, None])) / n)
    log_f = -g / sigma
    m = log_f.max(axis=1, keepdims=True)
    return log_f - (m + np.log(np.sum(weights * np.exp(log_f - m), axis=1, keepdims=True)))


def kng_pair_search(log_coords, pt, n_param, grid_pts, weights, configurations, n, sigma, rng,
                    starts=40, steps=60):
    """Neighbouring pair with the largest coarse-grid sup |log f_D − log f_D′| of the Fréchet KNG.

    For each configuration of the n − 1 shared points, a vectorized random-restart (1+1) search
    over the replaced point and its replacement (``pt`` maps parameters into the ball).
    Returns (value, D, D′, configuration name).
    """
    best = (-np.inf, None)
    k = n_param
    for name, shared in configurations.items():
        s_sum = log_coords(grid_pts[:, None], shared[None]).sum(axis=1)

        def objective(a, s_sum=s_sum):
            ld = kng_grid_log_density(log_coords, grid_pts, weights, s_sum, pt(a[:, :k]), n,
                                      sigma)
            le = kng_grid_log_density(log_coords, grid_pts, weights, s_sum, pt(a[:, k:]), n,
                                      sigma)
            return np.max(np.abs(ld - le), axis=1)

        x, f = O.local_search(objective, rng.normal(scale=2.5, size=(starts, 2 * k)), rng,
                              steps=steps)
        i = int(np.argmax(f))
        if f[i] > best[0]:
            y, w = pt(x[i:i + 1, :k])[0], pt(x[i:i + 1, k:])[0]
            best = (float(f[i]), (np.concatenate([shared, y[None]]),
                                  np.concatenate([shared, w[None]]), name))
    value, (d_set, e_set, name) = best
    return value, d_set, e_set, name


class KNGOracle:
    """Normalized Fréchet-KNG densities f ∝ exp(−scale ‖(1/n) Σ Log_z y_i‖/σ) of D and D′.

    Parameters
    ----------
    log_coords : callable
        (z, y) ↦ coordinates of Log_z y in an orthonormal frame at z (broadcasting).
    chart : callable
        Normal coordinates (…, dim) at the public centre ↦ points.
    grid : (ndarray, ndarray)
        Coordinates of the quadrature nodes in the chart and their weights (volume included).
    radius : float
        The chart's ball (the support).
    scale : float
        Multiplies the gradient norm (½ for Kendall computed on the unit sphere).
    star_grids : dict, optional
        ``{"D": (coords, weights), "E": ...}``: grids about each density's mode used for the
        normalizers instead of ``grid``.
    """

    def __init__(self, log_coords, chart, grid, radius, d_set, e_set, sigma, scale=1.0,
                 star_grids=None):
        self.log_coords, self.chart, self.radius = log_coords, chart, radius
        self.d_set, self.e_set, self.sigma, self.scale = d_set, e_set, sigma, scale
        self.coords, self.weights = grid
        self.points = chart(self.coords)
        self.g_grid = dict(zip("DE", self.g_pair(self.points), strict=True))
        self.log_c = {w: O.log_integral(-self.g_grid[w] / sigma, self.weights) for w in "DE"}
        if star_grids is not None:
            # normalizers from grids about each density's mode (the Fréchet mean, where g = 0):
            # the integrand is smooth along rays from it, so concentrated targets converge fast
            for which in "DE":
                coords, w = star_grids[which]
                self.log_c[which] = O.log_integral(-self.g(chart(coords), which) / sigma, w)

    def g(self, z, which, chunk=20_000):
        data = self.d_set if which == "D" else self.e_set
        z = np.asarray(z, dtype=float)
        flat = z.reshape(-1, z.shape[-1])
        out = np.empty(flat.shape[0])
        step = max(1, chunk // data.shape[0])
        for i in range(0, flat.shape[0], step):
            lc = self.log_coords(flat[i:i + step, None], data[None])
            out[i:i + step] = self.scale * norm_last(lc.mean(axis=1))
        return out.reshape(z.shape[:-1])

    def g_pair(self, z, chunk=20_000):
        """``(g(z, "D"), g(z, "E"))``, bit for bit, with the log of each point the data sets
        share computed once: each data set's logs are gathered in its own order and averaged
        as in :meth:`g` (``log_coords`` is elementwise in the data points)."""
        z = np.asarray(z, dtype=float)
        flat = z.reshape(-1, z.shape[-1])
        index, points, columns = {}, [], []
        for data in (self.d_set, self.e_set):
            cols = []
            for row in np.asarray(data):
                cols.append(index.setdefault(row.tobytes(), len(points)))
                if cols[-1] == len(points):
                    points.append(row)
            columns.append(np.array(cols))
        points = np.array(points)
        out = (np.empty(flat.shape[0]), np.empty(flat.shape[0]))
        step = max(1, chunk // points.shape[0])
        for i in range(0, flat.shape[0], step):
            lc = self.log_coords(flat[i:i + step, None], points[None])
            for o, cols in zip(out, columns, strict=True):
                o[i:i + step] = self.scale * norm_last(lc[:, cols].mean(axis=1))
        return tuple(o.reshape(z.shape[:-1]) for o in out)

    def log_f(self, z, which="D"):
        return -self.g(z, which) / self.sigma - self.log_c[which]

    def grid_log_f(self, which="D"):
        return -self.g_grid[which] / self.sigma - self.log_c[which]

    def stat(self, z):
        """log f_D(z) − log f_D′(z) (the numbers of ``log_f(z, "D") - log_f(z, "E")``)."""
        g_d, g_e = self.g_pair(z)
        return (-g_d / self.sigma - self.log_c["D"]) - (-g_e / self.sigma - self.log_c["E"])

    def grid_stat(self):
        return self.grid_log_f("D") - self.grid_log_f("E")

    def thresholds(self, n_draws, alpha):
        """Event thresholds from the oracle's grid densities (before any draw)."""
        return O.event_thresholds(self.grid_stat(), self.grid_log_f("D"), self.grid_log_f("E"),
                                  self.weights, n_draws, alpha)

    def sup_abs_stat(self, rng, n_starts=8, steps=60):
        """sup |stat| over the grid, refined by a local search in the chart from the best nodes
        (points outside the ball are excluded)."""
        s = self.grid_stat()
        best = float(np.max(np.abs(s)))
        for sign in (1.0, -1.0):
            c0 = self.coords[np.argsort(-sign * s)[:n_starts]]

            def objective(c, sign=sign):
                inside = norm_last(c) <= self.radius
                c_in = np.where(inside[:, None], c, 0.0)
                return np.where(inside, sign * self.stat(self.chart(c_in)), -np.inf)

            _, f = O.local_search(objective, c0, rng, steps=steps, scale=0.02 * self.radius)
            best = max(best, float(f.max()))
        return best


# ============================================================================ goodness of fit
def gof_pvalue(log_f_grid, weights, sector_grid, log_f_draws, sector_draws, n_sectors,
               n_levels=8):
    """Pearson χ² of draws against the oracle: bins = level set of log f × sector.

    Level cut points split the oracle's mass into ``n_levels`` equal parts; the expected bin
    probabilities come from the quadrature grid.
    """
    edges = O.level_bins(log_f_grid, weights, n_levels)
    bins_grid = np.searchsorted(edges, log_f_grid) * n_sectors + sector_grid
    probs = np.bincount(bins_grid, weights=weights * np.exp(log_f_grid - log_f_grid.max()),
                        minlength=n_levels * n_sectors)
    bins_draws = np.searchsorted(edges, log_f_draws) * n_sectors + sector_draws
    return O.chi_square_pvalue(bins_draws, probs)


def quadrant(c):
    """Quadrant (0..3) of the first two coordinates."""
    c = np.asarray(c, dtype=float)
    return (c[..., 0] > 0).astype(int) * 2 + (c[..., 1] > 0).astype(int)
