r"""Normal coordinates of :math:`TS^2` about a centre, for placing test data (not a subject of
the tests).

A centre :math:`m_0` with an orthonormal basis :math:`(e_1, e_2)` of :math:`T_{m_0}S^2`; with
:math:`U = u_1e_1 + u_2e_2`, :math:`r = |u|`, :math:`W = w_1e_1 + w_2e_2`: the footpoint
:math:`p = \exp_{m_0}(U) = \cos r\,m_0 + \mathrm{sinc}(r)\,U` and the shooting vector
:math:`v = W - (u\cdot w)(\mathrm{sinc}(r)\,m_0 + K(r)U)`, :math:`K(r) = (1 - \cos r)/r^2`,
the parallel transport of :math:`W` along the radial geodesic. These are the formulas, float
for float, of the chart the :math:`S^2` chart samplers used (replaced by the native sampler in
session 35 and removed), so the seeded data sets of the tests that place their geodesics with
it are unchanged.
"""

from __future__ import annotations

import numpy as np


def _sinc(x):
    return np.divide(np.sin(x), x, out=np.ones_like(x), where=x != 0)


class NormalChart:
    """Coordinates ``(u, w)`` of :math:`TS^2` over the ball :math:`|u| < \\pi` about ``center``
    (module docstring); ``e1`` defaults to the unit vector of the centre's smallest
    coordinate, made tangent."""

    def __init__(self, center, e1=None):
        m0 = np.asarray(center, dtype=float).reshape(3)
        if e1 is None:
            k = int(np.argmin(np.abs(m0)))
            e1 = np.zeros(3)
            e1[k] = 1.0
            e1 = e1 - (e1 @ m0) * m0
            e1 = e1 / np.linalg.norm(e1)
        e1 = np.asarray(e1, dtype=float).reshape(3)
        #: Rows: centre, e1, e2 (orthonormal).
        self.frame = np.stack([m0, e1, np.cross(m0, e1)])

    def to_bundle(self, u, w):
        """Footpoints and shooting vectors ``(p, v)``, each ``(..., 3)``, of ``u, w``
        ``(..., 2)``."""
        u = np.asarray(u, dtype=float)
        w = np.asarray(w, dtype=float)
        r = np.sqrt(np.sum(u * u, axis=-1))
        s = _sinc(r)
        k = 0.5 * _sinc(0.5 * r) ** 2
        uw = np.sum(u * w, axis=-1)
        p = np.stack([np.cos(r), s * u[..., 0], s * u[..., 1]], axis=-1)
        v = np.stack([-uw * s, w[..., 0] - uw * k * u[..., 0], w[..., 1] - uw * k * u[..., 1]],
                     axis=-1)
        return p @ self.frame, v @ self.frame

    def from_bundle(self, p, v):
        """Coordinates ``(u, w)`` of ``(p, v)`` (``p`` not antipodal to the centre)."""
        p = np.asarray(p, dtype=float)
        v = np.asarray(v, dtype=float)
        pc = p @ self.frame.T
        s = np.hypot(pc[..., 1], pc[..., 2])
        theta = np.arctan2(s, pc[..., 0])
        scale = np.divide(theta, s, out=np.ones_like(s), where=s > 0)
        u = pc[..., 1:] * scale[..., None]
        r = np.sqrt(np.sum(u * u, axis=-1))
        vc = v @ self.frame.T
        along = _sinc(r) * vc[..., 0] + 0.5 * _sinc(0.5 * r) ** 2 * np.sum(u * vc[..., 1:],
                                                                        axis=-1)
        return u, vc[..., 1:] - u * along[..., None]
