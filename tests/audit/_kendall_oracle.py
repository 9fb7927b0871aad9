r"""The audit's own geometry of Kendall's planar shape space Σᵏ₂ = CP^{k−2}, in complex numbers.

Nothing here imports the library; :mod:`tests.audit.test_kendall4` checks every formula against
finite differences, Monte Carlo and (for the points exchanged with the black box) the public
``KendallShape`` geometry.

Points and vectors
    A preshape is a complex vector z ∈ Cᵏ (landmark j at x_j + i y_j) with Σ_j z_j = 0 and
    ‖z‖ = 1; z and e^{iθ} z are the same shape. ⟨a, b⟩_C = Σ_j conj(a_j) b_j, the metric is
    Re ⟨a, b⟩_C. The tangent space at z is the *horizontal* space
    H_z = {w : Σ_j w_j = 0, ⟨z, w⟩_C = 0} (orthogonal to the rotation direction i z and to
    the radial direction z), of real dimension 2(k − 2) = 2m; its vectors are represented at
    the given representative z (rotating z rotates them with it).

Geodesics, distance, Exp, Log
    With c = ⟨x, y⟩_C, the rotated representative y′ = y e^{−i arg c} is the one closest to x
    (⟨x, y′⟩ = |c| real): d(x, y) = arccos |c| = atan2(‖y′ − |c| x‖, |c|) (stable form),
    Log_x y = θ (y′ − |c| x)/‖y′ − |c| x‖ ∈ H_x (θ = d(x, y)), Exp_x v = cos‖v‖ x +
    (sin‖v‖/‖v‖) v: horizontal great circles of the preshape sphere are the geodesics.
    Parallel transport along the horizontal great circle γ(r) = cos r x + sin r u (u ∈ H_x
    unit): u ↦ γ′(r), i u ↦ i γ′(r), every vector of H_x complex-orthogonal to u is kept (its
    derivative along γ is zero, and d/dr (i γ′) = −i γ is vertical).

Curvature and volume
    Along γ the curvature operator R(·, γ′)γ′ has eigenvalue 4 on i γ′ (the holomorphic
    direction: sectional curvature 4) and 1 on the other 2m − 2 directions of γ′^⊥. Jacobi
    fields with J(0) = 0 are therefore sin(2r)/2 along i γ′ and sin r on the others, so the
    volume element in geodesic polar coordinates about any point is
    sin^{2m−2}(ρ) · sin(2ρ)/2 dρ dΩ_{2m−1} and in normal coordinates
    J(ρ) = (sin ρ/ρ)^{2m−2} · sin(2ρ)/(2ρ). For m = 2 (k = 4 landmarks, CP²):
    vol B_r = |S³| ∫₀^r sin²ρ sinρ cosρ dρ = π² sin⁴(r)/2, vol CP² = π²/2, and the Laplace
    normalizer (a = 1/σ, e = e^{−aπ/2}, using sin³ρ cos ρ = (2 sin 2ρ − sin 4ρ)/8)

    .. math:: Z(\sigma) = \int_{CP^2} e^{-d(m, z)/\sigma}\,dV(z)
              = \pi^2\Big[\frac{1 + e}{a^2 + 4} - \frac{1 - e}{a^2 + 16}\Big],

    the same for every centre m (homogeneous space).

Regression gradients (Huber-clipped energy E(p, v) = (1/n) Σ ρ_τ(d(Exp_p(t_i v), y_i)))
    For one term with u = t v, s = ‖u‖, ê = u/s, q = Exp_p(u) = cos s p + sin s ê and the
    clipped residual w = clip_τ(Log_q y) (∇_q ρ_τ(d(q, y)) = −w), split w at q into
    α = Re⟨γ′(s), w⟩ along γ′(s) = −sin s p + cos s ê, β = Re⟨i γ′(s), w⟩ along i γ′(s), and the
    rest w_⊥ (complex-orthogonal to p and ê, parallel along γ). Jacobi fields along γ scale
    the variation of p (with u parallel-transported: J(0) = δp, J′(0) = 0) by 1 along ê,
    cos 2s along i ê and cos s on the rest, and the variation of u (J(0) = 0, J′(0) = δu) by 1,
    sin(2s)/(2s) and sin(s)/s. The adjoints read them backwards:
    ∇_p = −(α ê + cos(2s) β i ê + cos(s) w_⊥), ∇_u = −(α ê + (sin 2s/2s) β i ê + (sin s/s) w_⊥),
    and ∇_v of the term is t ∇_u (at s = 0 both are −w). Every factor has modulus ≤ 1, so each
    term has ‖∇_p‖, ‖∇_v‖ ≤ τ (t ∈ [0, 1]): the sensitivities Δ_p = Δ_v = 2τ/n.
"""

from __future__ import annotations

import numpy as np

from . import _oracle as O


# ============================================================================ basics
def to_complex(x):
    """Real (..., k, 2) landmark arrays → complex (..., k)."""
    x = np.asarray(x, dtype=float)
    return x[..., 0] + 1j * x[..., 1]


def to_real(z):
    """Complex (..., k) → real (..., k, 2)."""
    z = np.asarray(z)
    return np.stack([z.real, z.imag], axis=-1)


def _sum4(p):
    """``np.sum(p, axis=-1)`` of complex p (..., 4) contiguous in its last axis, written out in
    the order numpy's pairwise sum adds four complex numbers (checked at import, else np.sum)."""
    return (p[..., 0] + p[..., 1]) + (p[..., 2] + p[..., 3])


def _sum4_is_numpys():
    rng = np.random.default_rng(0)
    p = rng.normal(size=(1000, 4)) + 1j * rng.normal(size=(1000, 4))
    p *= 10.0 ** rng.integers(-8, 8, size=p.shape)
    p.flat[::3] = 0.0
    p.flat[1::5] = complex(-0.0, -0.0)
    a, b = np.sum(p, axis=-1), _sum4(p)
    return bool(np.array_equal(a, b) and np.array_equal(np.signbit(a.real), np.signbit(b.real))
                and np.array_equal(np.signbit(a.imag), np.signbit(b.imag)))


#: Whether :func:`_sum4` gives numpy's sums bit for bit here (herm's fast path).
_SUM4 = _sum4_is_numpys()


def herm(a, b):
    """⟨a, b⟩_C = Σ_j conj(a_j) b_j over the last axis."""
    p = np.conj(a) * b
    if _SUM4 and p.shape[-1] == 4 and p.dtype == complex and p.strides[-1] == p.itemsize:
        return _sum4(p)  # the same numbers, without a reduction over four entries per row
    return np.sum(p, axis=-1)


def inner(a, b):
    """The Riemannian (real) inner product Re ⟨a, b⟩_C."""
    return np.real(herm(a, b))


def cnorm(a):
    return np.sqrt(np.maximum(inner(a, a), 0.0))


def sinc(x):
    """sin x / x with the limit 1 at 0."""
    return np.sinc(np.asarray(x, dtype=float) / np.pi)


def preshape(landmarks):
    """Raw landmarks (..., k, 2) → complex preshapes (centred, unit norm)."""
    z = to_complex(landmarks)
    z = z - z.mean(axis=-1, keepdims=True)
    return z / cnorm(z)[..., None]


def helmert(k):
    """(k, k − 1) real matrix whose orthonormal columns span the centred vectors of Rᵏ."""
    h = np.zeros((k, k - 1))
    for j in range(1, k):
        h[:j, j - 1] = 1.0
        h[j, j - 1] = -j
        h[:, j - 1] /= np.sqrt(j * (j + 1))
    return h


# ============================================================================ geometry
def _aligned(x, y):
    """(|c|, u): c = ⟨x, y⟩_C and u = y e^{−i arg c} − |c| x (horizontal at x)."""
    x, y = np.broadcast_arrays(np.asarray(x, complex), np.asarray(y, complex))
    c = herm(x, y)
    mod = np.abs(c)
    phase = np.where(mod > 0, c / np.where(mod > 0, mod, 1.0), 1.0)
    return mod, y * np.conj(phase)[..., None] - mod[..., None] * x


def dist(x, y):
    """Kendall's distance arccos |⟨x, y⟩_C| (stable form)."""
    mod, u = _aligned(x, y)
    return np.arctan2(cnorm(u), mod)


def log(x, y):
    """Log_x y ∈ H_x (at the representative x); 0 on the cut locus (|⟨x, y⟩| = 0)."""
    mod, u = _aligned(x, y)
    s = cnorm(u)
    theta = np.arctan2(s, mod)
    f = np.where((s > 0) & (mod > 0), theta / np.where(s > 0, s, 1.0), 0.0)
    return f[..., None] * u


def exp(x, v):
    x, v = np.broadcast_arrays(np.asarray(x, complex), np.asarray(v, complex))
    nv = cnorm(v)[..., None]
    return np.cos(nv) * x + sinc(nv) * v


def horizontal(x, w):
    """Orthogonal projection of w ∈ Cᵏ onto H_x (centre, then remove ⟨x, w⟩_C x)."""
    x, w = np.broadcast_arrays(np.asarray(x, complex), np.asarray(w, complex))
    w = w - w.mean(axis=-1, keepdims=True)
    return w - herm(x, w)[..., None] * x


def transport_along(x, u_hat, r, w):
    """Parallel transport of w ∈ H_x along γ(ρ) = cos ρ x + sin ρ û to ρ = r (û unit in H_x)."""
    r = np.asarray(r, dtype=float)[..., None]
    a = inner(u_hat, w)[..., None]
    b = inner(1j * u_hat, w)[..., None]
    rest = w - a * u_hat - b * 1j * u_hat
    g_dot = -np.sin(r) * x + np.cos(r) * u_hat
    return a * g_dot + b * 1j * g_dot + rest


def frame(x):
    """A real orthonormal basis of H_x: (..., 2(k − 2), k) complex (e₁, i e₁, e₂, i e₂, …).

    In Helmert coordinates a = Hᵀ x ∈ C^{k−1}, a complete (Householder) QR of [a | I] has a
    unitary Q whose first column is a up to phase; the other columns are a complex orthonormal
    basis of a^⊥, mapped back by H, each with its rotation by i.
    """
    x = np.asarray(x, complex)
    k = x.shape[-1]
    h = helmert(k)
    a = x @ h  # (..., k − 1)
    mat = np.concatenate([a[..., :, None], np.broadcast_to(np.eye(k - 1), a.shape + (k - 1,))],
                         axis=-1)
    q, _ = np.linalg.qr(mat, mode="complete")
    cols = np.swapaxes(q[..., :, 1:], -1, -2) @ h.T  # (..., k − 2, k)
    out = np.stack([cols, 1j * cols], axis=-2)  # (..., k − 2, 2, k)
    return out.reshape(x.shape[:-1] + (2 * (k - 2), k))


def coords(x, v):
    """Coordinates of v ∈ H_x in :func:`frame` (x)."""
    return inner(frame(x), np.asarray(v)[..., None, :])


def from_coords(x, c):
    return np.einsum("...a,...ak->...k", np.asarray(c, float), frame(x))


def align_to(ref, x, v=None):
    """The representative of x (and its vectors v) with ⟨ref, x⟩_C real ≥ 0."""
    c = herm(ref, x)
    mod = np.abs(c)
    phase = np.conj(np.where(mod > 0, c / np.where(mod > 0, mod, 1.0), 1.0))[..., None]
    return (x * phase) if v is None else (x * phase, v * phase)


# ============================================================================ volume, sampling
def volume_density(rho, m):
    """J(ρ) of normal coordinates on CP^m: (sin ρ/ρ)^{2m−2} · sin(2ρ)/(2ρ)."""
    rho = np.asarray(rho, dtype=float)
    return sinc(rho) ** (2 * m - 2) * sinc(2 * rho)


def ball_volume(r):
    """vol B_r on CP² (k = 4): π² sin⁴(r)/2."""
    return 0.5 * np.pi**2 * np.sin(r) ** 4


def random_points(k, size, rng):
    """Uniform points of CP^{k−2}: a standard complex Gaussian on the centred vectors, normalized
    (its law is invariant under the unitary group, which acts transitively)."""
    a = rng.standard_normal((size, k - 1)) + 1j * rng.standard_normal((size, k - 1))
    z = a @ helmert(k).T
    return z / cnorm(z)[..., None]


def random_directions(x, rng):
    """Unit vectors of H_x, uniform on its unit sphere (projected complex Gaussians)."""
    x = np.asarray(x, complex)
    w = horizontal(x, rng.standard_normal(x.shape) + 1j * rng.standard_normal(x.shape))
    return w / cnorm(w)[..., None]


def uniform_tangent_ball(x, radius, rng):
    """Uniform (Lebesgue) vectors of the ball ‖v‖ ≤ radius of H_x, one per point x."""
    x = np.asarray(x, complex)
    dim = 2 * (x.shape[-1] - 2)
    r = radius * rng.uniform(size=x.shape[:-1]) ** (1.0 / dim)
    return r[..., None] * random_directions(x, rng)


class Chart:
    """Normal coordinates c ∈ R^{2m} at a centre: c ↦ Exp_centre(Σ c_a e_a)."""

    def __init__(self, center):
        self.center = np.asarray(center, complex)
        self.frame = frame(self.center)
        self.m = self.center.shape[-1] - 2

    def __call__(self, c):
        c = np.asarray(c, dtype=float)
        return exp(self.center, c @ self.frame)

    def inverse(self, z):
        return inner(self.frame, log(self.center, np.asarray(z))[..., None, :])

    def uniform_ball(self, radius, size, rng):
        """Uniform points (Riemannian volume) of B_radius(centre): uniform coordinates in the
        Euclidean ball, accepted with probability J(ρ) ≤ 1 (radius < π/2)."""
        dim = 2 * self.m
        out, have = [], 0
        while have < size:
            batch = 2 * (size - have) + 64
            c = rng.standard_normal((batch, dim))
            c *= (radius * rng.uniform(size=batch) ** (1 / dim) / enorm(c))[:, None]
            keep = rng.uniform(size=batch) < volume_density(enorm(c), self.m)
            out.append(c[keep])
            have += int(keep.sum())
        return self(np.concatenate(out)[:size])

    def ball_point(self, a, radius):
        """Rows of R^{2m} → points of the open ball B_radius(centre) (smooth, onto)."""
        return self(O.squash_disk(a, radius))


def enorm(c):
    """Euclidean norm over the last axis (of real coordinates)."""
    return np.sqrt(np.sum(np.asarray(c) ** 2, axis=-1))


def project_ball(y, center, radius):
    """Geodesic projection onto B_radius(centre): far points pulled back along the geodesic."""
    y = np.asarray(y, complex)
    d = dist(center, y)
    v = log(np.broadcast_to(center, y.shape), y)
    scale = np.where(d > radius, radius / np.where(d > 0, d, 1.0), 1.0)
    return np.where((d > radius)[..., None], exp(center, v * scale[..., None]), y)


# ============================================================================ Fréchet mean
def frechet_mean_batch(y, tol=1e-13, max_iter=10_000):
    """Fréchet means of data sets (K, n, k) → (K, k): Karcher iteration z ← Exp_z(mean Log_z y)."""
    y = np.asarray(y, complex)
    z = y[:, 0]
    for _ in range(max_iter):
        g = log(z[:, None], y).mean(axis=1)
        if np.max(cnorm(g)) < tol:
            return z
        z = exp(z, g)
        z = z / cnorm(z)[..., None]
    raise RuntimeError("Karcher iteration did not converge")


def frechet_mean(y, **kw):
    return frechet_mean_batch(np.asarray(y, complex)[None], **kw)[0]


def frechet_gradient_norms(z, datasets, chunk=20_000):
    """``[frechet_gradient_norm(z, y) for y in datasets]``, bit for bit, each distinct data
    point's log computed once: a data set's logs are gathered in its own order and averaged as
    there (:func:`log` is elementwise in the data points)."""
    z = np.asarray(z, complex)
    flat = z.reshape(-1, z.shape[-1])
    index, points, columns = {}, [], []
    for y in datasets:
        cols = []
        for row in np.asarray(y, complex):
            cols.append(index.setdefault(row.tobytes(), len(points)))
            if cols[-1] == len(points):
                points.append(row)
        columns.append(np.array(cols))
    points = np.array(points)
    out = [np.empty(flat.shape[0]) for _ in datasets]
    step = max(1, chunk // points.shape[0])
    for i in range(0, flat.shape[0], step):
        logs = log(flat[i:i + step, None], points[None])
        for o, cols in zip(out, columns, strict=True):
            o[i:i + step] = cnorm(logs[:, cols].mean(axis=1))
    return [o.reshape(z.shape[:-1]) for o in out]


def frechet_gradient_norm(z, y, chunk=20_000):
    """‖(1/n) Σ Log_z y_i‖ for points z (..., k) and data y (n, k)."""
    z = np.asarray(z, complex)
    flat = z.reshape(-1, z.shape[-1])
    y = np.asarray(y, complex)
    out = np.empty(flat.shape[0])
    step = max(1, chunk // y.shape[0])
    for i in range(0, flat.shape[0], step):
        out[i:i + step] = cnorm(log(flat[i:i + step, None], y[None]).mean(axis=1))
    return out.reshape(z.shape[:-1])


# ============================================================================ Laplace on CP²
def laplace_log_normalizer(sigma):
    """log ∫_{CP²} exp(−d(m, z)/σ) dV(z) (module docstring)."""
    a = 1.0 / sigma
    e = np.exp(-a * np.pi / 2)
    return np.log(np.pi**2 * ((1 + e) / (a * a + 4) - (1 - e) / (a * a + 16)))


def _exp_sin_integral(a, b, rho):
    """∫₀^ρ e^{−a t} sin(b t) dt."""
    return (b - np.exp(-a * rho) * (a * np.sin(b * rho) + b * np.cos(b * rho))) / (a * a + b * b)


def laplace_radial_cdf(rho, sigma):
    """CDF of d(m, Z) for Z ∝ exp(−d(m, z)/σ) on CP² (radial density ∝ e^{−ρ/σ} sin³ρ cos ρ)."""
    a = 1.0 / sigma
    rho = np.clip(np.asarray(rho, dtype=float), 0.0, np.pi / 2)
    f = lambda r: 2 * _exp_sin_integral(a, 2.0, r) - _exp_sin_integral(a, 4.0, r)  # noqa: E731
    return f(rho) / f(np.pi / 2)


def sample_laplace(center, sigma, size, rng):
    """Exact draws ∝ exp(−d(centre, z)/σ) on CP²: ρ by rejection from Gamma(4, σ) (radial
    density e^{−ρ/σ} ρ³ J(ρ), accept with J(ρ) ≤ 1, reject ρ > π/2), uniform direction."""
    out = np.empty(0)
    while out.size < size:
        rho = rng.gamma(4.0, sigma, size=2 * size)
        keep = (rho < np.pi / 2) & (rng.uniform(size=rho.size) < volume_density(rho, 2))
        out = np.concatenate([out, rho[keep]])
    center = np.broadcast_to(np.asarray(center, complex), (size, np.shape(center)[-1]))
    return exp(center, out[:size, None] * random_directions(center, rng))


# ============================================================================ regression
def huber(d, tau):
    return np.where(d <= tau, 0.5 * d * d, tau * d - 0.5 * tau * tau)


def clip(w, tau):
    nw = cnorm(w)[..., None]
    return w * np.minimum(1.0, tau / np.where(nw > 0, nw, 1.0))


def regression_energy(p, v, t, y, tau):
    """E(p, v) = (1/n) Σ ρ_τ(d(Exp_p(t_i v), y_i)); p, v (..., k), t (n,), y (n, k)."""
    p = np.asarray(p, complex)[..., None, :]
    v = np.asarray(v, complex)[..., None, :]
    q = exp(p, np.asarray(t, float)[:, None] * v)
    return huber(dist(q, y), tau).mean(axis=-1)


def term_gradients(p, u, y, tau):
    """(∇_p, ∇_u) of ρ_τ(d(Exp_p u, y)) for broadcastable p, u ∈ H_p, y (module docstring)."""
    p, u, y = np.broadcast_arrays(np.asarray(p, complex), np.asarray(u, complex),
                                  np.asarray(y, complex))
    s = cnorm(u)[..., None]
    e_hat = np.where(s > 0, u / np.where(s > 0, s, 1.0), 0.0)  # 0 at s = 0: both are −w
    q = np.cos(s) * p + np.sin(s) * e_hat
    w = clip(log(q, y), tau)
    g_dot = -np.sin(s) * p + np.cos(s) * e_hat
    alpha = inner(g_dot, w)[..., None]
    beta = inner(1j * g_dot, w)[..., None]
    rest = w - alpha * g_dot - beta * 1j * g_dot
    gp = -(alpha * e_hat + np.cos(2 * s) * beta * 1j * e_hat + np.cos(s) * rest)
    gu = -(alpha * e_hat + sinc(2 * s) * beta * 1j * e_hat + sinc(s) * rest)
    return gp, gu


def regression_gradient(p, v, t, y, tau, chunk=20_000):
    """(∇_p E, ∇_v E) at footpoints p (B, k) and horizontal vectors v (B, k)."""
    p, v = np.broadcast_arrays(np.atleast_2d(np.asarray(p, complex)),
                               np.atleast_2d(np.asarray(v, complex)))
    t = np.asarray(t, float)
    y = np.asarray(y, complex)
    gp, gv = np.empty(p.shape, complex), np.empty(p.shape, complex)
    step = max(1, chunk // t.size)
    for i in range(0, p.shape[0], step):
        a, b = term_gradients(p[i:i + step, None], t[None, :, None] * v[i:i + step, None],
                              y[None], tau)
        gp[i:i + step] = a.mean(axis=1)
        gv[i:i + step] = (t[None, :, None] * b).mean(axis=1)
    return gp, gv


def joint_gradient_norm(p, v, t, y, tau):
    """‖(∇_p E, ∇_v E)‖ for batches p, v (..., k)."""
    p, v = np.broadcast_arrays(np.asarray(p, complex), np.asarray(v, complex))
    gp, gv = regression_gradient(p.reshape(-1, p.shape[-1]), v.reshape(-1, p.shape[-1]), t, y,
                                 tau)
    return np.sqrt(inner(gp, gp) + inner(gv, gv)).reshape(p.shape[:-1])


def fd_regression_gradient(p, v, t, y, tau, h=1e-6):
    """Coordinates of (∇_p E, ∇_v E) in :func:`frame` (p) by central differences of the energy:
    p moves along Exp_p(±h e_a) carrying v by parallel transport, v moves within H_p."""
    e = frame(p)
    gp, gv = [], []
    for ea in e:
        moved = [exp(p, s * h * ea) for s in (1, -1)]
        carried = [transport_along(p, s * ea, h, v) for s in (1, -1)]
        gp.append((regression_energy(moved[0], carried[0], t, y, tau)
                   - regression_energy(moved[1], carried[1], t, y, tau)) / (2 * h))
        gv.append((regression_energy(p, v + h * ea, t, y, tau)
                   - regression_energy(p, v - h * ea, t, y, tau)) / (2 * h))
    return np.array(gp), np.array(gv)
