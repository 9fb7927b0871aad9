r"""Radial laws of the distance-based densities (Riemannian Laplace and Gaussian).

On the built-in symmetric spaces the Riemannian volume in geodesic polar coordinates about any
point is :math:`J(r)\,dr\,d\omega`, with :math:`J` depending only on the radius (for SPD(2), on
the radius after integrating the angle of the eigen-radius vector). A density
:math:`\propto h(d(\eta, y))` therefore gives the distance :math:`r = d(\eta, Y)` the 1-D density
:math:`h(r) J(r)` on :math:`[0, r_{max}]`, with :math:`h(r) = e^{-r/\sigma}` (Laplace) or
:math:`e^{-r^2/(2\sigma^2)}` (Gaussian). The volume factors (DESIGN section 6; checked against
each manifold's own metric in ``tests/sampling/test_radial.py``) are

==================  ====================================  =============
manifold            :math:`J(r)`                          :math:`r_{max}`
==================  ====================================  =============
Euclidean(d)        :math:`r^{d-1}`                       :math:`\infty`
Sphere(d)           :math:`\sin^{d-1} r`                  :math:`\pi`
KendallShape(k)     :math:`\sin^{2m-2} r \, \sin 2r`,      :math:`\pi/2`
                    :math:`m = k - 2`
Hyperbolic(d)       :math:`\sinh^{d-1} r`                 :math:`\infty`
SPD(1)              :math:`1`                             :math:`\infty`
SPD(2)              :math:`r \, L_0(r/\sqrt2)`            :math:`\infty`
==================  ====================================  =============

For KendallShape the metric is the Fubini-Study metric of CP^m (sectional curvature 4 along the
complex line of the geodesic, 1 on the other 2m - 2 directions), whence the Jacobi factors
:math:`\sin 2r / 2` and :math:`\sin r`. For SPD(2) with the affine-invariant metric
:math:`\operatorname{tr}(P^{-1} U P^{-1} V)` the eigen-radius vector :math:`\rho \in \mathbb{R}^2`
(the logarithms of the eigenvalues of :math:`\eta^{-1/2} y \eta^{-1/2}`, so that
:math:`d = |\rho|`) has density :math:`h(|\rho|)\sinh(|\rho_1 - \rho_2|/2)` (the curvature
eigenvalue of the off-diagonal direction is :math:`-(\rho_1 - \rho_2)^2/4`). In polar coordinates
:math:`\rho = r(\cos\psi, \sin\psi)` rotated by :math:`\pi/4`, :math:`|\rho_1 - \rho_2|/2 =
r |\sin\psi| / \sqrt2` and :math:`\int_0^{2\pi} \sinh(c |\sin\psi|)\,d\psi = 2\pi L_0(c)`
(modified Struve function), which gives the radial factor in the table.

Every :math:`\log J` above is concave on its interval, and so is :math:`\log h`; the radial laws
are therefore log-concave and are drawn exactly by rejection from a piecewise-exponential hull
(:mod:`dpcore.sampling._logconcave`), also when truncated to a sub-interval.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
from scipy.special import ive, modstruve

from .._validation import check_positive
from ..manifolds import SPD, Euclidean, Hyperbolic, KendallShape, Sphere
from ._logconcave import LogConcaveSampler

KINDS = ("laplace", "gaussian")

_SQRT2 = math.sqrt(2.0)
#: Above this argument log L_0 is computed as log I_0 (relative difference below 1e-13).
_STRUVE_SWITCH = 30.0


def check_kind(kind) -> str:
    """Validate the density family name."""
    if kind not in KINDS:
        raise ValueError(f"`kind` must be 'laplace' or 'gaussian', got {kind!r}.")
    return kind


# ---------------------------------------------------------------------- volume factors
def log_sinh(r):
    """``log(sinh(r))`` for ``r >= 0``, accurate for small ``r`` and without overflow."""
    r = np.asarray(r, dtype=float)
    with np.errstate(divide="ignore"):
        return r - math.log(2.0) + np.log(-np.expm1(-2.0 * r))


def _log_struve_l0(x):
    x = np.asarray(x, dtype=float)
    small = np.minimum(x, _STRUVE_SWITCH)
    big = np.maximum(x, _STRUVE_SWITCH)
    return np.where(
        x < _STRUVE_SWITCH, np.log(modstruve(0, small)), big + np.log(ive(0, big))
    )


def _dlog_struve_l0(x):
    # L_0' = L_{-1} = L_1 + 2/pi (recurrences DLMF 11.4.25 and 11.4.27 with nu = 0); for large
    # arguments L_0 and its derivative equal I_0 and I_1 to relative accuracy 1e-13.
    x = np.asarray(x, dtype=float)
    small = np.minimum(x, _STRUVE_SWITCH)
    big = np.maximum(x, _STRUVE_SWITCH)
    return np.where(
        x < _STRUVE_SWITCH,
        (modstruve(1, small) + 2.0 / math.pi) / modstruve(0, small),
        ive(1, big) / ive(0, big),
    )


@dataclass(frozen=True)
class VolumeProfile:
    """Radial volume factor ``J(r)`` of one manifold family (see the module docstring).

    Attributes
    ----------
    family : str
        ``"power"`` (``r^a``), ``"sine"`` (``sin^a r``), ``"kendall"`` (``sin^a r sin 2r``),
        ``"sinh"`` (``sinh^a r``) or ``"spd2"`` (``r L_0(r / sqrt 2)``).
    a : int
        Exponent.
    r_max : float
        Largest distance on the manifold (its diameter).
    growth : float
        Exponential growth rate of ``J``: the Laplace density is integrable iff
        ``1 / sigma > growth``.
    """

    family: str
    a: int = 0
    r_max: float = math.inf
    growth: float = 0.0

    def log_vol(self, r):
        """``log J(r)``."""
        r = np.asarray(r, dtype=float)
        with np.errstate(divide="ignore", invalid="ignore"):
            if self.family == "spd2":
                return np.log(r) + _log_struve_l0(r / _SQRT2)
            if self.family == "kendall":
                base = np.log(np.sin(2.0 * r))
                return base + (self.a * np.log(np.sin(r)) if self.a else 0.0)
            if self.a == 0:
                return np.zeros_like(r)
            fun = {"power": np.log, "sine": lambda t: np.log(np.sin(t)), "sinh": log_sinh}
            return self.a * fun[self.family](r)

    def dlog_vol(self, r):
        """Derivative of ``log J``."""
        r = np.asarray(r, dtype=float)
        with np.errstate(divide="ignore", invalid="ignore"):
            if self.family == "spd2":
                return 1.0 / r + _dlog_struve_l0(r / _SQRT2) / _SQRT2
            if self.family == "kendall":
                base = 2.0 * np.cos(2.0 * r) / np.sin(2.0 * r)
                return base + (self.a * np.cos(r) / np.sin(r) if self.a else 0.0)
            if self.a == 0:
                return np.zeros_like(r)
            if self.family == "power":
                return self.a / r
            if self.family == "sine":
                return self.a * np.cos(r) / np.sin(r)
            return self.a / np.tanh(r)


def volume_profile(manifold):
    """The :class:`VolumeProfile` of ``manifold``, or ``None`` if it has no closed-form one."""
    if isinstance(manifold, Euclidean):
        return VolumeProfile("power", manifold.dim - 1)
    if isinstance(manifold, Sphere):
        return VolumeProfile("sine", manifold.dim - 1, r_max=math.pi)
    if isinstance(manifold, KendallShape):
        return VolumeProfile("kendall", manifold.dim - 2, r_max=math.pi / 2)
    if isinstance(manifold, Hyperbolic):
        return VolumeProfile("sinh", manifold.dim - 1, growth=float(manifold.dim - 1))
    if isinstance(manifold, SPD) and manifold.k == 1:
        return VolumeProfile("power", 0)
    if isinstance(manifold, SPD) and manifold.k == 2:
        return VolumeProfile("spd2", growth=1.0 / _SQRT2)
    return None


def laplace_growth_rate(manifold) -> float:
    r"""Exponential volume growth rate: ``exp(-d/sigma)`` is integrable iff ``1/sigma`` exceeds it.

    For SPD(k) the volume grows like :math:`\prod_{i<j} \sinh(|\rho_i - \rho_j|/2)`, i.e. like
    :math:`e^{\langle w, \rho \rangle}` with :math:`w_i = (k + 1 - 2i)/2` for sorted
    :math:`\rho`; its largest rate per unit :math:`|\rho|` is :math:`|w| = \sqrt{k(k^2-1)/12}`.
    """
    if isinstance(manifold, SPD):
        k = manifold.k
        return math.sqrt(k * (k * k - 1) / 12.0)
    profile = volume_profile(manifold)
    if profile is None:
        raise NotImplementedError(f"no volume growth rate known for {manifold!r}.")
    return profile.growth


def check_integrable(manifold, sigma, kind, r_max=math.inf):
    """Raise ``ValueError`` if the density has infinite mass on the ball of radius ``r_max``."""
    if kind != "laplace" or np.isfinite(r_max):
        return
    rate = laplace_growth_rate(manifold)
    if not 1.0 / sigma > rate:
        raise ValueError(
            f"The Laplace density exp(-d/sigma) with sigma={sigma!r} has infinite mass on "
            f"{manifold!r}: the volume grows like exp({rate:.6g} r), so it needs "
            f"sigma < {1.0 / rate:.6g}. Pass `support=(center, radius)` to restrict it to a "
            "ball, or use a smaller sigma."
        )


# ---------------------------------------------------------------------- radial laws
def _log_kernel(sigma, kind):
    if kind == "laplace":
        return (lambda r: -np.asarray(r, dtype=float) / sigma), (
            lambda r: np.full(np.shape(r), -1.0 / sigma)
        )
    inv = 1.0 / (sigma * sigma)
    return (lambda r: -0.5 * inv * np.asarray(r, dtype=float) ** 2), (
        lambda r: -inv * np.asarray(r, dtype=float)
    )


def log_radial_functions(profile, sigma, kind):
    """``(log f, d log f / dr)`` of the unnormalised radial density ``h(r) J(r)``."""
    log_h, dlog_h = _log_kernel(sigma, kind)
    return (
        lambda r: profile.log_vol(r) + log_h(r),
        lambda r: profile.dlog_vol(r) + dlog_h(r),
    )


@lru_cache(maxsize=256)
def radial_sampler(profile, sigma, kind, r_lo=0.0, r_hi=None):
    """Cached exact sampler of the radial law truncated to ``[r_lo, r_hi]``."""
    r_hi = profile.r_max if r_hi is None else min(r_hi, profile.r_max)
    logf, dlogf = log_radial_functions(profile, sigma, kind)
    return LogConcaveSampler(logf, dlogf, r_lo, r_hi, scale=sigma)


def _profile_or_raise(manifold):
    profile = volume_profile(manifold)
    if profile is None:
        if isinstance(manifold, SPD):
            raise NotImplementedError(
                f"{manifold!r} has no closed-form radial law for k > 2 (the eigen-radius "
                "density does not reduce to one dimension); sample_laplace / sample_gaussian "
                "draw its eigen-radius vector by MCMC instead."
            )
        raise NotImplementedError(
            f"No exact radial law for {manifold!r}; use "
            "dpcore.sampling.metropolis_hastings with the log density instead."
        )
    return profile


def _check_r_max(r_max, profile):
    if r_max is None:
        return profile.r_max
    r_max = check_positive(r_max, "r_max", allow_inf=True)
    return min(r_max, profile.r_max)


class RadialDensity:
    r"""Unnormalised density of the distance :math:`d(\eta, Y)` on ``[0, r_max]``.

    Calling it returns :math:`f(r) = h(r) J(r)`, scaled so that its maximum is 1, and zero
    outside ``[0, r_max]``.

    Attributes
    ----------
    r_max : float
        Upper end of the support.
    mode : float
        Where the density peaks.
    log_peak : float
        ``log(h(mode) J(mode))`` (the scale removed from the returned values).
    """

    def __init__(self, profile, sigma, kind, r_max):
        self._logf, _ = log_radial_functions(profile, sigma, kind)
        sampler = radial_sampler(profile, sigma, kind, 0.0, r_max)
        self.r_max = float(r_max)
        self.mode = float(sampler.mode)
        self.log_peak = float(sampler.log_peak)
        self.sigma = sigma
        self.kind = kind

    def log(self, r):
        """Log of the returned density values (``-inf`` outside the support)."""
        r = np.asarray(r, dtype=float)
        inside = (r >= 0) & (r <= self.r_max)
        with np.errstate(all="ignore"):
            val = self._logf(np.where(inside, r, self.mode)) - self.log_peak
        return np.where(inside, val, -np.inf)

    def __call__(self, r):
        return np.exp(self.log(r))

    def __repr__(self):
        return f"RadialDensity(kind={self.kind!r}, sigma={self.sigma!r}, r_max={self.r_max!r})"


def radial_density(manifold, sigma, kind, *, r_max=None):
    r"""Unnormalised radial density :math:`r \mapsto f(r)` of the distance to the centre.

    Parameters
    ----------
    manifold : Manifold
        Euclidean, Sphere, KendallShape, Hyperbolic, SPD(1) or SPD(2).
    sigma : float
        Scale of the Laplace or Gaussian density.
    kind : {"laplace", "gaussian"}
    r_max : float, optional
        Truncation radius (default: the manifold's diameter).

    Returns
    -------
    RadialDensity
        Callable ``f(r)`` (peak value 1, zero outside ``[0, r_max]``) with attributes
        ``r_max``, ``mode`` and a ``log`` method.

    Raises
    ------
    ValueError
        If the density is not integrable (Laplace with too large a ``sigma`` on a space of
        exponential volume growth) and ``r_max`` is infinite.
    NotImplementedError
        If the manifold has no closed-form radial law.
    """
    sigma = check_positive(sigma, "sigma")
    kind = check_kind(kind)
    profile = _profile_or_raise(manifold)
    r_max = _check_r_max(r_max, profile)
    check_integrable(manifold, sigma, kind, r_max)
    return RadialDensity(profile, sigma, kind, r_max)


def sample_radius(manifold, sigma, kind, size, rng=None, *, r_max=None):
    r"""Exact draws of the distance :math:`d(\eta, Y)` under the Laplace or Gaussian density.

    Parameters
    ----------
    manifold : Manifold
        Euclidean, Sphere, KendallShape, Hyperbolic, SPD(1) or SPD(2).
    sigma : float
        Scale.
    kind : {"laplace", "gaussian"}
    size : int, tuple of int or None
        Output shape (``None`` for a single float).
    rng : None, int or numpy.random.Generator
    r_max : float, optional
        Truncate the law to ``[0, r_max]``.

    Returns
    -------
    numpy.ndarray
        Radii of shape ``size``.
    """
    rng = np.random.default_rng(rng)
    sigma = check_positive(sigma, "sigma")
    kind = check_kind(kind)
    shape = size_tuple(size)
    profile = _profile_or_raise(manifold)
    r_max = _check_r_max(r_max, profile)
    check_integrable(manifold, sigma, kind, r_max)
    n = math.prod(shape)
    r = draw_radii(profile, sigma, kind, 0.0, r_max, n, rng)
    return r.reshape(shape) if size is not None else np.float64(r[0])


def draw_radii(profile, sigma, kind, r_lo, r_hi, n, rng):
    """``n`` radii from the law truncated to ``[r_lo, r_hi]`` (Euclidean untruncated: direct)."""
    if profile.family == "power" and r_lo == 0.0 and not np.isfinite(r_hi):
        dim = profile.a + 1
        if kind == "laplace":
            return rng.gamma(dim, sigma, size=n)
        return sigma * np.sqrt(rng.chisquare(dim, size=n))
    return radial_sampler(profile, sigma, kind, float(r_lo), float(r_hi)).sample(n, rng)


def size_tuple(size):
    """Normalize a numpy-style ``size`` (None, int or tuple) to a tuple."""
    if size is None:
        return ()
    if isinstance(size, bool):
        raise TypeError("`size` must be an int, a tuple of ints or None, got bool.")
    if isinstance(size, (int, np.integer)):
        size = (int(size),)
    try:
        shape = tuple(int(s) for s in size)
    except TypeError as exc:
        raise TypeError(
            f"`size` must be an int, a tuple of ints or None, got {type(size).__name__}."
        ) from exc
    if any(s < 0 for s in shape):
        raise ValueError(f"`size` must not contain negative entries, got {shape}.")
    return shape
