r"""Radial laws of the distance-based densities (Riemannian Laplace and Gaussian).

On the built-in symmetric spaces the Riemannian volume in geodesic polar coordinates about any
point is :math:`J(r)\,dr\,d\omega`, with :math:`J` depending only on the radius (for SPD(2), on
the radius after integrating the angle of the eigen-radius vector). A density
:math:`\propto h(d(\eta, y))` therefore gives the distance :math:`r = d(\eta, Y)` the 1-D density
:math:`h(r) J(r)` on :math:`[0, r_{max}]`, with :math:`h(r) = e^{-r/\sigma}` (Laplace) or
:math:`e^{-r^2/(2\sigma^2)}` (Gaussian). The volume factors are facts of each manifold class
(:meth:`~dpcore.manifolds.Manifold.radial_log_volume`, its derivative
:meth:`~dpcore.manifolds.Manifold.radial_dlog_volume` and
:attr:`~dpcore.manifolds.Manifold.volume_growth_rate`; DESIGN section 6; checked against each
manifold's own metric in ``tests/manifolds/contract.py`` and ``tests/sampling/test_radial.py``):

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
(:mod:`dpcore.sampling._logconcave`), also when truncated to a sub-interval. Monte Carlo work
that does not need exactness (studies, predictions, the Monte Carlo µ and its calibration) can
ask for ``radial="inversion"`` instead: numerical inversion of the CDF, within 1e-10 of it
(:mod:`dpcore.sampling.inversion`), several times faster per draw. Releases never do.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from functools import lru_cache

import numpy as np

from .._validation import check_choice, check_positive
from ..manifolds import SPD, Euclidean, Hyperbolic, KendallShape, Manifold, Sphere
from ..manifolds._functions import log_sinh  # noqa: F401 - re-exported for ._spd
from ._logconcave import LogConcaveSampler

KINDS = ("laplace", "gaussian")
#: How a radius is drawn: exactly (rejection) or by numerical inversion of its CDF (not exact).
RADIAL_METHODS = ("exact", "inversion")


def check_kind(kind) -> str:
    """Validate the density family name."""
    return check_choice(kind, "kind", KINDS)


# ---------------------------------------------------------------------- volume factors
#: Profiles built by name (``dpcore.sampling._spd`` builds SPD(1)'s and SPD(2)'s this way): the
#: manifold whose radial law each name stands for, given the exponent ``a``.
_NAMED_LAWS = {
    "power": lambda a: Euclidean(a + 1),
    "sine": lambda a: Sphere(a + 1),
    "kendall": lambda a: KendallShape(a // 2 + 3),
    "sinh": lambda a: Hyperbolic(a + 1),
    "spd2": lambda a: SPD(2),
}


@dataclass(frozen=True)
class VolumeProfile:
    """Radial volume factor ``J(r)`` of one manifold (see the module docstring).

    A hashable handle on the manifold's :meth:`~dpcore.manifolds.Manifold.radial_log_volume`
    and :meth:`~dpcore.manifolds.Manifold.radial_dlog_volume` (the key of the radial-sampler
    cache); build it with :func:`volume_profile`.

    Attributes
    ----------
    family : str
        ``"power"`` for the flat law ``J(r) = r^a`` on ``[0, inf)`` (R^d, SPD(1)), whose
        untruncated radii are drawn directly; otherwise the manifold's repr. Built by name
        (no ``manifold``), ``"power"``, ``"sine"``, ``"kendall"``, ``"sinh"`` and ``"spd2"``
        with exponent ``a`` stand for the laws of Euclidean(a + 1), Sphere(a + 1),
        KendallShape(a / 2 + 3), Hyperbolic(a + 1) and SPD(2).
    a : int
        Exponent of the power law (0 otherwise).
    r_max : float
        Largest distance on the manifold (its diameter).
    growth : float
        Exponential growth rate of ``J``: the Laplace density is integrable iff
        ``1 / sigma > growth``.
    manifold : Manifold
        The manifold whose law this is (not compared: equal profiles have equal laws).
    """

    family: str
    a: int = 0
    r_max: float = math.inf
    growth: float = 0.0
    manifold: Manifold | None = field(default=None, compare=False, repr=False)

    def __post_init__(self):
        if self.manifold is None:
            object.__setattr__(self, "manifold", _NAMED_LAWS[self.family](self.a))

    def log_vol(self, r):
        """``log J(r)``."""
        return self.manifold.radial_log_volume(r)

    def dlog_vol(self, r):
        """Derivative of ``log J``."""
        return self.manifold.radial_dlog_volume(r)


def _profile_of(manifold):
    """The :class:`VolumeProfile` of ``manifold``; raises the manifold's NotImplementedError
    where it has no closed-form radial law."""
    manifold.radial_log_volume(1.0)  # raises where there is no closed-form radial law
    growth = manifold.volume_growth_rate
    # Radii of spaces isometric to R^d (no volume growth and not compact: R^d, SPD(1),
    # Hyperbolic(1)) are drawn directly (Gamma / chi) when untruncated, the others from the
    # log-concave hull.
    if growth == 0 and not manifold.is_compact:
        return VolumeProfile("power", manifold.dim - 1, manifold.diameter, growth, manifold)
    return VolumeProfile(repr(manifold), 0, manifold.diameter, growth, manifold)


def volume_profile(manifold):
    """The :class:`VolumeProfile` of ``manifold``, or ``None`` if it has no closed-form one."""
    try:
        return _profile_of(manifold)
    except NotImplementedError:
        return None


def laplace_growth_rate(manifold) -> float:
    r"""Exponential volume growth rate: ``exp(-d/sigma)`` is integrable iff ``1/sigma`` exceeds it.

    The manifold's :attr:`~dpcore.manifolds.Manifold.volume_growth_rate`; e.g. for SPD(k)
    :math:`\sqrt{k(k^2-1)/12}`, for Hyperbolic(d) :math:`d - 1`, 0 on compact and flat spaces.

    Raises
    ------
    NotImplementedError
        If the rate is not known for ``manifold``.
    """
    return manifold.volume_growth_rate


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


@lru_cache(maxsize=256)
def inversion_sampler(profile, sigma, kind, r_lo=0.0, r_hi=None):
    """Cached sampler of the radial law on ``[r_lo, r_hi]`` by numerical inversion of its CDF
    (:class:`~dpcore.sampling.inversion.InversionSampler`; fast, within 1e-10, not exact)."""
    from .inversion import InversionSampler  # loaded by the Monte Carlo work that uses it

    r_hi = profile.r_max if r_hi is None else min(r_hi, profile.r_max)
    logf, dlogf = log_radial_functions(profile, sigma, kind)
    return InversionSampler(logf, dlogf, r_lo, r_hi, scale=sigma)


def _profile_or_raise(manifold):
    # The manifold's NotImplementedError says why it has no radial law (SPD(k > 2): MCMC).
    return _profile_of(manifold)


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


def sample_radius(manifold, sigma, kind, size, rng=None, *, r_max=None, radial="exact"):
    r"""Draws of the distance :math:`d(\eta, Y)` under the Laplace or Gaussian density.

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
    radial : {"exact", "inversion"}, optional
        ``"exact"`` (default): rejection from a proven envelope. ``"inversion"``: numerical
        inversion of the CDF, within 1e-10 of it in Kolmogorov distance and several times
        faster; for Monte Carlo studies only (:mod:`dpcore.sampling.inversion`).

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
    radial = check_choice(radial, "radial", RADIAL_METHODS)
    n = math.prod(shape)
    r = draw_radii(profile, sigma, kind, 0.0, r_max, n, rng, radial)
    return r.reshape(shape) if size is not None else np.float64(r[0])


def draw_radii(profile, sigma, kind, r_lo, r_hi, n, rng, radial="exact"):
    """``n`` radii from the law truncated to ``[r_lo, r_hi]`` (Euclidean untruncated: direct),
    exactly or, with ``radial="inversion"``, by numerical inversion (not exact)."""
    if profile.family == "power" and r_lo == 0.0 and not np.isfinite(r_hi):
        dim = profile.a + 1
        if kind == "laplace":
            return rng.gamma(dim, sigma, size=n)
        return sigma * np.sqrt(rng.chisquare(dim, size=n))
    if radial == "inversion":
        return inversion_sampler(profile, sigma, kind, float(r_lo), float(r_hi)).sample(n, rng)
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


def log_kfnorm_mass(dim, sigma):
    r"""Log of :math:`\int_{\mathbb R^k} e^{-|w|/\sigma}\,dw = |S^{k-1}|\,\Gamma(k)\,\sigma^k`
    (the K-norm law's normalizer; ``sigma`` may be an array)."""
    k = int(dim)
    log_sphere = math.log(2.0) + 0.5 * k * math.log(math.pi) - math.lgamma(0.5 * k)
    return log_sphere + math.lgamma(k) + k * np.log(sigma)


def log_euclidean_ball_volume(dim, radius):
    r"""Log of the volume of a ball of ``radius`` in :math:`\mathbb R^d`,
    :math:`\pi^{d/2} R^d / \Gamma(d/2 + 1)`."""
    d = int(dim)
    return 0.5 * d * math.log(math.pi) - math.lgamma(0.5 * d + 1.0) + d * math.log(radius)
