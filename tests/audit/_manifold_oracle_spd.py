r"""Independent numpy oracle for the audit on SPD(2): geometry, Laplace law and samplers.

Like :mod:`tests.audit._manifold_oracle` (whose :func:`norm_last` and :func:`sinhc` are reused)
this module imports nothing from the library; every formula below is checked in
:mod:`tests.audit.test_manifold_oracle` against scipy and finite differences.

SPD(2), affine-invariant metric ⟨U, V⟩_P = tr(P⁻¹ U P⁻¹ V)
    A symmetric 2×2 matrix [[a, c], [c, b]] is stored as the triple (a, b, c) on the last axis.
    Its spectral calculus is closed form: with mid = (a + b)/2 and half = √(((a − b)/2)² + c²)
    the eigenvalues are mid ± half, and f(A) = α I + β (A − mid I) with
    α = (f(mid + half) + f(mid − half))/2, β = (f(mid + half) − f(mid − half))/(2 half)
    (the eigendecomposition written out; divided differences in cancellation-free form). Then
    Log_P Q = P^½ log(P^-½ Q P^-½) P^½, Exp_P V = P^½ exp(P^-½ V P^-½) P^½,
    d(P, Q) = ‖log(P^-½ Q P^-½)‖_F, ‖V‖_P = ‖P^-½ V P^-½‖_F.
    Normal coordinates at I: c ∈ R³ ↦ X = [[c₁, c₃/√2], [c₃/√2, c₂]] (a Frobenius-orthonormal
    basis of Sym(2)) ↦ exp(X). Volume density in these coordinates
    J(X) = sinh(|a − b|/2) / (|a − b|/2), a, b the eigenvalues of X: the curvature operator
    R(·, X)X has eigenvalue −(a − b)²/4 on the off-diagonal direction of X's eigenbasis and 0 on
    the two commuting ones, and the Jacobi field of a symmetric space scales by sinh √−λ/√−λ.
    (Checked against a finite-difference Jacobian of exp with the metric at exp(X).) Writing
    X = s I/√2 + W (W traceless, |a − b| = √2 ‖W‖_F) and using cylindrical coordinates gives
    the Laplace normalizer ∫ e^{−‖X‖/σ} J dX = 2√2 π² ∫₀^∞ e^{−ρ/σ} ρ L₀(ρ/√2) dρ (L₀ the
    modified Struve function), finite iff 1/σ > 1/√2.
"""

from __future__ import annotations

import numpy as np
from scipy import integrate, special

from . import _oracle as O
from ._gauss import leggauss
from ._manifold_oracle import SQRT2, norm_last, sinhc


# ============================================================================ SPD(2)
def sym_from_coords(c):
    """Normal coordinates c ∈ R³ (Frobenius-orthonormal basis) → triple (a, b, c₃/√2)."""
    c = np.asarray(c, dtype=float)
    return np.stack([c[..., 0], c[..., 1], c[..., 2] / SQRT2], axis=-1)


def coords_from_sym(s):
    """Triple (a, b, c) → coordinates (a, b, √2 c); |coords| = ‖[[a, c], [c, b]]‖_F."""
    s = np.asarray(s, dtype=float)
    return np.stack([s[..., 0], s[..., 1], SQRT2 * s[..., 2]], axis=-1)


def to_matrix(s):
    """Triples (..., 3) → symmetric matrices (..., 2, 2)."""
    s = np.asarray(s, dtype=float)
    return np.stack([np.stack([s[..., 0], s[..., 2]], -1), np.stack([s[..., 2], s[..., 1]], -1)],
                    axis=-2)


def from_matrix(m):
    """Symmetric matrices (..., 2, 2) → triples (symmetrized)."""
    m = np.asarray(m, dtype=float)
    return np.stack([m[..., 0, 0], m[..., 1, 1], 0.5 * (m[..., 0, 1] + m[..., 1, 0])], axis=-1)


def _parts(s):
    a, b, c = s[..., 0], s[..., 1], s[..., 2]
    mid = 0.5 * (a + b)
    half = np.hypot(0.5 * (a - b), c)
    return a, b, c, mid, half


def _calculus(s, alpha, beta):
    a, b, c, mid, _ = _parts(s)
    return np.stack([alpha + beta * (a - mid), alpha + beta * (b - mid), beta * c], axis=-1)


def sym_exp(s):
    """Matrix exponential of symmetric triples."""
    s = np.asarray(s, dtype=float)
    _, _, _, mid, half = _parts(s)
    e = np.exp(mid)
    return _calculus(s, e * np.cosh(half), e * sinhc(half))


def spd_logm(s):
    """Matrix logarithm of SPD triples: α = ½ log det, β = artanh(half/mid)/half."""
    s = np.asarray(s, dtype=float)
    a, b, c, mid, half = _parts(s)
    det = a * b - c * c
    u = half / mid
    small = u < 1e-5
    beta = np.where(small, (1.0 + u * u / 3.0) / mid,
                    np.arctanh(np.where(small, 0.0, u)) / np.where(small, 1.0, half))
    return _calculus(s, 0.5 * np.log(det), beta)


def spd_sqrt(s):
    """P^½ = (P + √det I)/√(tr P + 2√det) for SPD triples."""
    s = np.asarray(s, dtype=float)
    a, b, c = s[..., 0], s[..., 1], s[..., 2]
    r = np.sqrt(a * b - c * c)
    t = np.sqrt(a + b + 2.0 * r)
    return np.stack([(a + r) / t, (b + r) / t, c / t], axis=-1)


def spd_invsqrt(s):
    """P^-½, the inverse of :func:`spd_sqrt` (det P^½ = √det P)."""
    s = np.asarray(s, dtype=float)
    a, b, c = s[..., 0], s[..., 1], s[..., 2]
    r = np.sqrt(a * b - c * c)
    t = np.sqrt(a + b + 2.0 * r) * r
    return np.stack([(b + r) / t, (a + r) / t, -c / t], axis=-1)


def sandwich(m, y):
    """M Y M for symmetric triples M, Y (broadcasting)."""
    m1, m2, m3 = m[..., 0], m[..., 1], m[..., 2]
    y1, y2, y3 = y[..., 0], y[..., 1], y[..., 2]
    u00, u01 = m1 * y1 + m3 * y3, m1 * y3 + m3 * y2
    u10, u11 = m3 * y1 + m2 * y3, m3 * y3 + m2 * y2
    return np.stack([u00 * m1 + u01 * m3, u10 * m3 + u11 * m2, u00 * m3 + u01 * m2], axis=-1)


def spd_whitened_log(z, y):
    """log(Z^-½ Y Z^-½): the Riemannian log Log_Z Y in the Z-orthonormal frame (triples)."""
    z, y = np.asarray(z, float), np.asarray(y, float)
    return spd_logm(sandwich(spd_invsqrt(z), y))


def spd_log(z, y):
    """Riemannian logarithm Log_Z Y = Z^½ log(Z^-½ Y Z^-½) Z^½."""
    return sandwich(spd_sqrt(z), spd_whitened_log(z, y))


def _split3(s):
    return s[..., 0], s[..., 1], s[..., 2]


def _sandwich3(m, y):
    """:func:`sandwich` on component triples (the same operations, no stacking)."""
    m1, m2, m3 = m
    y1, y2, y3 = y
    u00, u01 = m1 * y1 + m3 * y3, m1 * y3 + m3 * y2
    u10, u11 = m3 * y1 + m2 * y3, m3 * y3 + m2 * y2
    return u00 * m1 + u01 * m3, u10 * m3 + u11 * m2, u00 * m3 + u01 * m2


def _sym_exp3(s):
    """:func:`sym_exp` on component triples (the same operations as _parts/_calculus)."""
    a, b, c = s
    mid = 0.5 * (a + b)
    half = np.hypot(0.5 * (a - b), c)
    e = np.exp(mid)
    alpha, beta = e * np.cosh(half), e * sinhc(half)
    return alpha + beta * (a - mid), alpha + beta * (b - mid), beta * c


def _stack3(parts):
    """Stack three broadcastable component arrays along a new last axis (as np.stack does,
    after broadcasting them to a common shape)."""
    shape = np.broadcast_shapes(*(np.shape(q) for q in parts))
    out = np.empty(shape + (3,))
    for k, q in enumerate(parts):
        out[..., k] = q
    return out


def spd_exp(z, v):
    """Riemannian exponential Exp_Z V = Z^½ exp(Z^-½ V Z^-½) Z^½.

    Computed on the triples' components (no intermediate stacking): the same elementwise
    operations as ``sandwich(spd_sqrt(z), sym_exp(sandwich(spd_invsqrt(z), v)))``, so the same
    numbers bit for bit."""
    z, v = np.asarray(z, float), np.asarray(v, float)
    inner = _sym_exp3(_sandwich3(_split3(spd_invsqrt(z)), _split3(v)))
    return _stack3(_sandwich3(_split3(spd_sqrt(z)), inner))


def spd_norm(z, v):
    """‖V‖_Z = ‖Z^-½ V Z^-½‖_F."""
    return norm_last(coords_from_sym(sandwich(spd_invsqrt(z), v)))


def spd_dist(p, q):
    """d(P, Q) = √(log² λ₁ + log² λ₂), λ the eigenvalues of P^-½ Q P^-½ (λ₂ = det / λ₁)."""
    # sandwich and _parts on the components (the same operations, no intermediate stack)
    a, b, c = _sandwich3(_split3(spd_invsqrt(np.asarray(p, float))),
                         _split3(np.asarray(q, float)))
    mid = 0.5 * (a + b)
    half = np.hypot(0.5 * (a - b), c)
    l1 = mid + half
    log1 = np.log(l1)
    log2 = np.log(a * b - c * c) - log1
    return np.hypot(log1, log2)


def spd_volume_density(c):
    """J(X) = sinh(|a − b|/2)/(|a − b|/2) at normal coordinates c (|a − b| from the triple)."""
    s = sym_from_coords(c)
    _, _, _, _, half = _parts(s)
    return sinhc(half)  # |a − b| / 2 = half


def spd_chart(c, base=None):
    """Exp_base of the tangent vector with coordinates c in a base-orthonormal frame
    (base^½ X base^½, X from c); base = I by default."""
    x = sym_from_coords(c)
    if base is None:
        return sym_exp(x)
    return sandwich(spd_sqrt(base), sym_exp(x))


def spd_chart_inv(z, base=None):
    """Normal coordinates of z at base (inverse of :func:`spd_chart`)."""
    if base is None:
        return coords_from_sym(spd_logm(z))
    return coords_from_sym(spd_whitened_log(base, z))


IDENTITY = np.array([1.0, 1.0, 0.0])


def spd_project_ball(y, radius, base=None):
    """Geodesic projection onto B_radius(base): pull Exp_base(X) back to
    Exp_base(radius X/‖X‖) (base = I by default)."""
    c = spd_chart_inv(y, base)
    d = norm_last(c)
    scale = np.where(d > radius, radius / np.where(d > 0, d, 1.0), 1.0)
    return spd_chart(c * scale[..., None], base)


def spd_frechet_mean(y, tol=1e-13, max_iter=1000):
    """Karcher mean of SPD triples y (..., n, 3) → (..., 3): Z ← Z^½ exp(mean log(Z^-½ Y Z^-½)) Z^½,
    started at the log-Euclidean mean."""
    y = np.asarray(y, dtype=float)
    z = sym_exp(spd_logm(y).mean(axis=-2))
    for _ in range(max_iter):
        g = spd_whitened_log(z[..., None, :], y).mean(axis=-2)
        z = sandwich(spd_sqrt(z), sym_exp(g))
        if np.max(norm_last(coords_from_sym(g))) < tol:
            return z
    raise RuntimeError("Karcher iteration did not converge")


def spd_log_coords(z, y):
    """Coordinates of Log_z y in the z-orthonormal frame, (…, 3): norms and sums at one z are
    those of T_z SPD."""
    return coords_from_sym(spd_whitened_log(z, y))


def spd_laplace_log_normalizer(sigma):
    """log ∫_{SPD(2)} e^{−d(m, z)/σ} dvol(z) = log 2√2 π² ∫₀^∞ e^{−ρ/σ} ρ L₀(ρ/√2) dρ.

    The integrand is rescaled by e^{ρ/√2} inside (L₀(x) ~ I₀(x) ~ e^x), so quad sees a decaying
    function; finite iff 1/σ > 1/√2.
    """
    b = 1.0 / sigma - 1.0 / SQRT2
    if b <= 0:
        return np.inf
    f = lambda r: np.exp(-b * r) * r * _scaled_struve(r / SQRT2)
    val, _ = integrate.quad(f, 0.0, 80.0 / b, limit=400, epsabs=0, epsrel=1e-12)
    return float(np.log(2.0 * SQRT2 * np.pi**2 * val))


def _scaled_struve(x):
    """L₀(x) e^{−x}; for x > 40, I₀(x) e^{−x} (L₀ − I₀ = O(1/x), negligible against e^x)."""
    x = np.asarray(x, dtype=float)
    small = x <= 40.0
    return np.where(small, special.modstruve(0, np.where(small, x, 0.0)) * np.exp(-x),
                    special.ive(0, x))


def spd_ball_log_volume(radius):
    """log vol B_radius(I) = log 2√2 π² ∫₀^r ρ L₀(ρ/√2) dρ."""
    val, _ = integrate.quad(lambda r: r * special.modstruve(0, r / SQRT2), 0.0, radius,
                            epsabs=0, epsrel=1e-13)
    return float(np.log(2.0 * SQRT2 * np.pi**2 * val))


def spd_radial_cdf_table(sigma, r_max, n=4001):
    """(ρ, CDF) of d(m, Z) for Z ∝ e^{−d(m, z)/σ}: radial density ∝ e^{−ρ/σ} ρ L₀(ρ/√2)."""
    rho = np.linspace(0.0, r_max, n)
    dens = np.exp(-rho * (1.0 / sigma - 1.0 / SQRT2)) * rho * _scaled_struve(rho / SQRT2)
    cdf = integrate.cumulative_trapezoid(dens, rho, initial=0.0)
    return rho, cdf / cdf[-1]


def spd_laplace_cell_probs(sigma, rho_edges, n_gl=24):
    """Probabilities of the cells (radius bin) × (sector) of the Laplace law on SPD(2) about m.

    Sectors in normal coordinates at m, X = s I/√2 + W: 0/1 for s < 0 and 2/3 for s > 0, the
    odd ones where ‖W‖ > |s| (|cos θ| < 1/√2, θ the angle from the trace axis). The density
    e^{−ρ/σ} J ρ² with J = sinhc(ρ sin θ/√2) is integrated by Gauss–Legendre inside each cell
    (the cells are bounded by the radius edges and cos θ = 0, ±1/√2, ±1). Returns an array
    (len(rho_edges) − 1, 4), normalized over the cells given.
    """
    x, wx = leggauss(n_gl)
    out = np.zeros((len(rho_edges) - 1, 4))
    for i, (a, b) in enumerate(zip(rho_edges[:-1], rho_edges[1:], strict=True)):
        rho = a + 0.5 * (b - a) * (x + 1)
        w_rho = 0.5 * (b - a) * wx * rho**2 * np.exp(-(rho - a) / sigma)
        for dominant, (lo, hi) in ((1, (0.0, 1 / SQRT2)), (0, (1 / SQRT2, 1.0))):
            ct = lo + 0.5 * (hi - lo) * (x + 1)
            w_ct = 0.5 * (hi - lo) * wx
            j = sinhc(rho[:, None] * np.sqrt(1 - ct[None] ** 2) / SQRT2)
            mass = np.exp(-a / sigma) * float(w_rho @ j @ w_ct)
            out[i, dominant] += mass  # s < 0 (mirror image)
            out[i, 2 + dominant] += mass
    return out / out.sum()


def spd_sample_laplace(center, sigma, size, rng):
    """Exact draws ∝ exp(−d(center, z)/σ) on SPD(2) (the audit's own sampler, for power checks).

    In normal coordinates at the centre the target is e^{−ρ/σ} J(X) ρ² dρ dΩ with
    J ≤ e^{ρ/√2}: propose ρ ~ Gamma(3, 1/(1/σ − 1/√2)), a uniform direction, accept with
    J(X) e^{−ρ/√2}.
    """
    b = 1.0 / sigma - 1.0 / SQRT2
    assert b > 0
    kept, count = [], 0
    while count < size:
        m = 2 * size
        rho = rng.gamma(3.0, 1.0 / b, size=m)
        c = O.uniform_sphere(m, rng) * rho[:, None]
        keep = rng.uniform(size=m) < spd_volume_density(c) * np.exp(-rho / SQRT2)
        kept.append(c[keep])
        count += int(keep.sum())
    return spd_chart(np.concatenate(kept)[:size], base=center)


def spd_uniform_ball(radius, size, rng):
    """Uniform draws (Riemannian volume) on B_radius(I): uniform in the coordinate ball,
    accepted with J / J_max (J_max = sinhc(radius/√2), the largest J on the ball)."""
    j_max = float(sinhc(radius / SQRT2))
    kept, count = [], 0
    while count < size:
        c = O.uniform_sphere(2 * size, rng) * (radius * rng.uniform(size=(2 * size, 1)) ** (1 / 3))
        keep = rng.uniform(size=2 * size) < spd_volume_density(c) / j_max
        kept.append(c[keep])
        count += int(keep.sum())
    return np.concatenate(kept)[:size]

