"""Shared pieces of the privacy mechanisms: results, validation, support balls."""

from __future__ import annotations

import numbers
from dataclasses import dataclass, field

import numpy as np

from .._validation import check_positive


@dataclass
class MechanismResult:
    """Private draws with the facts needed to state their guarantee.

    Attributes
    ----------
    values : ndarray
        The private draws, shape ``(*size, *point_shape)``.
    exact : bool
        Whether the draws come from an exact sampler. If not (MCMC), pure ε-DP only holds
        approximately (δ of order 1 / chain length, paper 002 app. A.1).
    sampler : str
        How the draws were produced.
    diagnostics : dict
        Sampler diagnostics (acceptance rate, ESS, R-hat for MCMC; acceptance of rejection steps).
    """

    values: np.ndarray
    exact: bool
    sampler: str
    diagnostics: dict = field(default_factory=dict)


def check_epsilon(epsilon, name="epsilon"):
    return check_positive(epsilon, name)


def check_sensitivity(sensitivity, name="sensitivity"):
    return check_positive(sensitivity, name)


def check_point(manifold, point, name):
    point = np.asarray(point, dtype=float)
    if point.shape != manifold.point_shape:
        raise ValueError(
            f"`{name}` must be one point of shape {manifold.point_shape} for {manifold!r}, "
            f"got shape {point.shape}."
        )
    if not np.all(np.isfinite(point)):
        raise ValueError(f"`{name}` contains NaN or infinite values.")
    if not np.all(manifold.belongs(point, atol=1e-6)):
        raise ValueError(f"`{name}` is not a point of {manifold!r}.")
    return point


@dataclass(frozen=True)
class Ball:
    """A closed geodesic ball ``B_radius(center)`` used to restrict a mechanism's support."""

    center: np.ndarray
    radius: float

    @classmethod
    def make(cls, manifold, center, radius):
        radius = check_positive(radius, "radius", allow_inf=True)
        return cls(check_point(manifold, center, "center"), radius)

    def as_tuple(self):
        return (self.center, self.radius)

    def contains(self, manifold, points):
        return manifold.dist(points, self.center) <= self.radius

    def pull_inside(self, manifold, points, margin=0.999):
        """Points outside the ball moved along the geodesic from the centre to distance
        ``margin * radius``; points inside are returned unchanged. Shape ``(..., *point_shape)``.

        Used for the starting point of chains restricted to the ball: a chain started outside
        has log-density −inf at every proposal and never enters its support.
        """
        points = np.asarray(points, dtype=float)
        if not np.isfinite(self.radius):
            return points
        d = np.asarray(manifold.dist(points, self.center), dtype=float)
        if np.all(d <= self.radius):
            return points
        log = manifold.log(self.center, points)
        scale = np.where(d > self.radius, margin * self.radius / np.maximum(d, 1e-300), 1.0)
        moved = manifold.exp(self.center, log * scale.reshape(scale.shape
                                                              + (1,) * manifold.point_ndim))
        inside = (d <= self.radius).reshape(d.shape + (1,) * manifold.point_ndim)
        return np.where(inside, points, moved)

    def to_dict(self):
        return {"center": np.asarray(self.center).tolist(), "radius": float(self.radius)}


def size_tuple(size):
    if size is None:
        return ()
    if isinstance(size, numbers.Integral) and not isinstance(size, bool):
        if size < 1:
            raise ValueError(f"`size` must be at least 1, got {size}.")
        return (int(size),)
    size = tuple(int(s) for s in size)
    if any(s < 1 for s in size):
        raise ValueError(f"`size` entries must be at least 1, got {size}.")
    return size
