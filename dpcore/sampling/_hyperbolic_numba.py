r"""Compiled (numba) clipped joint gradient norms on the hyperboloid ``Hyperbolic(d)``: the
uniform exact proposals' evaluation (:func:`~dpcore.sampling._compiled_sphere.
compiled_gradient_norms`): 6-45 times the sphere's kernel per proposal at n = 30-3,000,
against 11-173 times for the library's numpy path (``benchmarks/bench_uniform_proposals.py``;
four transcendental functions per term).

Term by term the formulas of :class:`~dpcore.manifolds.Hyperbolic` and
:func:`~dpcore.learning.regression.generic_regression_gradient` (curvature -1, Minkowski form
:math:`\langle a, b\rangle = -a_0 b_0 + \sum_k a_k b_k`): the prediction
:math:`\hat y_i = \cosh|t_i v|\, p + \mathrm{sinhc}|t_i v|\, t_i v`, the residual
:math:`\epsilon_i = \log_{\hat y_i} y_i = u / \mathrm{sinhc}(\mathrm{arsinh}\, s)` with
:math:`c = \max(-\langle \hat y_i, y_i\rangle, 1)`, :math:`u = y_i - c\hat y_i`,
:math:`s = |u|`, clipped to norm :math:`\tau`, and the adjoint Jacobi maps: with
:math:`e = \sinh|t_iv|\, p + \cosh|t_iv|\, \hat u` the geodesic's unit direction at
:math:`\hat y_i` (:math:`\hat u = t_iv/|t_iv|`), :math:`a = \langle e, \epsilon_i\rangle` and
:math:`\epsilon_\perp = \epsilon_i - a e`, the point part :math:`a\hat u + \cosh|t_iv|\,
\epsilon_\perp` and the vector part :math:`a\hat u + \mathrm{sinhc}|t_iv|\, \epsilon_\perp`.
Agreement with numpy is tested (``tests/sampling/test_compiled_norms.py``). Import fails
without numba; the caller falls back to numpy.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..manifolds._functions import _SMALL  # sinhc's series threshold, as the library's


@njit(cache=True, error_model="numpy")
def _sinhc(x):
    if abs(x) < _SMALL:
        x2 = x * x
        return 1.0 + x2 / 6.0 + x2 * x2 / 120.0
    return math.sinh(x) / x


@njit(cache=True, error_model="numpy")
def _mink(a, b, size):
    s = 0.0
    for k in range(1, size):
        s += a[k] * b[k]
    return s - a[0] * b[0]


@njit(cache=True, error_model="numpy")
def hyperbolic_joint_norms(z, t, y, tau):
    r""":math:`g = |G|` (m,) at ``z = [p, v]`` (m, 2(d + 1)) for responses ``y`` (n, d + 1)
    (module docstring)."""
    m = z.shape[0]
    n, size = y.shape
    out = np.empty(m)
    pred = np.empty(size)
    eps = np.empty(size)
    udir = np.empty(size)
    end = np.empty(size)
    gp = np.empty(size)
    gv = np.empty(size)
    for a in range(m):
        p = z[a, :size]
        v = z[a, size:]
        for k in range(size):
            gp[k] = 0.0
            gv[k] = 0.0
        for i in range(n):
            ti = t[i]
            tvtv = 0.0
            for k in range(1, size):
                tvtv += (ti * v[k]) * (ti * v[k])
            nv = math.sqrt(max(tvtv - (ti * v[0]) * (ti * v[0]), 0.0))
            ch, sc = math.cosh(nv), _sinhc(nv)
            for k in range(size):
                pred[k] = ch * p[k] + sc * (ti * v[k])
            c = max(-_mink(pred, y[i], size), 1.0)
            for k in range(size):
                eps[k] = y[i, k] - c * pred[k]
            s = math.sqrt(max(_mink(eps, eps, size), 0.0))
            scale = 1.0 / _sinhc(math.asinh(s))
            for k in range(size):
                eps[k] *= scale
            norm = math.sqrt(max(_mink(eps, eps, size), 0.0))
            clip = min(1.0, tau / norm) if norm > 0 else 1.0
            sh = math.sinh(nv)
            for k in range(size):
                eps[k] *= clip
                udir[k] = ti * v[k] / nv if nv > 0 else 0.0
                end[k] = sh * p[k] + ch * udir[k]
            along = _mink(end, eps, size)
            for k in range(size):
                perp = eps[k] - along * end[k]
                par = along * udir[k]
                gp[k] += par + ch * perp
                gv[k] += ti * (par + sc * perp)
        for k in range(size):
            gp[k] = -gp[k] / n
            gv[k] = -gv[k] / n
        out[a] = math.sqrt(max(_mink(gp, gp, size), 0.0) + max(_mink(gv, gv, size), 0.0))
    return out
