r"""Laplace and Gaussian laws on SPD(k) in polar form (paper 001 §5.1; Hajri et al. 2016).

A draw is :math:`y = L\,V \operatorname{diag}(e^{\rho}) V^\top L^\top` with :math:`L L^\top = \eta`,
:math:`V` Haar on O(k) and the eigen-radius vector :math:`\rho \in \mathbb{R}^k` of density
:math:`h(|\rho|) \prod_{i<j} \sinh(|\rho_i - \rho_j|/2)`; then :math:`d(\eta, y) = |\rho|`.
The factor :math:`\sinh(|\rho_i - \rho_j|/2)` comes from the affine-invariant metric
:math:`\operatorname{tr}(P^{-1}UP^{-1}V)` used by :class:`dpcore.manifolds.SPD`: the Jacobi field
along :math:`e^{t \operatorname{diag}(\rho)}` in the (i, j) off-diagonal direction has curvature
eigenvalue :math:`-(\rho_i - \rho_j)^2/4`, hence length :math:`\sinh(|\rho_i-\rho_j|/2)/(\ldots)`,
and the Weyl integration formula contributes :math:`|\rho_i - \rho_j|`.

k = 1 and k = 2 are sampled exactly; for k >= 3 the eigen-radius vector is drawn by a batched
random-walk Metropolis chain (one independent chain per draw), which is approximate.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from .radial import VolumeProfile, draw_radii, log_sinh

_SQRT2 = math.sqrt(2.0)
#: 1 - cos t >= 0.3972 t^2 on [0, pi/2]; the half-normal envelope below uses a smaller constant.
_TILT_ALPHA = 0.39

#: Draws whose eigenvalue spread (relative to the centre) exceeds e^this get a warning: float64
#: then resolves their smallest eigenvalues only to about 1e-2 relative accuracy.
_LOG_MAX_CONDITION = math.log(1e14)

#: Metropolis steps (adaptation + frozen) per chain for the eigen-radii of SPD(k >= 3).
MCMC_ADAPT_STEPS = 500
MCMC_STEPS = 500


def haar_orthogonal(k, n, rng):
    """``n`` Haar-distributed ``k x k`` rotations (enough here: ``V D V^T`` ignores signs)."""
    if k == 1:
        return np.ones((n, 1, 1))
    if k == 2:
        theta = rng.uniform(0.0, 2.0 * math.pi, size=n)
        c, s = np.cos(theta), np.sin(theta)
        return np.stack([np.stack([c, -s], axis=-1), np.stack([s, c], axis=-1)], axis=-2)
    q, r = np.linalg.qr(rng.standard_normal((n, k, k)))
    # QR of a Gaussian matrix is Haar once the signs of R's diagonal are made positive.
    return q * np.sign(np.diagonal(r, axis1=-2, axis2=-1))[..., None, :]


def sample_tilt(c, rng):
    r"""Draws of :math:`t \in [0, \pi/2]` of density :math:`\propto \sinh(c \cos t)`, one per ``c``.

    For ``c <= 1`` the envelope is uniform (acceptance :math:`\sinh(c\cos t)/\sinh c`, at
    least 0.54); for ``c > 1`` it is the half-normal :math:`e^{-\alpha c t^2}`, valid because
    :math:`1 - \cos t \ge \alpha t^2` on :math:`[0, \pi/2]` (acceptance at least 0.5, tending
    to :math:`\sqrt{2\alpha} = 0.88`).
    """
    c = np.asarray(c, dtype=float)
    out = np.empty_like(c)
    pending = np.arange(c.size)
    while pending.size:
        cc = c[pending]
        small = cc <= 1.0
        uniform = 0.5 * math.pi * rng.random(cc.size)
        normal = np.abs(rng.standard_normal(cc.size)) / np.sqrt(
            2.0 * _TILT_ALPHA * np.where(small, 1.0, cc)
        )
        t = np.where(small, uniform, normal)
        inside = t <= 0.5 * math.pi
        tt = np.minimum(t, 0.5 * math.pi)
        cos_t = np.cos(tt)
        with np.errstate(all="ignore"):
            ratio = np.where(cc > 0, np.sinh(cc * cos_t) / np.sinh(cc), cos_t)
            log_small = np.log(ratio)
            one_minus_cos = 2.0 * np.sin(0.5 * tt) ** 2
            log_large = (
                -cc * one_minus_cos
                + _TILT_ALPHA * cc * tt**2
                + np.log(-np.expm1(-2.0 * cc * cos_t))
            )
            log_acc = np.where(small, log_small, log_large)
            ok = inside & (np.log(rng.random(cc.size)) < log_acc)
        out[pending[ok]] = tt[ok]
        pending = pending[~ok]
    return out


def eigen_radii_1(sigma, kind, r_lo, r_hi, n, rng):
    """SPD(1): ``rho = +- r`` with ``r`` from the 1-D radial law."""
    r = draw_radii(VolumeProfile("power", 0), sigma, kind, r_lo, r_hi, n, rng)
    return (r * rng.choice([-1.0, 1.0], size=n))[:, None]


def eigen_radii_2(sigma, kind, r_lo, r_hi, n, rng):
    r"""SPD(2), exactly: the radius from its marginal, then the angle given the radius.

    In the rotated coordinates :math:`a = (\rho_1 + \rho_2)/\sqrt2`,
    :math:`b = (\rho_1 - \rho_2)/\sqrt2 = r \cos t \ge 0`, :math:`a = \pm r \sin t`, the density
    is :math:`h(r)\, r \sinh(r \cos t / \sqrt2)` (the modulus comes from :math:`b \ge 0`, the
    sign of ``a`` is uniform), so ``t`` given ``r`` is :func:`sample_tilt` with
    :math:`c = r/\sqrt2`.
    """
    r = draw_radii(VolumeProfile("spd2", growth=1.0 / _SQRT2), sigma, kind, r_lo, r_hi, n, rng)
    t = sample_tilt(r / _SQRT2, rng)
    a = r * np.sin(t) * rng.choice([-1.0, 1.0], size=n)
    b = r * np.cos(t)
    return np.stack([(a + b) / _SQRT2, (a - b) / _SQRT2], axis=-1)


def log_eigen_density(rho, sigma, kind, r_lo=0.0, r_hi=math.inf):
    r"""Unnormalised log density :math:`\log h(|\rho|) + \sum_{i<j}\log\sinh(|\rho_i-\rho_j|/2)`.

    ``-inf`` outside the shell ``r_lo <= |rho| <= r_hi``.
    """
    rho = np.asarray(rho, dtype=float)
    i, j = np.triu_indices(rho.shape[-1], k=1)
    norm = np.sqrt(np.sum(rho * rho, axis=-1))
    out = -norm / sigma if kind == "laplace" else -0.5 * (norm / sigma) ** 2
    out = out + np.sum(log_sinh(0.5 * np.abs(rho[..., i] - rho[..., j])), axis=-1)
    return np.where((norm >= r_lo) & (norm <= r_hi), out, -np.inf)


def eigen_radii_mcmc(k, sigma, kind, r_lo, r_hi, n, rng):
    """SPD(k >= 3), approximately: ``n`` independent random-walk Metropolis chains in R^k.

    Each chain starts from a Gaussian guess scaled into the shell, adapts its (shared) step size
    for :data:`MCMC_ADAPT_STEPS` steps toward acceptance 0.3, then runs :data:`MCMC_STEPS`
    steps with the step frozen; the final states are returned.
    """
    if n == 0:
        return np.empty((0, k))
    rho = rng.standard_normal((n, k)) * sigma
    norm = np.sqrt(np.sum(rho * rho, axis=-1, keepdims=True))
    rho = rho * np.divide(np.clip(norm, r_lo, r_hi), norm, out=np.ones_like(norm), where=norm > 0)
    logp = log_eigen_density(rho, sigma, kind, r_lo, r_hi)
    log_step = math.log(0.5 * sigma)
    for step in range(MCMC_ADAPT_STEPS + MCMC_STEPS):
        prop = rho + math.exp(log_step) * rng.standard_normal((n, k))
        logq = log_eigen_density(prop, sigma, kind, r_lo, r_hi)
        with np.errstate(invalid="ignore"):
            log_ratio = np.where(np.isneginf(logp), np.inf, logq - logp)
        log_ratio = np.where(np.isneginf(logq), -np.inf, log_ratio)
        accept = np.log(rng.random(n)) < log_ratio
        rho = np.where(accept[:, None], prop, rho)
        logp = np.where(accept, logq, logp)
        if step < MCMC_ADAPT_STEPS:
            rate = np.mean(np.exp(np.minimum(log_ratio, 0.0)))
            log_step += (rate - 0.3) * 2.0 / math.sqrt(step + 1.0)
    return rho


def eigen_radii(k, sigma, kind, r_lo, r_hi, n, rng):
    """Eigen-radius vectors ``(n, k)`` of the SPD(k) law truncated to ``r_lo <= |rho| <= r_hi``."""
    if k == 1:
        return eigen_radii_1(sigma, kind, r_lo, r_hi, n, rng)
    if k == 2:
        return eigen_radii_2(sigma, kind, r_lo, r_hi, n, rng)
    return eigen_radii_mcmc(k, sigma, kind, r_lo, r_hi, n, rng)


def spd_drawer(manifold, center, sigma, kind, r_lo, r_hi, rng):
    """``draw(m)``: ``m`` SPD matrices ``L V diag(e^rho) V^T L^T`` about ``center = L L^T``."""
    k = manifold.k
    chol = np.linalg.cholesky(center)

    def draw(m):
        rho = eigen_radii(k, sigma, kind, r_lo, r_hi, m, rng)
        if m and np.max(np.ptp(rho, axis=-1)) > _LOG_MAX_CONDITION:
            warnings.warn(
                f"Some SPD draws have condition number above {math.exp(_LOG_MAX_CONDITION):.0e} "
                "relative to the centre (sigma too large for float64 matrices): their smallest "
                "eigenvalues, hence distances, are accurate only to about 1e-2 and positive "
                "definiteness may fail.",
                RuntimeWarning,
                stacklevel=4,
            )
        v = haar_orthogonal(k, m, rng)
        inner = (v * np.exp(rho)[:, None, :]) @ v.mT
        y = chol @ inner @ chol.T
        return 0.5 * (y + y.mT)

    return draw


__all__ = ["eigen_radii", "haar_orthogonal", "log_eigen_density", "sample_tilt", "spd_drawer"]
