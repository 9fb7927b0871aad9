r"""Riemannian Laplace (paper 001 Def 3, Thm 1) and the ambient Euclidean Laplace baseline."""

from __future__ import annotations

import numpy as np

from .._validation import check_manifold
from .base import (
    Ball,
    MechanismResult,
    check_epsilon,
    check_point,
    check_sensitivity,
    size_tuple,
)
from .protocol import Guarantee


def _laplace_integrable(manifold, sigma):
    """Whether exp(-d/σ) has finite mass on the whole manifold (no support restriction).

    It has iff 1/σ exceeds the exponential growth rate of the volume of geodesic balls,
    :attr:`~dpcore.manifolds.Manifold.volume_growth_rate`: 0 on compact and flat spaces (every
    σ works), sqrt(2)/2 on SPD(2), d - 1 on H^d. A space that does not know its rate is bounded
    by comparison (Bishop-Gromov) with the hyperbolic space of curvature kappa_low.
    """
    if np.isfinite(manifold.injectivity_radius) and manifold.curvature_bounds[0] > 0:
        return True  # compact
    try:
        rate = manifold.volume_growth_rate
    except NotImplementedError:
        rate = (manifold.dim - 1) * np.sqrt(max(-manifold.curvature_bounds[0], 0.0))
    return rate == 0.0 or 1.0 / sigma > rate


class RiemannianLaplace:
    r"""Riemannian Laplace mechanism: density :math:`\propto \exp(-d(\eta, y)/\sigma)`.

    With :math:`\sigma = \Delta/\epsilon` on homogeneous manifolds (the normalizing constant does
    not depend on the centre) and :math:`\sigma = 2\Delta/\epsilon` otherwise, or whenever the
    support is restricted to a ball that is not centred at the released statistic
    (paper 001 Thm 1).

    Parameters
    ----------
    manifold : Manifold
    epsilon : float
        Privacy budget ε.
    sensitivity : float
        Bound Δ on the geodesic distance between the statistic on adjacent datasets.
    support : tuple (center, radius), optional
        Restrict the output to the public ball ``B_radius(center)``. Required on spaces where
        :math:`\exp(-d/\sigma)` is not integrable (SPD or hyperbolic with large σ).
    public_ball : tuple (center, radius), optional
        A public ball known to hold every statistic released (e.g. the Fréchet mean of data in
        it). On a non-compact homogeneous space without ``support`` it lets the release be
        float-safe: the law is truncated far outside this ball
        (:mod:`dpcore.sampling.lattice`), and σ is set to
        :math:`\Delta/(\epsilon (1 - s))` with :math:`s` = ``TRUNCATION_SHARE`` so that the
        truncation's slack keeps the total at ε exactly.

    Notes
    -----
    Draws are released on a public lattice where :func:`~dpcore.sampling.lattice.
    lattice_available` (float-safe: the possible outputs do not depend on the data, DESIGN
    §12); elsewhere the radial sampler's floats depend on the statistic, and the result's
    ``float_safety`` diagnostic says so.
    """

    name = "laplace"

    def __init__(self, *, manifold, epsilon, sensitivity, support=None, public_ball=None):
        from ..sampling.lattice import (
            TRUNCATION_SHARE,
            chart_is_sound,
            lattice_available,
            truncation_radius,
        )

        self.manifold = check_manifold(manifold)
        self.epsilon = check_epsilon(epsilon)
        self.sensitivity = check_sensitivity(sensitivity)
        self.support = None if support is None else Ball.make(manifold, *support)
        self.public_ball = None if public_ball is None else Ball.make(manifold, *public_ball)
        restricted = self.support is not None
        factor = 1.0 if (manifold.is_homogeneous and not restricted) else 2.0
        self.sigma = factor * self.sensitivity / self.epsilon
        self.sigma_rule = "Delta/epsilon" if factor == 1.0 else "2 Delta/epsilon"
        self.truncated = (not restricted and not manifold.is_compact
                          and self.public_ball is not None and lattice_available(
                              manifold, "laplace", public_ball=self.public_ball))
        if self.truncated:
            sigma = self.sensitivity / (self.epsilon * (1.0 - TRUNCATION_SHARE))
            s, _ = truncation_radius(manifold, sigma, self.epsilon)
            # Far out the chart may be numerically degenerate (public check): then the radial
            # sampler runs, labelled not float-safe, at sigma = Delta/epsilon.
            self.truncated = chart_is_sound(manifold, self.public_ball.center,
                                            self.public_ball.radius + s)
        if self.truncated:
            self.sigma = sigma
            self.sigma_rule = "Delta/(epsilon (1 - 1e-9)): truncation slack inside epsilon"
        if not restricted and not _laplace_integrable(manifold, self.sigma):
            raise ValueError(
                f"The Laplace density with sigma={self.sigma:.4g} has infinite mass on "
                f"{manifold!r}; pass `support=(center, radius)` (a public ball) or a larger "
                "`epsilon`."
            )

    def guarantee(self):
        """One draw is ε-DP with δ = 0 (paper 001 Thm 1; exact or lattice sampler)."""
        return Guarantee(epsilon=self.epsilon, delta=0.0, mu=None,
                         sensitivity=self.sensitivity, sigma=self.sigma,
                         sigma_rule=self.sigma_rule)

    def release(self, statistic, size=None, rng=None, *, float_safe=True):
        """Draw private versions of ``statistic`` (one point); ``float_safe=False`` uses the
        radial sampler even where the lattice sampler applies (studies only)."""
        from ..sampling import exact_sampler_available, sample_laplace

        statistic = check_point(self.manifold, statistic, "statistic")
        support = None if self.support is None else self.support.as_tuple()
        public = None if self.public_ball is None else self.public_ball.as_tuple()
        found = None if not float_safe else lattice_release(
            self.manifold, statistic, self.sigma, "laplace", size, rng, support=support,
            public_ball=public, truncate=self.truncated, epsilon=self.epsilon)
        if found is not None:
            return found
        values = sample_laplace(
            self.manifold, statistic, self.sigma, size=size, rng=rng, support=support
        )
        exact = bool(exact_sampler_available(self.manifold, "laplace"))
        sampler = "exact radial" if exact else "radial part by MCMC"
        return MechanismResult(values=values, exact=exact, sampler=sampler,
                               diagnostics={"float_safety": RADIAL_NOTE})


#: What a radial release cannot claim (DESIGN §12, floating point).
RADIAL_NOTE = ("not float-safe: the radial sampler's output floats are computed from the "
               "statistic, so the set of possible outputs depends on the data")


#: The sampler of a draw released on a public lattice, in the release's words.
LATTICE_SAMPLER = "exact rejection from a refined envelope, released on a public lattice"


def lattice_plan(manifold, kind, *, sigma=None, epsilon=None, support=None, public_ball=None,
                 truncate=False):
    """Whether :func:`lattice_release` draws on its public lattice (float-safe, DESIGN §12),
    decided from public inputs only, before any draw.

    Returns
    -------
    dict or None
        None where the radial sampler runs instead; else ``truncation`` (the radius added to
        the public ball when a non-compact law is truncated, or None) and ``slack`` (the
        truncation's ε slack, or None).
    """
    from ..sampling.lattice import chart_is_sound, lattice_available, truncation_radius

    if not lattice_available(manifold, kind, support=support,
                             public_ball=public_ball if truncate else None):
        return None
    if support is None and not manifold.is_compact and not truncate:
        return None
    truncation = slack = None
    if truncate and support is None and not manifold.is_compact:
        truncation, slack = truncation_radius(manifold, sigma, epsilon)
        slack = float(slack)
    if not chart_is_sound(manifold, *(support if support is not None else (
            (manifold.origin, manifold.diameter) if manifold.is_compact
            else (public_ball[0], float(public_ball[1]) + truncation)))):
        return None
    return {"truncation": truncation, "slack": slack}


def lattice_release(manifold, statistic, sigma, kind, size, rng, *, support=None,
                    public_ball=None, truncate=False, epsilon=None):
    """Float-safe exact draws on a public lattice (:mod:`dpcore.sampling.lattice`) as a
    :class:`MechanismResult`, or None where that sampler does not apply (public inputs only).
    """
    from ..sampling.lattice import lattice_distance_draws

    plan = lattice_plan(manifold, kind, sigma=sigma, epsilon=epsilon, support=support,
                        public_ball=public_ball, truncate=truncate)
    if plan is None:
        return None
    n_per = 1 if size is None else int(np.prod(size_tuple(size)))
    truncation = plan["truncation"]
    extra = {} if plan["slack"] is None else {"truncation_slack": plan["slack"]}
    rng = np.random.default_rng(rng)
    points, lattice = lattice_distance_draws(manifold, statistic, sigma, kind, n_per, rng,
                                             support=support, public_ball=public_ball,
                                             truncation=truncation)
    values = points[0] if size is None else points.reshape(
        (*size_tuple(size), *manifold.point_shape))
    from .envelopes import LATTICE_NOTE

    return MechanismResult(
        values=values, exact=True,
        sampler=LATTICE_SAMPLER, diagnostics={"float_safety": LATTICE_NOTE,
                     "lattice_spacing": lattice["lattice_spacing"], **extra})


# ---------------------------------------------------------------------- ambient embedding
def ambient_dimension(manifold):
    """Dimension D of the linear space the manifold is embedded in (``manifold.ambient_dim``)."""
    return manifold.ambient_dim


def embed(manifold, points):
    """Ambient coordinates, isometric to the Euclidean/Frobenius norm (``manifold.embed``)."""
    return manifold.embed(points)


def unembed(manifold, coords):
    """Inverse of :func:`embed` (``manifold.unembed``; may lie off the manifold)."""
    return manifold.unembed(coords)


def ambient_radius(manifold, center, radius):
    """Radius r_E of a Euclidean ball about ``center`` holding B_r(center)
    (``manifold.ambient_radius``)."""
    return manifold.ambient_radius(center, radius)


def project_to_manifold(manifold, points):
    """Map ambient points back onto the manifold (``manifold.project``; on SPD its eigenvalue
    floor, 1e-8 x max(1, largest))."""
    return manifold.project(points)


def on_manifold(manifold, points, atol=1e-9):
    """Whether ambient points lie on the manifold (``manifold.on_manifold``)."""
    return manifold.on_manifold(points, atol=atol)


class AmbientLaplace:
    r"""Euclidean K-norm (Laplace) noise added in an ambient space (paper 001 §5, suppl. A.4).

    The statistic is embedded in :math:`\mathbb{R}^D` and released as
    :math:`\bar x + \sigma R U`, :math:`R \sim \Gamma(D, 1)`, :math:`U` uniform on the unit sphere,
    :math:`\sigma = \Delta_E/\epsilon` with :math:`\Delta_E` the sensitivity in the ambient norm.
    The result usually leaves the manifold (always on the sphere); it is reported, and
    optionally projected back (post-processing, so the guarantee is unchanged).

    Parameters
    ----------
    manifold : Sphere, SPD or Euclidean
    epsilon : float
    sensitivity : float
        Ambient (Euclidean / Frobenius) sensitivity of the statistic.
    project : bool
        Project the noisy points back onto the manifold.
    """

    name = "ambient_laplace"

    def __init__(self, *, manifold, epsilon, sensitivity, project=True, public_ball=None):
        from ..manifolds import Euclidean
        from ..sampling.lattice import TRUNCATION_SHARE, lattice_available

        self.manifold = check_manifold(manifold)
        self.dim = ambient_dimension(manifold)
        self.epsilon = check_epsilon(epsilon)
        self.sensitivity = check_sensitivity(sensitivity)
        self.sigma = self.sensitivity / self.epsilon
        if not isinstance(project, bool):
            raise TypeError(f"`project` must be a bool, got {type(project).__name__}.")
        self.project = project
        # A public ambient ball (centre, radius) holding the statistic: the noise is then drawn
        # on a public lattice of R^D, truncated far outside it (float-safe; the truncation's
        # slack is kept inside epsilon by the factor 1 - TRUNCATION_SHARE).
        self.ambient_space = Euclidean(self.dim)
        self.public_ball = None
        if public_ball is not None and lattice_available(self.ambient_space, "laplace",
                                                         public_ball=public_ball):
            self.public_ball = (np.asarray(public_ball[0], dtype=float),
                                float(public_ball[1]))
            self.sigma = self.sensitivity / (self.epsilon * (1.0 - TRUNCATION_SHARE))

    def guarantee(self):
        """One draw is ε-DP with δ = 0 (the Euclidean K-norm mechanism in the ambient space)."""
        rule = ("Delta_ambient/(epsilon (1 - 1e-9))" if self.public_ball is not None
                else "Delta_ambient/epsilon")
        return Guarantee(epsilon=self.epsilon, delta=0.0, mu=None,
                         sensitivity=self.sensitivity, sigma=self.sigma, sigma_rule=rule)

    def release(self, statistic, size=None, rng=None, *, float_safe=True):
        """Noisy ambient copies of ``statistic`` (a point of the ambient space);
        ``float_safe=False`` uses the radial draw (studies only)."""
        rng = np.random.default_rng(rng)
        shape = size_tuple(size)
        statistic = np.asarray(statistic, dtype=float)
        if statistic.shape != self.manifold.point_shape:
            raise ValueError(
                f"`statistic` must have shape {self.manifold.point_shape}, got {statistic.shape}."
            )
        coords = embed(self.manifold, statistic)
        found = None if self.public_ball is None or not float_safe else lattice_release(
            self.ambient_space, coords, self.sigma, "laplace", size, rng,
            public_ball=self.public_ball, truncate=True, epsilon=self.epsilon)
        if found is not None:
            noisy = unembed(self.manifold, found.values)
            sampler, safety = found.sampler, dict(found.diagnostics)
        else:
            direction = rng.standard_normal(shape + (self.dim,))
            direction /= np.linalg.norm(direction, axis=-1, keepdims=True)
            radius = rng.gamma(self.dim, 1.0, size=shape)
            noisy = unembed(self.manifold, coords + self.sigma * radius[..., None] * direction)
            sampler = "exact Gamma(D, 1) radius x uniform direction"
            safety = {"float_safety": RADIAL_NOTE}
        left = ~on_manifold(self.manifold, noisy)
        values = project_to_manifold(self.manifold, noisy) if self.project else noisy
        return MechanismResult(
            values=values,
            exact=True,
            sampler=sampler,
            diagnostics={**safety,
                "left_manifold": left,
                "ambient_values": noisy,
                "fraction_left_manifold": float(np.mean(left)),
                "projected": self.project,
                "ambient_dimension": self.dim,
            },
        )


__all__ = [
    "AmbientLaplace",
    "RiemannianLaplace",
    "ambient_dimension",
    "ambient_radius",
    "embed",
    "project_to_manifold",
    "unembed",
]
