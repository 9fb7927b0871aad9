r"""The tangent bundle TM as the state space of a Metropolis-Hastings random walk.

The joint K-norm gradient mechanism of geodesic regression samples a footpoint and a shooting
vector together, :math:`(p, v) \in TM`, from
:math:`\propto \exp(-\sqrt{\|\nabla_p E\|^2 + \|\nabla_v E\|^2}/\sigma)` (DESIGN §8). A state is
stored as one array of shape ``(2, *point_shape)`` (``[p, v]``), and a move with increment
:math:`(a, b) \in T_pM \times T_pM` is

.. math:: (p, v) \mapsto (p', \Gamma_{p \to p'}(v + s\, b)), \qquad p' = \exp_p(a),

with :math:`\Gamma` parallel transport along the geodesic from p to p' and s a fixed scale for
the vector part. The reverse move from :math:`(p', v')` has increment
:math:`(-\Gamma a, -\Gamma b)`, of the same norm because :math:`\Gamma` is an isometry, and the
footpoint move is symmetric on a symmetric space (see :mod:`dpcore.sampling.mcmc`); parallel
transport also preserves the Lebesgue measure of the fibres. So with increments uniform in a ball
of :math:`T_pM \times T_pM` the proposal is symmetric with respect to the Liouville measure
(volume on M times Lebesgue on the fibres) and Metropolis-Hastings needs no correction.

Only what the sampler uses is implemented: ``exp``, ``inner``/``norm``, ``random_tangent``,
``proj_tangent`` and, for the diagnostics, ``log`` and ``dist``.
"""

from __future__ import annotations

import numpy as np

from ..manifolds.base import Manifold, blockwise


class TangentBundleWalk(Manifold):
    """Random-walk state space ``TM`` of a homogeneous manifold (see the module docstring).

    Parameters
    ----------
    base : Manifold
        A homogeneous manifold M.
    vector_scale : float
        Scale s of the shooting-vector part of each move relative to the footpoint part.
    """

    is_homogeneous = True

    def __init__(self, base, vector_scale=1.0):
        if not base.is_homogeneous:
            raise ValueError(f"The bundle walk needs a homogeneous manifold, got {base!r}.")
        self.base = self.bundle_base = base
        self.vector_scale = float(vector_scale)
        self.point_shape = (2, *base.point_shape)
        self.dim = 2 * base.dim
        self.injectivity_radius = base.injectivity_radius
        self.curvature_bounds = base.curvature_bounds

    def __repr__(self):
        return f"TangentBundleWalk({self.base!r}, vector_scale={self.vector_scale:g})"

    # --------------------------------------------------------------------- parts
    def split(self, x):
        """``(p, v)`` views of states ``(..., 2, *point_shape)``."""
        x = np.asarray(x, dtype=float)
        axis = x.ndim - self.point_ndim
        return np.take(x, 0, axis=axis), np.take(x, 1, axis=axis)

    def join(self, p, v):
        """States from footpoints and vectors of equal shape."""
        p, v = np.broadcast_arrays(np.asarray(p, dtype=float), np.asarray(v, dtype=float))
        return np.stack([p, v], axis=p.ndim - self.base.point_ndim)

    # --------------------------------------------------------------------- metric
    def inner(self, x, u, w):
        p, _ = self.split(x)
        u_p, u_v = self.split(u)
        w_p, w_v = self.split(w)
        return self.base.inner(p, u_p, w_p) + self.base.inner(p, u_v, w_v)

    def exp(self, x, u):
        p, v = self.split(x)
        a, b = self.split(u)
        p_new = self.base.exp(p, a)
        return self.join(p_new, self.base.transport(p, p_new, v + self.vector_scale * b))

    @blockwise
    def log(self, x, y):
        """The increment of the move from ``x`` to ``y`` (inverse of :meth:`exp`); a large
        batch (the diagnostics' millions of draws against one reference) in blocks."""
        p, v = self.split(x)
        p2, v2 = self.split(y)
        return self.join(self.base.log(p, p2),
                         (self.base.transport(p2, p, v2) - v) / self.vector_scale)

    def dist(self, x, y):
        return self.norm(x, self.log(x, y))

    def transport(self, x, y, v):
        raise NotImplementedError("TangentBundleWalk is a sampler state space only.")

    def proj_tangent(self, x, u):
        p, _ = self.split(x)
        a, b = self.split(u)
        return self.join(self.base.proj_tangent(p, a), self.base.proj_tangent(p, b))

    def random_point(self, size=None, rng=None):
        raise NotImplementedError("TangentBundleWalk is a sampler state space only.")

    def random_tangent(self, x, rng=None):
        """Increments with i.i.d. N(0, 1) coordinates in orthonormal bases of both parts."""
        rng = np.random.default_rng(rng)
        p, _ = self.split(x)
        return self.join(self.base.random_tangent(p, rng), self.base.random_tangent(p, rng))

    def _scale_by_curvature(self, p, v, w0, scale):
        raise NotImplementedError("TangentBundleWalk is a sampler state space only.")


__all__ = ["TangentBundleWalk"]
