"""Reference laws for the sampler tests, written independently of ``dpcore.sampling``.

The radial densities are spelled out from the geometry (volume factor times kernel) and their CDFs
are tabulated on a fine grid (cell masses by Gauss-Legendre rules checked against each other, the
tails beyond the grid by ``scipy.integrate.quad``; cubic Hermite interpolation inside a cell
using the density itself as the derivative).
"""

from __future__ import annotations

import math
from functools import cache

import numpy as np
from scipy.integrate import quad
from scipy.interpolate import CubicHermiteSpline
from scipy.stats import ks_2samp, kstest

from dpcore.manifolds import SPD, Euclidean, Hyperbolic, KendallShape, Sphere

#: A correct sampler fails a test with probability below this (one-sided p-value threshold).
P_THRESHOLD = 1e-6


@cache
def _legendre(n):
    return np.polynomial.legendre.leggauss(n)


def _gauss_legendre(a, b, n=96):
    """Nodes and weights of the n-point Gauss-Legendre rule on [a, b]."""
    x, w = _legendre(n)
    half = 0.5 * (b - a)
    return a + half * (x + 1.0), half * w


def log_kernel(r, sigma, kind):
    r = np.asarray(r, dtype=float)
    if kind == "laplace":
        return -r / sigma
    if kind == "gaussian":
        return -0.5 * (r / sigma) ** 2
    if kind == "uniform":
        return np.zeros_like(r)
    raise ValueError(kind)


_SPD2_T, _SPD2_W = _gauss_legendre(0.0, 0.5 * math.pi, 64)


def _log_spd2_angle_integral(r):
    """log of int_0^{pi/2} sinh(r cos t / sqrt 2) dt (integral over the eigen-radius angle)."""
    t, w = _SPD2_T, _SPD2_W
    c = np.asarray(r, dtype=float)[..., None] * np.cos(t) / math.sqrt(2.0)
    with np.errstate(divide="ignore"):
        log_sinh = c + np.log(-np.expm1(-2.0 * c)) - math.log(2.0)
    top = np.max(log_sinh, axis=-1, keepdims=True)
    return top[..., 0] + np.log(np.sum(w * np.exp(log_sinh - top), axis=-1))


def _spd3_sphere_nodes():
    """Quadrature on S^2 in R^3 split along the flat direction (1,1,1)/sqrt3.

    omega = cos(a) e + sin(a) (cos(p) u1 + sin(p) u2); the differences omega_i - omega_j depend
    only on the second part, whose kinks (omega_i = omega_j) sit at p = pi/6 + j pi/3.
    """
    e = np.ones(3) / math.sqrt(3.0)
    u1 = np.array([1.0, -1.0, 0.0]) / math.sqrt(2.0)
    u2 = np.array([1.0, 1.0, -2.0]) / math.sqrt(6.0)
    a, wa = _gauss_legendre(0.0, math.pi, 40)
    ps, wps = [], []
    for j in range(6):
        lo = math.pi / 6 + j * math.pi / 3
        p, wp = _gauss_legendre(lo, lo + math.pi / 3, 24)
        ps.append(p)
        wps.append(wp)
    p, wp = np.concatenate(ps), np.concatenate(wps)
    aa, pp = np.meshgrid(a, p, indexing="ij")
    weights = (wa[:, None] * wp[None, :] * np.sin(aa)).ravel()
    omega = (
        np.cos(aa)[..., None] * e
        + np.sin(aa)[..., None] * (np.cos(pp)[..., None] * u1 + np.sin(pp)[..., None] * u2)
    ).reshape(-1, 3)
    return omega, weights


_SPD3_OMEGA, _SPD3_W = _spd3_sphere_nodes()


def _log_spd3_sphere_integral(r):
    """log of the integral over the unit sphere of prod_{i<j} sinh(r |w_i - w_j| / 2)."""
    r = np.atleast_1d(np.asarray(r, dtype=float))
    om = _SPD3_OMEGA
    diffs = np.abs(np.stack([om[:, 0] - om[:, 1], om[:, 0] - om[:, 2], om[:, 1] - om[:, 2]]))
    out = np.empty(r.shape)
    for idx, ri in np.ndenumerate(r):
        x = 0.5 * ri * diffs
        with np.errstate(divide="ignore"):
            logs = np.sum(x + np.log1p(-np.exp(-2.0 * x)) - math.log(2.0), axis=0)
        top = np.max(logs)
        out[idx] = top + math.log(np.sum(_SPD3_W * np.exp(logs - top)))
    return out


def log_volume(manifold):
    """``(log J, r_max)``: log volume factor of geodesic spheres and the diameter."""
    with np.errstate(divide="ignore"):
        if isinstance(manifold, Euclidean):
            d = manifold.dim
            return (lambda r: (d - 1) * np.log(r) if d > 1 else np.zeros_like(r)), math.inf
        if isinstance(manifold, Sphere):
            d = manifold.dim
            return (
                (lambda r: (d - 1) * np.log(np.sin(r)) if d > 1 else np.zeros_like(r)),
                math.pi,
            )
        if isinstance(manifold, KendallShape):
            m = manifold.k_landmarks - 2

            def log_j(r):
                with np.errstate(divide="ignore"):
                    base = np.log(np.sin(2 * r))
                    return base + (2 * m - 2) * np.log(np.sin(r)) if m > 1 else base

            return log_j, math.pi / 2
        if isinstance(manifold, Hyperbolic):
            d = manifold.dim
            # log sinh r = r - log 2 + log(1 - e^{-2r}), which does not overflow
            return (
                lambda r: (d - 1) * (r - math.log(2.0) + np.log(-np.expm1(-2.0 * r)))
            ), math.inf
        if isinstance(manifold, SPD) and manifold.k == 1:
            return (lambda r: np.zeros_like(r)), math.inf
        if isinstance(manifold, SPD) and manifold.k == 2:
            return (lambda r: np.log(r) + _log_spd2_angle_integral(r)), math.inf
        if isinstance(manifold, SPD) and manifold.k == 3:
            return (lambda r: 2 * np.log(r) + _log_spd3_sphere_integral(r)), math.inf
    raise NotImplementedError(repr(manifold))


def radial_log_density(manifold, sigma, kind):
    """``(log f, r_max)`` of the distance to the centre, unnormalised."""
    log_j, r_max = log_volume(manifold)

    def log_f(r):
        r = np.asarray(r, dtype=float)
        with np.errstate(divide="ignore", invalid="ignore"):
            return log_j(r) + log_kernel(r, sigma, kind)

    return log_f, r_max


def _cell_masses(log_f, peak, grid, k):
    """Integral of exp(log_f - peak) over each cell of ``grid``, by the k-point Gauss-Legendre
    rule (nodes interior to the cells)."""
    x, w = _legendre(k)
    half = 0.5 * np.diff(grid)
    nodes = grid[:-1, None] + half[:, None] * (x + 1.0)
    with np.errstate(over="ignore", invalid="ignore"):
        vals = np.exp(np.asarray(log_f(nodes.ravel()), dtype=float) - peak)
    vals = np.where(np.isfinite(vals), vals, 0.0).reshape(nodes.shape)
    return half * (vals @ w)


def tabulated_cdf(log_f, lo, hi, n_cells=500, drop=50.0, n_probe=4000):
    """CDF of the density ``exp(log_f)`` on ``[lo, hi]``, tabulated by quadrature.

    The grid covers the region where ``log_f`` is within ``drop`` of its maximum (found on a
    wide geometric probe grid); the masses outside it are added by quadrature too.
    """
    probe_hi = hi if math.isfinite(hi) else 1e4
    probe = np.unique(
        np.concatenate([np.geomspace(1e-14, probe_hi, n_probe), np.linspace(lo, probe_hi, n_probe)])
    )
    probe = probe[(probe > lo) & (probe < probe_hi)]
    lf = np.asarray(log_f(probe), dtype=float)
    lf = np.where(np.isnan(lf), -np.inf, lf)
    peak = np.max(lf)
    inside = np.flatnonzero(lf >= peak - drop)
    a = probe[inside[0] - 1] if inside[0] > 0 else lo
    b = probe[inside[-1] + 1] if inside[-1] + 1 < probe.size else hi
    if b == hi and not math.isfinite(hi):
        raise ValueError("density does not decay on the probe grid")
    f = lambda r: float(np.exp(np.asarray(log_f(np.float64(r))).reshape(-1)[0] - peak))
    grid = np.linspace(a, b, n_cells + 1)
    tol = 1e-13 * (b - a)  # the total mass is at least of order e^{-drop} (b - a)
    # Cell masses by Gauss-Legendre rules of 24 and 16 nodes, all cells in one call of log_f:
    # within a cell log f changes by at most drop / n_cells (plus the volume factor's smooth
    # part), so both rules are exact to rounding; they must agree to 1e-11 of the total.
    masses, coarse = (_cell_masses(log_f, peak, grid, k) for k in (24, 16))
    scale = max(float(np.sum(masses)), tol)
    if not np.max(np.abs(np.cumsum(masses) - np.cumsum(coarse))) <= 1e-11 * scale:
        raise AssertionError("cell quadrature did not converge")
    left = quad(f, lo, a, epsabs=tol, epsrel=1e-9, limit=200)[0] if a > lo else 0.0
    right = quad(f, b, hi, epsabs=tol, epsrel=1e-9, limit=200)[0] if b < hi else 0.0
    cum = left + np.concatenate([[0.0], np.cumsum(masses)])
    total = cum[-1] + right
    dens = np.exp(np.asarray(log_f(grid), dtype=float) - peak)
    dens = np.where(np.isfinite(dens), dens, 0.0)
    spline = CubicHermiteSpline(grid, cum / total, dens / total)

    def cdf(x):
        x = np.asarray(x, dtype=float)
        inner = np.clip(spline(np.clip(x, a, b)), 0.0, 1.0)
        return np.where(x < a, 0.0, np.where(x > b, 1.0, inner))

    return cdf


def radial_cdf(manifold, sigma, kind, r_max=None):
    """Reference CDF of ``d(center, Y)``, optionally truncated at ``r_max``."""
    log_f, diameter = radial_log_density(manifold, sigma, kind)
    hi = diameter if r_max is None else min(r_max, diameter)
    if isinstance(manifold, SPD) and manifold.k == 3:  # 2-D quadrature per value: coarser grid
        return tabulated_cdf(log_f, 0.0, hi, n_cells=150, n_probe=300)
    return tabulated_cdf(log_f, 0.0, hi)


def ks_pvalue(samples, cdf):
    return float(kstest(np.ravel(samples), cdf).pvalue)


def ks2_pvalue(a, b):
    return float(ks_2samp(np.ravel(a), np.ravel(b)).pvalue)
