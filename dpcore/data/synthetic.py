"""Synthetic data sets following the papers' simulation protocols.

Two generators:

* :func:`make_regression_data` draws covariates ``x ~ U[0, 1]`` and noisy responses around a
  random geodesic ``x -> Exp(p, x v)`` (paper 002, section 4.1 and appendix F).
* :func:`make_mean_data` draws points inside a geodesic ball ``B_radius(center)`` for Fréchet
  mean experiments (paper 001, supplement A.2.1 and A.3.1).

All randomness goes through ``rng = np.random.default_rng(rng)``; nothing touches global state,
so the same seed always gives the same data.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

import numpy as np

from .._validation import check_int, check_manifold, check_nonnegative, check_positive
from ..manifolds import SPD, Euclidean, Hyperbolic, KendallShape, Manifold, Sphere
from ..manifolds._functions import log_sinhc
from ..manifolds.spd import sym, sym_funm

__all__ = [
    "DEFAULT_NOISE",
    "RegressionData",
    "default_center",
    "kendall_template",
    "make_mean_data",
    "make_regression_data",
    "spd_log_volume_density",
]

#: Default ``noise`` of :func:`make_regression_data` per manifold type. For the sphere it is the
#: variance ``delta`` of the ambient Gaussian (paper 002 section 4.1); elsewhere it is the
#: standard deviation of the Gaussian tangent noise (paper 002 appendix F uses 0.01 on SPD(2)).
DEFAULT_NOISE = {
    Sphere: 1e-3,
    SPD: 1e-2,
    KendallShape: 2e-2,
    Euclidean: 1e-1,
    Hyperbolic: 5e-2,
}
#: Default for manifolds not listed above (standard deviation of tangent noise).
GENERIC_NOISE = 5e-2

#: Length of the shooting vector on the sphere: the true geodesic covers a quarter of a great
#: half-circle (pi/4 radians) as ``x`` runs over [0, 1]. Paper 002 does not state a length.
SPHERE_SHOOTING_LENGTH = np.pi / 4
#: Length of the horizontal shooting vector on Kendall shape space (radians; the injectivity
#: radius is pi/2).
KENDALL_SHOOTING_LENGTH = 0.5
#: Length of the shooting vector on SPD(k) when the footpoint is drawn in a region
#: (``footpoint_region``): the true geodesic moves 0.5 in affine-invariant distance as ``x``
#: runs over [0, 1], about the spread of paper 002's random pairs' footpoints around I.
SPD_REGION_SHOOTING_LENGTH = 0.5

#: Cap on the number of Wishart draws made by the rejection sampler on SPD(k): this many, or
#: ``MAX_WISHART_DRAWS_PER_POINT`` per requested point if that is more (an absolute cap made
#: every n above about 475,000 fail at the paper's radius, where 24% of the draws are kept).
MAX_WISHART_DRAWS = 2_000_000
#: The sampler gives up when fewer than one draw in this many is kept (0.1%).
MAX_WISHART_DRAWS_PER_POINT = 1000
_BATCH = 100_000


# ---------------------------------------------------------------------------------- helpers
def _check_noise(noise, manifold) -> float:
    if noise is None:
        return float(DEFAULT_NOISE.get(type(manifold), GENERIC_NOISE))
    return check_nonnegative(noise, "noise")


def _unit_tangent(manifold, x, rng):
    """Uniformly distributed unit tangent vectors at ``x`` (one per point of the batch).

    ``random_tangent`` is an isotropic standard Gaussian in the tangent space, so its direction
    is uniform on the unit sphere of T_x M.
    """
    while True:
        v = manifold.random_tangent(x, rng)
        norms = manifold.norm(x, v)
        if np.all(norms > 0):  # a zero Gaussian draw has probability zero; redraw if it happens
            return v / manifold.pointwise(norms)


def kendall_template(k_landmarks: int) -> np.ndarray:
    """The template shape of ``KendallShape(k_landmarks)`` (its :attr:`origin`), shape
    ``(k_landmarks, 2)``."""
    return KendallShape(check_int(k_landmarks, "k_landmarks", minimum=3)).origin


def default_center(manifold) -> np.ndarray:
    """The default centre of :func:`make_mean_data`: the manifold's :attr:`origin` (north pole
    on ``Sphere(d)``, identity on ``SPD(k)``, zero on ``Euclidean(d)``, ``(1, 0, …)`` on
    ``Hyperbolic(d)``, the template shape on ``KendallShape(k)``).

    Raises
    ------
    TypeError
        For a manifold without an origin (pass ``center`` explicitly).
    """
    try:
        return np.asarray(manifold.origin, dtype=float)
    except (NotImplementedError, AttributeError):
        raise TypeError(f"No default centre for {manifold!r}; pass `center` (a point of the "
                        "manifold) explicitly.") from None


# ---------------------------------------------------------------------------- regression
@dataclass(frozen=True, eq=False)
class RegressionData:
    """A synthetic regression data set and the geodesic it was generated from.

    Iterating yields ``x`` then ``y``, so ``x, y = make_regression_data(...)`` works.

    Attributes
    ----------
    x : ndarray, shape (n,)
        Covariates, i.i.d. U[0, 1].
    y : ndarray, shape (n, *point_shape)
        Responses on the manifold.
    footpoint : ndarray, shape point_shape
        True point at ``x = 0``.
    shooting_vector : ndarray, shape point_shape
        True velocity per unit of ``x``, tangent at ``footpoint``; the noise-free response
        at ``x`` is ``Exp(footpoint, x * shooting_vector)``.
    noise : float
        The noise level used (see :func:`make_regression_data` for its meaning per manifold).
    manifold : Manifold
        The manifold the data live on.
    """

    x: np.ndarray
    y: np.ndarray
    footpoint: np.ndarray
    shooting_vector: np.ndarray
    noise: float
    manifold: Manifold = field(repr=False, default=None)

    def __iter__(self):
        yield self.x
        yield self.y

    def true_points(self, x=None) -> np.ndarray:
        """Points ``Exp(footpoint, x * shooting_vector)`` of the true geodesic.

        Parameters
        ----------
        x : array-like, shape (m,), optional
            Covariates; the data's own ``x`` by default.

        Returns
        -------
        ndarray, shape (m, *point_shape)
        """
        x = self.x if x is None else np.atleast_1d(np.asarray(x, dtype=float))
        return self.manifold.geodesic(self.footpoint, self.shooting_vector, x)


def make_regression_data(manifold, n, *, noise=None, rng=None,
                         footpoint_region=None) -> RegressionData:
    r"""Noisy observations around a random geodesic, following paper 002.

    Covariates are i.i.d. ``x_i ~ U[0, 1]`` and the noise-free responses are
    ``Exp(p, x_i v)``. Per manifold:

    ``Sphere(d)`` (paper 002 section 4.1)
        ``p = q0`` uniform on the sphere, ``v = zeta`` a uniformly random tangent direction at
        ``q0`` scaled to length pi/4 (the paper does not give a length). Noise is added in the
        ambient space, ``N(0, delta I_{d+1})``, and the result renormalised onto the sphere.
        As in the paper, ``noise`` is ``delta``, the **variance** of each ambient coordinate
        (the paper writes the covariance as ``delta x I_{3x3}`` with delta in
        {0.001, 0.01, 0.1}), so the per-coordinate standard deviation is ``sqrt(noise)``.
        Default 0.001.
    ``SPD(k)`` (paper 002 appendix F)
        ``p, q`` random SPD matrices (``SPD.random_point``), ``v = Log(p, q)``; each clean
        response is moved to ``Exp(y_clean, xi)`` with ``xi ~ N(0, sigma^2 I)`` isotropic in the
        tangent space (orthonormal basis of the affine-invariant metric). ``noise`` is
        ``sigma``, a **standard deviation**. Default 0.01 (the paper's value).
    ``Hyperbolic(d)``
        As SPD: random ``p, q``, ``v = Log(p, q)``, tangent noise with standard deviation
        ``noise`` (default 0.05).
    ``KendallShape(k)``
        ``p`` is the fixed landmark curve :func:`kendall_template`, ``v`` a uniformly random
        horizontal direction scaled to length 0.5, plus horizontal tangent noise with standard
        deviation ``noise`` (default 0.02).
    ``Euclidean(d)``
        The line ``a + x b`` with ``a, b ~ N(0, I_d)`` plus ``N(0, noise^2 I_d)`` (``noise`` a
        standard deviation, default 0.1).
    Any other manifold
        ``p = random_point()``, ``v`` a random tangent direction of length
        ``min(1, injectivity_radius / 4)``, tangent noise with standard deviation ``noise``
        (default 0.05).

    Parameters
    ----------
    manifold : Manifold
    n : int
        Number of observations, at least 2.
    noise : float, optional
        Noise level, non-negative; ``0`` gives points exactly on the geodesic. Its meaning
        (variance on the sphere, standard deviation elsewhere) is described above.
    rng : None, int, SeedSequence or Generator, optional
        Source of randomness, normalised with ``np.random.default_rng``.
    footpoint_region : (array, float), optional
        ``Sphere(d)`` and ``SPD(k)`` only: a geodesic ball ``(center, radius)`` in which the
        footpoint is drawn uniformly for the Riemannian volume, instead of by the paper's
        protocol. On the sphere (radius below pi) the rest of the protocol is unchanged; on
        SPD(k) the shooting vector is then a uniformly random direction at the footpoint of
        length :data:`SPD_REGION_SHOOTING_LENGTH` (0.5), with the protocol's tangent noise
        (``center`` None: the identity). A demonstration whose footpoint lies in a region
        known in advance can then state that region, and the speed, as public bounds
        (``footpoint_radius`` and ``max_speed`` of
        :func:`~dpcore.release.private_geodesic_regression`). None (default) keeps the paper's
        protocol and its seeded data.

    Returns
    -------
    RegressionData
        With ``x`` (n,), ``y`` (n, *point_shape), ``footpoint``, ``shooting_vector``,
        ``noise``; unpacks as ``x, y``.

    Raises
    ------
    TypeError
        If ``manifold`` is not a :class:`~dpcore.manifolds.Manifold` or ``n``/``noise`` has the
        wrong type.
    ValueError
        If ``n < 2`` or ``noise`` is negative or not finite.

    Examples
    --------
    >>> from dpcore.manifolds import Sphere
    >>> x, y = make_regression_data(Sphere(2), 50, noise=0.001, rng=0)
    >>> x.shape, y.shape
    ((50,), (50, 3))
    """
    m = check_manifold(manifold)
    n = check_int(n, "n", minimum=2)
    noise = _check_noise(noise, m)
    rng = np.random.default_rng(rng)
    x = rng.uniform(0.0, 1.0, size=n)
    if footpoint_region is not None:
        region = next((f for cls, f in _REGION_PROTOCOLS.items() if isinstance(m, cls)), None)
        if region is None:
            raise ValueError("`footpoint_region` is only available on Sphere(d) and SPD(k), "
                             f"not {m!r}.")
        center, radius = footpoint_region
        return region(m, x, noise, rng, center, radius)
    return _regression_protocol(m, x, noise, rng)


def _sphere_region(m, x, noise, rng, center, radius):
    return _sphere_protocol(m, x, noise, rng, _uniform_in_cap(m, center, radius, rng))


def _spd_region(m, x, noise, rng, center, radius):
    p = _uniform_in_spd_ball(m, center, radius, rng)
    v = SPD_REGION_SHOOTING_LENGTH * _unit_tangent(m, p, rng)
    return _with_tangent_noise(m, x, p, v, noise, rng)


#: Regression data with the footpoint in a region (manifold class -> protocol).
_REGION_PROTOCOLS = {Sphere: _sphere_region, SPD: _spd_region}


def _uniform_in_cap(m, center, radius, rng):
    r"""A point uniform for the area in the cap ``B_radius(center)`` of ``Sphere(d)``.

    On :math:`S^d` the distance :math:`\rho` to the centre of a uniform point has the density
    :math:`\propto \sin^{d-1}\rho` on :math:`[0, r]`; inverted by bisection on its
    cumulative integral (closed form for d = 2: :math:`1 - \cos\rho`).
    """
    center = np.asarray(m.project(np.asarray(center, dtype=float)), dtype=float)
    radius = float(radius)
    if not 0.0 < radius < np.pi:
        raise ValueError(f"The footpoint region's radius must lie in (0, pi), got {radius!r}.")
    u = rng.uniform()
    if m.dim == 2:
        rho = float(np.arccos(1.0 - u * (1.0 - np.cos(radius))))
    else:
        grid = np.linspace(0.0, radius, 4097)
        mid = 0.5 * (grid[1:] + grid[:-1])
        cdf = np.concatenate([[0.0], np.cumsum(np.sin(mid) ** (m.dim - 1))])
        rho = float(np.interp(u * cdf[-1], cdf, grid))
    return m.exp(center, rho * _unit_tangent(m, center, rng))


def spd_log_volume_density(eigenvalues):
    r"""Logarithm of the Riemannian volume density of ``SPD(k)`` in normal coordinates about a
    point (relative to the Lebesgue measure of its tangent space), at a tangent vector X with
    the given eigenvalues (those of :math:`P^{-1/2} X P^{-1/2}` at the point P).

    For the affine-invariant metric the Jacobi operator of a unit :math:`X` has the
    eigenvalues :math:`-(\lambda_i - \lambda_j)^2 / 4` on the off-diagonal directions
    :math:`E_{ij}` and 0 on the diagonal ones, so the differential of Exp scales volume by

    .. math:: J(X) = \prod_{i<j} \frac{\sinh(|\lambda_i - \lambda_j| / 2)}
              {|\lambda_i - \lambda_j| / 2}.

    Parameters
    ----------
    eigenvalues : array, shape ``(..., k)``

    Returns
    -------
    ndarray, shape ``(...)``
        :math:`\log J(X)`.
    """
    lam = np.asarray(eigenvalues, dtype=float)
    i, j = np.triu_indices(lam.shape[-1], k=1)
    return np.sum(log_sinhc(0.5 * np.abs(lam[..., i] - lam[..., j])), axis=-1)


def _uniform_in_spd_ball(m, center, radius, rng):
    r"""A point uniform for the Riemannian volume in the ball ``B_radius(center)`` of SPD(k).

    Rejection from the tangent ball at the identity: :math:`X = \rho u` with :math:`u`
    uniform on the unit sphere and :math:`\rho = r U^{1/\dim}` (Lebesgue-uniform), kept with
    probability :math:`J(X) / J_{\max}`: the volume density (:func:`spd_log_volume_density`)
    over its bound on the ball, :math:`J_{\max} = (\sinh(r/\sqrt2) / (r/\sqrt2))^{k(k-1)/2}` (each
    :math:`|\lambda_i - \lambda_j| \le \sqrt2 \rho` since :math:`\sum \lambda_i^2 = \rho^2`).
    The kept :math:`\mathrm{Exp}(I, X) = e^X` is moved to ``center`` by the isometry
    :math:`P \mapsto C^{1/2} P C^{1/2}`, which maps I to C and keeps volume and distances.
    """
    center = np.eye(m.k) if center is None else np.asarray(center, dtype=float)
    if center.shape != tuple(m.point_shape) or not bool(m.belongs(center, atol=1e-8)):
        raise ValueError(f"The footpoint region's centre must be a point of {m!r}.")
    radius = float(radius)
    if not 0.0 < radius < np.inf:
        raise ValueError(f"The footpoint region's radius must be positive and finite, got "
                         f"{radius!r}.")
    log_bound = m.k * (m.k - 1) // 2 * float(log_sinhc(radius / np.sqrt(2.0)))
    identity = np.eye(m.k)
    for _ in range(100_000):
        u = _unit_tangent(m, identity, rng)
        rho = radius * rng.uniform() ** (1.0 / m.dim)
        lam = np.linalg.eigvalsh(sym(rho * u))
        if np.log(rng.uniform()) < spd_log_volume_density(lam) - log_bound:
            half = sym_funm(center, np.sqrt)
            return sym(half @ m.exp(identity, rho * u) @ half)
    raise RuntimeError(  # pragma: no cover - the acceptance is at least about 1 / (1 + r)
        f"Could not draw a footpoint in the ball of radius {radius:g} on {m!r}.")


# The paper protocol of each space, one function per space (functools.singledispatch on the
# manifold's class): a new manifold registers its own, the generic one serves the others. The
# random draws happen in the order of the original single function (seeded data unchanged).
@functools.singledispatch
def _regression_protocol(m, x, noise, rng):
    """Any other manifold: a random footpoint, a random direction of length
    min(1, injectivity radius / 4), tangent noise."""
    p = np.asarray(m.random_point(rng=rng), dtype=float)
    v = min(1.0, m.injectivity_radius / 4) * _unit_tangent(m, p, rng)
    return _with_tangent_noise(m, x, p, v, noise, rng)


@_regression_protocol.register
def _(m: Euclidean, x, noise, rng):
    """The line ``a + x b`` with Gaussian a, b and ``N(0, noise^2 I)`` noise."""
    n = x.shape[0]
    p = rng.standard_normal(m.point_shape)
    v = rng.standard_normal(m.point_shape)
    y = p + x[:, None] * v + noise * rng.standard_normal((n,) + m.point_shape)
    return RegressionData(x, y, p, v, noise, m)


@_regression_protocol.register
def _(m: Sphere, x, noise, rng):
    """Paper 002 §4.1: ambient Gaussian noise of variance ``noise``, renormalised."""
    return _sphere_protocol(m, x, noise, rng, m.random_point(rng=rng))


def _sphere_protocol(m, x, noise, rng, p):
    """The sphere's protocol from a given footpoint ``p``."""
    v = SPHERE_SHOOTING_LENGTH * _unit_tangent(m, p, rng)
    clean = m.geodesic(p, v, x)
    noisy = clean + np.sqrt(noise) * rng.standard_normal(clean.shape)
    y = noisy / np.linalg.norm(noisy, axis=-1, keepdims=True)
    return RegressionData(x, y, p, v, noise, m)


@_regression_protocol.register(SPD)
@_regression_protocol.register(Hyperbolic)
def _(m, x, noise, rng):
    """Paper 002 app. F: ``v = Log(p, q)`` between random points, tangent noise."""
    p = m.random_point(rng=rng)
    q = m.random_point(rng=rng)
    return _with_tangent_noise(m, x, p, m.log(p, q), noise, rng)


@_regression_protocol.register
def _(m: KendallShape, x, noise, rng):
    """The landmark curve template, a horizontal direction of length 0.5, tangent noise."""
    p = kendall_template(m.k_landmarks)
    v = KENDALL_SHOOTING_LENGTH * _unit_tangent(m, p, rng)
    return _with_tangent_noise(m, x, p, v, noise, rng)


def _with_tangent_noise(m, x, p, v, noise, rng):
    clean = m.geodesic(p, v, x)
    y = m.exp(clean, noise * m.random_tangent(clean, rng)) if noise > 0 else clean
    return RegressionData(x, y, p, v, noise, m)


# ------------------------------------------------------------------------------- means
def _check_center(manifold, center):
    if center is None:
        return default_center(manifold)
    c = np.asarray(center, dtype=float)
    if c.shape != tuple(manifold.point_shape):
        raise ValueError(
            f"`center` must have shape {tuple(manifold.point_shape)} for {manifold!r}, "
            f"got {c.shape}."
        )
    if not np.all(np.isfinite(c)) or not bool(manifold.belongs(c, atol=1e-8)):
        raise ValueError(f"`center` is not a point of {manifold!r}.")
    return c


def _wishart_ball(m: SPD, n, radius, center, rng):
    """Paper 001 supplement A.2.1: X ~ W(I/k, df=k) kept if d(X, I) < radius, here moved to
    ``center`` by the isometry X -> C^{1/2} X C^{1/2} (which maps I to C) before the test.

    Draws come in vectorised batches sized from the acceptance rate seen so far, at most
    ``max(MAX_WISHART_DRAWS, MAX_WISHART_DRAWS_PER_POINT * n)`` in total; the sampler gives up
    early once even an optimistic rate could not reach ``n`` points within that cap.
    """
    k = m.k
    half = sym_funm(center, np.sqrt)
    cap = max(MAX_WISHART_DRAWS, MAX_WISHART_DRAWS_PER_POINT * n)
    kept, draws, n_kept = [], 0, 0
    batch = min(_BATCH, max(1000, 4 * n))
    while True:
        if draws >= cap:
            raise RuntimeError(
                f"Only {n_kept} of {draws} Wishart(I/{k}, df={k}) draws fell within distance "
                f"radius={radius:g} of the centre, fewer than the {n} points requested. Use a "
                f"larger radius or fewer points."
            )
        g = rng.standard_normal((batch, k, k)) / np.sqrt(k)
        cand = sym(half @ (g @ np.swapaxes(g, -1, -2)) @ half)
        # d(C^1/2 X C^1/2, C) = d(X, I); testing the moved point keeps the bound exact.
        d = m.dist(center, cand)
        good = cand[d < radius]
        draws += batch
        kept.append(good)
        n_kept += good.shape[0]
        if n_kept >= n:
            break
        # (n_kept + 3) / draws over-estimates a tiny acceptance rate, so this only gives up
        # when even an optimistic rate could not reach n points within the cap.
        if draws >= _BATCH and (n_kept + 3) / draws * cap < n:
            raise RuntimeError(
                f"The SPD({k}) rejection sampler accepts too rarely: {n_kept} of {draws} "
                f"Wishart(I/{k}, df={k}) draws fell within distance radius={radius:g} of the "
                f"centre (median distance {np.median(d):.3g}); reaching {n} points would take "
                f"more than {cap} draws. Use a larger radius (paper 001 uses 1.5 "
                f"for SPD(2)) or fewer points."
            )
        rate = max(n_kept, 1) / draws
        batch = int(min(_BATCH, cap - draws, 1.2 * (n - n_kept) / rate + 100))
    return np.concatenate(kept)[:n]


def _tangent_ball(m, n, radius, center, rng, *, polar_uniform):
    """Points ``Exp(center, r u)`` with ``u`` uniform on the unit sphere of T_center M.

    ``r ~ U(0, radius)`` when ``polar_uniform`` (paper 001's sphere protocol), otherwise
    ``r = radius U^{1/dim}`` (uniform in the tangent ball). Points whose computed distance
    exceeds ``radius`` by rounding are redrawn, so the ball constraint holds exactly.
    """
    out = np.empty((n,) + tuple(m.point_shape))
    todo = np.arange(n)
    for _ in range(100):
        base = np.broadcast_to(center, (todo.size,) + center.shape)
        u = _unit_tangent(m, base, rng)
        s = rng.uniform(0.0, 1.0, size=todo.size)
        r = radius * (s if polar_uniform else s ** (1.0 / max(m.dim, 1)))
        pts = m.exp(base, m.pointwise(r) * u)
        ok = m.dist(base, pts) <= radius
        out[todo[ok]] = pts[ok]
        todo = todo[~ok]
        if todo.size == 0:
            return out
    raise RuntimeError(  # pragma: no cover - would need 100 rounding failures in a row
        f"Could not draw points within radius {radius:g} of the centre on {m!r}."
    )


def make_mean_data(manifold, n, *, radius, rng=None, center=None) -> np.ndarray:
    r"""Points in the geodesic ball ``B_radius(center)``, following paper 001.

    ``Sphere(d)`` (paper 001 supplement A.3.1)
        ``Exp(center, theta u)`` with the polar angle ``theta ~ U(0, radius)`` about the centre
        and ``u`` a uniform direction (uniform azimuth when d = 2). The paper uses
        ``radius = pi/8`` about the north pole; points concentrate towards the centre.
    ``SPD(k)`` (paper 001 supplement A.2.1)
        ``X ~ Wishart(V = I/k, df = k)`` (so ``E X = I``), kept only if ``d(X, I) < radius``
        (vectorised rejection sampling; the paper uses radius 1.5 with k = df = 2), then moved
        to ``center`` by the isometry ``X -> C^{1/2} X C^{1/2}``. Acceptance falls quickly with
        ``k`` (about 24% for k = 2, 6% for k = 3, 0.7% for k = 4 at radius 1.5); at most
        ``max(2,000,000, 1000 n)`` draws are made (the sampler gives up below 0.1%).
    Other manifolds
        ``Exp(center, r u)`` with ``u`` uniform on the unit sphere of the tangent space and
        ``r = radius U^{1/dim}`` (uniform in the tangent ball).

    Every returned point satisfies ``manifold.dist(center, point) <= radius``.

    Parameters
    ----------
    manifold : Manifold
    n : int
        Number of points, at least 1.
    radius : float
        Radius of the ball, positive; at most the injectivity radius when that is finite
        (pi on the sphere, pi/2 on Kendall shape space).
    rng : None, int, SeedSequence or Generator, optional
        Source of randomness, normalised with ``np.random.default_rng``.
    center : array-like, optional
        Centre of the ball; by default :func:`default_center` (north pole ``e_{d+1}`` on the
        sphere, identity on SPD, :func:`kendall_template` on Kendall, origin on Euclidean and
        hyperbolic space).

    Returns
    -------
    ndarray, shape (n, *point_shape)

    Raises
    ------
    TypeError, ValueError
        For invalid arguments.
    RuntimeError
        If the SPD rejection sampler accepts too rarely for the requested ``n``.
    """
    m = check_manifold(manifold)
    n = check_int(n, "n", minimum=1)
    radius = check_positive(radius, "radius")
    if np.isfinite(m.injectivity_radius) and radius > m.injectivity_radius:
        raise ValueError(
            f"`radius` must be at most the injectivity radius {m.injectivity_radius:.6g} of "
            f"{m!r}, got {radius!r}."
        )
    c = _check_center(m, center)
    rng = np.random.default_rng(rng)
    return _mean_protocol(m, n, radius, c, rng)


@functools.singledispatch
def _mean_protocol(m, n, radius, c, rng):
    """Paper 001: points at uniform directions and radii about the centre."""
    return _tangent_ball(m, n, radius, c, rng, polar_uniform=False)


@_mean_protocol.register
def _(m: Sphere, n, radius, c, rng):
    """Paper 001 on the sphere: uniform on the polar cap (polar angle law)."""
    return _tangent_ball(m, n, radius, c, rng, polar_uniform=True)


@_mean_protocol.register
def _(m: SPD, n, radius, c, rng):
    """Paper 001 app.: Wishart draws kept inside the ball."""
    return _wishart_ball(m, n, radius, c, rng)
