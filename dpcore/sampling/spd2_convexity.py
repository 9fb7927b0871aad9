r"""A proven lower bound of the joint KNG's gradient norm on SPD(2) from the energy gap (issue 28
point 1: the "convexity bound" of :mod:`dpcore.sampling.bundle_flat`, proven on a curved space).

On :math:`\mathbb{R}^d` the clipped regression energy :math:`E` is convex in :math:`(p, v)`,
so :math:`g(z) \ge (E(z) - E(z'))/|z - z'|` for any reference :math:`z'`: one evaluation of
:math:`E` bounds :math:`g` far from the fit, where first-order enclosures need small leaves.
On SPD(2) the energy is not convex along chart lines (session 26 found concave stretches of
single distances), but its defect of convexity along a well-chosen path is bounded by a
quantity that depends only on the path, not on the data. This module states and computes it.

The path
--------
From :math:`z_0 = (p_0, v_0)` to :math:`z_1 = (p_1, v_1)` in :math:`T\,\mathrm{SPD}(2)`: the
footpoint runs along the geodesic :math:`p(s) = h e^{sL} h` (:math:`h = p_0^{1/2}`,
:math:`L = \log(h^{-1}p_1h^{-1})`, :math:`|L|_F = d(p_0, p_1)`), and the vector is the
parallel transport along it of the linear interpolation, in the frame at :math:`p_0`, between
:math:`B_0 = h^{-1}v_0h^{-1}` and :math:`B_1 = X^{-1/2}(h^{-1}v_1h^{-1})X^{-1/2}`
(:math:`X = e^L`; :math:`v_1` transported back to :math:`p_0`):
:math:`v(s) = h e^{sL/2}B(s)e^{sL/2}h`, :math:`B(s) = B_0 + s(B_1 - B_0)`. Its velocity at
:math:`s = 0` has Sasaki norm :math:`\rho = (|L|_F^2 + |B_1 - B_0|_F^2)^{1/2}`, so
:math:`|E'(0)| \le g(z_0)\rho`.

The defect
----------
Each term :math:`E_i(s) = \rho_\tau(d(c_i(s), y_i))` follows the curve
:math:`c_i(s) = \mathrm{Exp}_{p(s)}(t_iv(s))`. SPD(2) with the affine-invariant metric is a
Hadamard manifold, so :math:`d(\cdot, y)` is convex, and so is :math:`f = \rho_\tau\circ
d(\cdot, y)` (convex, non-decreasing :math:`\rho_\tau`; :math:`f` is :math:`C^1` with
:math:`|\nabla f| = \min(d, \tau) \le \tau`). For a convex :math:`C^1` function along a
:math:`C^2` curve, :math:`(f\circ c)'' \ge \mathrm{Hess}f(\dot c, \dot c) +
df(D_s\dot c) \ge -\tau|D_s\dot c|` (as a measure where :math:`f` has kinks), hence with
:math:`E = \frac1n\sum_iE_i` and Taylor's formula with integral remainder,

.. math:: -E'(0) \ge E(z_0) - E(z_1) - \frac{\tau}{n}\sum_i\int_0^1(1 - s)
          |D_s\dot c_i(s)|\,ds .

**The acceleration.** :math:`\mathrm{SPD}(2) = \mathbb{R}\times H` (log-determinant times the
unimodular matrices, :math:`H` a hyperbolic plane of curvature :math:`-1/2`) is a Riemannian
product; :math:`\log\det c_i(s) = \log\det p_0 + s\operatorname{tr}L +
t_i\operatorname{tr}B(s)` is affine in :math:`s`, so only the :math:`H`-part accelerates.
The transvections :math:`e^{sL/2}(\cdot)e^{sL/2}` form a one-parameter group of isometries
moving the frame along the path, so at every :math:`s` the acceleration has the norm it has at
:math:`s = 0` for the curve :math:`u \mapsto e^{ua/2}e^{b + ub'}e^{ua/2}` with
:math:`a = L^0`, :math:`b = t_iB(s)^0`, :math:`b' = t_i(B_1 - B_0)^0` (traceless parts).
Writing it as :math:`g(u)\cdot I` with :math:`g = e^{ua/2}e^{(b + ub')/2}` in
:math:`SL(2)`, :math:`\omega = g^{-1}\dot g = \omega_{\mathfrak p} + \omega_{\mathfrak k}`
(symmetric plus skew), the velocity is :math:`g_*W` with :math:`W = 2\omega_{\mathfrak p}`
and the covariant acceleration :math:`g_*(\dot W + [\omega_{\mathfrak k}, W])` (the
Levi-Civita connection of a symmetric space in a moving frame). In the orthonormal basis
:math:`e_1 = \mathrm{diag}(1, -1)/\sqrt2` (along :math:`b`), :math:`e_2` (across), with
:math:`a = (a_1, a_2)`, :math:`b' = (b_1, b_2)`, :math:`\lambda = |b|_F/\sqrt2` (the
eigenvalue of :math:`b`), :math:`C = \cosh\lambda`, :math:`S = \sinh\lambda`, this works out
to

.. math:: \mathrm{acc}_1 = -\tfrac{1}{\sqrt2}\Big[SC\,a_2^2 + \frac{2S^2}{\lambda}\,a_2b_2
          + \frac{SC - \lambda}{\lambda^2}\,b_2^2\Big], \qquad
          \mathrm{acc}_2 = \tfrac{1}{\sqrt2}\Big[S\,a_1a_2 + 2S\,a_2b_1 +
          2\frac{\lambda C - S}{\lambda^2}\,b_1b_2\Big]

(:func:`acceleration`; checked against finite differences of the matrix curve in the tests,
and at :math:`b' = 0`, :math:`a \perp b` it is the hypercycle's
:math:`\sqrt k\sinh\cosh` with :math:`k = 1/2`). Every coefficient is a power series in
:math:`\lambda` with non-negative coefficients, so the two quadratic forms have non-negative
matrices whose entries grow with :math:`\lambda`; their largest eigenvalues :math:`m_1, m_2`
(a 2 x 2 form in :math:`(a_2, b_2)`, a weighted path in :math:`(a_1, a_2, b_1, b_2)`) bound
them, and :math:`M(\lambda) = (m_1^2 + m_2^2)^{1/2}/\sqrt2` (:func:`acceleration_bound`,
increasing) gives :math:`|D_s\dot c_i| \le M(t_i\bar\lambda)(|L^0|^2 + t_i^2|(B_1 - B_0)^0|^2)`
with :math:`\bar\lambda = \max(|B_0^0|, |B_1^0|)/\sqrt2` (the norm of :math:`B(s)^0` is at
most the larger end's). Hence the **theorem** (:func:`gradient_lower_bound`):

.. math:: g(z_0) \ge \frac{E(z_0) - E(z_1) - \Delta}{\rho}, \qquad
          \Delta = \frac{\tau}{2n}\sum_iM(t_i\bar\lambda)\big(|L^0|^2 +
          t_i^2|(B_1 - B_0)^0|^2\big)

for every reference :math:`z_1` (a computed fit: any point's energy is at least the
minimum's, so the bound holds whether or not :math:`z_1` is the exact minimizer).

Floats: :math:`M` is computed by series below :math:`\lambda = 1` and closed forms above,
within a few units of :math:`2^{-53}` relative, and returned with a relative margin of
:math:`10^{-9}`; the path's matrices come from eigendecompositions of 2 x 2 matrices. The
callers (a sampler's leaf certificate) keep their own margins on :math:`E` and :math:`\rho`.

Measured (``benchmarks/bench_spd2_convexity.py``; docs/measurements.md): on the Geodesic
regression page's SPD(2) design the defect :math:`\Delta` is a median 6% of the energy gap and
the proven bound a median 94% of the unproven one, :math:`(E(z_0) - E(z_1))/\rho`. The leaf
version (:func:`leaf_gradient_bound`) keeps 91%, 68% and 34% of it on cubes of half-width
0.002, 0.02 and 0.05; the SPD(2) prototype sampler's envelope mass sits in larger leaves, so it
is not wired in (docs/measurements.md, session 29).
"""

from __future__ import annotations

import math

import numpy as np

from ..manifolds._spd_kernels import eig_apply, eigh, sym, sym_funm
from .spd2_chart import _sinhc_sqrt

__all__ = ["ConvexityPath", "acceleration", "acceleration_bound", "convexity_path",
           "defect_bound", "gradient_lower_bound", "leaf_gradient_bound", "triangle_area_bound"]

_R2 = float(np.sqrt(2.0))
#: Relative margin of :func:`acceleration_bound` (far above its float error).
MARGIN = 1e-9
#: Series terms below lambda = 1 (the omitted tail is below 1e-30 relative).
_TERMS = 20
#: Curvature magnitude of the hyperbolic factor (unimodular matrices, tr((c^-1 dc)^2)).
K = 0.5


def _series(lam, coef):
    r""":math:`\sum_j c_j\lambda^{2j+1}` for the coefficient function ``coef(j)``."""
    lam = np.asarray(lam, dtype=float)
    out = np.zeros_like(lam)
    power = lam.copy()
    sq = lam * lam
    for j in range(_TERMS):
        out = out + coef(j) * power
        power = power * sq
    return out


def _coefficients(lam):
    r"""The coefficient functions of :func:`acceleration` at :math:`\lambda \ge 0`:
    :math:`S`, :math:`SC`, :math:`(C - 1)/\lambda`, :math:`(\sinh\lambda/\lambda - 1)/\lambda`
    and :math:`(\lambda C - S)/\lambda^2` (series below 1, closed forms above)."""
    lam = np.asarray(lam, dtype=float)
    small = lam < 1.0
    ls = np.where(small, lam, 1.0)
    lb = np.where(small, 1.0, lam)
    s_small = _series(ls, lambda j: 1.0 / math.factorial(2 * j + 1))
    c1_small = _series(ls, lambda j: 1.0 / math.factorial(2 * j + 2))           # (C - 1)/lam
    sc1_small = _series(ls, lambda j: 1.0 / math.factorial(2 * j + 3))          # (S/lam - 1)/lam
    d_small = _series(ls, lambda j: (2 * j + 2) / math.factorial(2 * j + 3))    # (lam C - S)/lam^2
    ch_small = 1.0 + ls * c1_small
    big_s, big_c = np.sinh(lb), np.cosh(lb)
    s = np.where(small, s_small, big_s)
    c = np.where(small, ch_small, big_c)
    c1 = np.where(small, c1_small, (big_c - 1.0) / lb)
    sc1 = np.where(small, sc1_small, (big_s / lb - 1.0) / lb)
    d = np.where(small, d_small, (lb * big_c - big_s) / (lb * lb))
    return s, c, c1, sc1, d


def acceleration(a, b_vel, lam):
    r"""Components :math:`(\mathrm{acc}_1, \mathrm{acc}_2)` of the covariant acceleration of
    :math:`u \mapsto e^{ua/2}e^{b + ub'}e^{ua/2}` at :math:`u = 0` (module docstring).

    Parameters
    ----------
    a, b_vel : arrays (..., 2)
        :math:`(a_1, a_2)` and :math:`(b_1, b_2)`: the footpoint velocity and the velocity of
        :math:`b` in the basis along and across :math:`b`.
    lam : array (...)
        :math:`\lambda = |b|_F/\sqrt2 \ge 0`.

    Returns
    -------
    ndarray (..., 2)
    """
    a, b_vel = np.asarray(a, dtype=float), np.asarray(b_vel, dtype=float)
    s, c, c1, sc1, d = _coefficients(lam)
    a1, a2, b1, b2 = a[..., 0], a[..., 1], b_vel[..., 0], b_vel[..., 1]
    s_sc = np.where(np.asarray(lam) > 0, s * s / np.where(np.asarray(lam) > 0, lam, 1.0), 0.0)
    acc1 = -(s * c * a2 * a2 + (c1 * (1.0 + c) + s_sc) * a2 * b2
             + (sc1 + (sc1 * lam + 1.0) * c1) * b2 * b2) / _R2
    acc2 = (s * a1 * a2 + 2.0 * s * a2 * b1 + 2.0 * d * b1 * b2) / _R2
    return np.stack([acc1, acc2], axis=-1)


def acceleration_bound(lam):
    r""":math:`M(\lambda)`: :math:`|D_s\dot c| \le M(\lambda)(|a|^2 + |b'|^2)` for every
    :math:`a, b'` at every :math:`\lambda' \le \lambda` (module docstring); increasing,
    :math:`M(\lambda) \approx 1.55\lambda` for small :math:`\lambda`.

    Parameters
    ----------
    lam : array_like
        :math:`\lambda \ge 0`.

    Returns
    -------
    ndarray
    """
    lam = np.asarray(lam, dtype=float)
    s, c, c1, sc1, d = _coefficients(lam)
    s_sc = np.where(lam > 0, s * s / np.where(lam > 0, lam, 1.0), 0.0)
    # acc_1 = -(1/sqrt2) [k11 a2^2 + k12 a2 b2 + k22 b2^2], non-negative k's
    k11, k12, k22 = s * c, c1 * (1.0 + c) + s_sc, sc1 + (sc1 * lam + 1.0) * c1
    m1 = 0.5 * (k11 + k22 + np.sqrt((k11 - k22) ** 2 + k12 * k12))
    # acc_2 = (1/sqrt2) x^T A x, A the path a1 - a2 - b1 - b2 with weights S/2, S, D
    w1, w2, w3 = 0.5 * s, s, d
    tot = w1 * w1 + w2 * w2 + w3 * w3
    m2 = np.sqrt(0.5 * (tot + np.sqrt(np.maximum(tot * tot - 4.0 * (w1 * w3) ** 2, 0.0))))
    return np.sqrt(m1 * m1 + m2 * m2) / _R2 * (1.0 + MARGIN)


def _traceless_norm(x):
    tr = 0.5 * (x[..., 0, 0] + x[..., 1, 1])
    return np.sqrt((x[..., 0, 0] - tr) ** 2 + (x[..., 1, 1] - tr) ** 2
                   + x[..., 0, 1] ** 2 + x[..., 1, 0] ** 2)


class ConvexityPath:
    r"""The path of the module docstring from ``(p0, v0)`` to ``(p1, v1)`` (batched).

    Attributes
    ----------
    root : ndarray (..., 2, 2)
        :math:`h = p_0^{1/2}`.
    log : ndarray (..., 2, 2)
        :math:`L` (the footpoint velocity in the frame at :math:`p_0`).
    start, end : ndarray (..., 2, 2)
        :math:`B_0`, :math:`B_1`.
    """

    def __init__(self, root, log, start, end):
        self.root, self.log, self.start, self.end = root, log, start, end

    @property
    def length(self):
        r""":math:`\rho = (|L|_F^2 + |B_1 - B_0|_F^2)^{1/2}`, the Sasaki norm of the path's
        velocity at its start."""
        diff = self.end - self.start
        return np.sqrt(np.sum(self.log ** 2, axis=(-2, -1)) + np.sum(diff ** 2, axis=(-2, -1)))

    def point(self, s):
        """``(p(s), v(s))`` at a scalar ``s`` (for tests and measurements)."""
        half = sym_funm(s * self.log, lambda w: np.exp(0.5 * w))
        b = self.start + s * (self.end - self.start)
        h = self.root
        return h @ half @ half @ h, h @ half @ b @ half @ h

    def defect(self, t, tau):
        r""":math:`\Delta` of the module docstring (per path) for covariates ``t`` (n,) and
        clip ``tau``."""
        return defect_bound(t, tau, _traceless_norm(self.log),
                            _traceless_norm(self.end - self.start),
                            np.maximum(_traceless_norm(self.start), _traceless_norm(self.end)))


def convexity_path(p0, v0, p1, v1):
    """The :class:`ConvexityPath` from ``(p0, v0)`` to ``(p1, v1)`` (arrays (..., 2, 2))."""
    p0, v0, p1, v1 = (np.asarray(x, dtype=float) for x in (p0, v0, p1, v1))
    w, u = eigh(sym(p0))
    root, inv = eig_apply(u, np.sqrt(w)), eig_apply(u, 1.0 / np.sqrt(w))
    w, u = eigh(sym(inv @ p1 @ inv))                         # X = p0^-1/2 p1 p0^-1/2
    log, back = eig_apply(u, np.log(w)), eig_apply(u, 1.0 / np.sqrt(w))   # L, X^{-1/2}
    start = inv @ v0 @ inv
    end = back @ (inv @ v1 @ inv) @ back
    return ConvexityPath(root, sym(log), sym(start), sym(end))


def defect_bound(t, tau, foot, vector, speed):
    r""":math:`\Delta = \frac{\tau}{2n}\sum_iM(t_i\bar\lambda)(F^2 + t_i^2V^2)` with
    :math:`F = |L^0|`, :math:`V = |(B_1 - B_0)^0|` and :math:`\bar\lambda =` ``speed``
    :math:`/\sqrt2` (upper bounds of them are upper bounds of :math:`\Delta`: it increases in
    each).

    Parameters
    ----------
    t : array (n,)
        Covariates.
    tau : float
    foot, vector, speed : arrays (...)
        :math:`F`, :math:`V` and :math:`\max(|B_0^0|, |B_1^0|)`.

    Returns
    -------
    ndarray (...)
    """
    t = np.abs(np.asarray(t, dtype=float))
    foot, vector, speed = (np.asarray(x, dtype=float)[..., None] for x in (foot, vector, speed))
    m = acceleration_bound(t * speed / _R2)
    return 0.5 * float(tau) * np.mean(m * (foot * foot + (t * vector) ** 2), axis=-1)


def gradient_lower_bound(p0, v0, p1, v1, t, tau, energy0, energy1):
    r"""The theorem's bound :math:`(E(z_0) - E(z_1) - \Delta)/\rho` on :math:`g(z_0)`
    (module docstring), floored at 0.

    Parameters
    ----------
    p0, v0, p1, v1 : arrays (..., 2, 2)
        The point and the reference (e.g. the fit).
    t : array (n,)
    tau : float
    energy0, energy1 : arrays (...)
        :math:`E(z_0)` (or a lower bound of it) and :math:`E(z_1)` (or an upper bound).

    Returns
    -------
    ndarray (...)
    """
    path = convexity_path(p0, v0, p1, v1)
    num = np.asarray(energy0, float) - np.asarray(energy1, float) - path.defect(t, tau)
    return np.maximum(num, 0.0) / np.maximum(path.length, 1e-300)


def triangle_area_bound(a_lo, a_hi, b_lo, b_hi, opposite_hi):
    r"""Upper bound of the area of a geodesic triangle of the hyperbolic factor (curvature
    :math:`-K`) whose sides at one vertex lie in ``[a_lo, a_hi]`` and ``[b_lo, b_hi]`` and whose
    third side is at most ``opposite_hi``.

    The triangle is convex, so it lies in the sector at any vertex between its two sides, of
    radius the longer of them (balls and sectors of angle below :math:`\pi` are convex in a
    Hadamard surface); a sector of angle :math:`\phi` and radius :math:`R` has area
    :math:`\phi(\cosh\sqrt KR - 1)/K`. At the named vertex the angle is at most the Euclidean
    comparison angle (CAT(0)), and :math:`\ell^2 = a^2 + b^2 - 2ab\cos\phi \ge
    4ab\sin^2(\phi/2)` gives :math:`\phi \le 2\arcsin(\ell/(2\sqrt{ab}))`; at the two other
    vertices the angle is at most :math:`\pi`. The least of the three bounds is returned.
    """
    a_lo, a_hi, b_lo, b_hi, opp = (np.asarray(x, dtype=float)
                                   for x in (a_lo, a_hi, b_lo, b_hi, opposite_hi))

    def sector(angle, radius):
        return angle * np.expm1(np.sqrt(K) * radius) ** 2 / (2.0 * np.exp(np.sqrt(K) * radius)
                                                             * K)

    prod = np.maximum(a_lo, 0.0) * np.maximum(b_lo, 0.0)
    ratio = np.where(prod > 0, opp / (2.0 * np.sqrt(np.where(prod > 0, prod, 1.0))), np.inf)
    angle = np.where(ratio < 1.0, 2.0 * np.arcsin(np.minimum(ratio, 1.0)), np.pi)
    named = sector(angle, np.maximum(a_hi, b_hi))
    others = np.minimum(sector(np.pi, np.maximum(a_hi, opp)), sector(np.pi, np.maximum(b_hi, opp)))
    return np.minimum(named, others) * (1.0 + MARGIN)


def _coords_traceless(c):
    """Traceless norm of symmetric matrices with orthonormal coordinates ``c`` (..., 3)."""
    return np.sqrt(0.5 * (c[..., 0] - c[..., 2]) ** 2 + c[..., 1] ** 2)


#: The 2^6 sign vectors (vertices of the unit cube).
_SIGNS = np.array(np.meshgrid(*[[-1.0, 1.0]] * 6, indexing="ij")).reshape(6, -1).T


def _reach(basis, slack):
    """Largest norm of ``basis @ eps + diag(slack) eta`` over the unit cube (a convex function:
    its maximum is at a vertex), rounded up."""
    vert = np.einsum("mij,vj->mvi", basis, _SIGNS)
    return (np.max(np.linalg.norm(vert, axis=-1), axis=1)
            + np.linalg.norm(slack, axis=-1)) * (1 + 1e-12)


def leaf_gradient_bound(chart, zc, basis, zslack, z_ref, t, tau, energy_lo, energy_ref, *,
                        energy_center=None, gradient_center=None):
    r"""The theorem's bound over chart parallelepipeds: :math:`g(z) \ge` the returned value
    (m,) for every :math:`z = z_c + B\varepsilon + \mathrm{diag}(s)\eta` of each leaf
    (:math:`|\varepsilon_j|, |\eta_j| \le 1`).

    With :math:`z_1 = ` ``z_ref`` fixed, :math:`E(z) - E(z_1) - \Delta(z)` is bounded below and
    :math:`\rho(z)` above on the leaf:

    * :math:`E(z) \ge` ``energy_lo`` (e.g. from
      :func:`~dpcore.sampling.spd2_affine.residual_norm_range`), :math:`E(z_1) \le`
      ``energy_ref``; given the centre's energy and gradient norm, also the theorem along the
      path from :math:`z_c` to :math:`z`: :math:`E(z) \ge E(z_c) - g(z_c)\rho_{cz} -
      \Delta_{cz}`, with :math:`\rho_{cz} \le (\ell^2 + (h_b + \theta_2|b_c^0|)^2)^{1/2}` and
      :math:`\Delta_{cz}` of :func:`defect_bound` at these;
    * footpoints: :math:`d(p(z), p_c) \le \ell = \frac{\sinh\bar\delta}{\bar\delta}h_a`, with
      :math:`h_a` the footpoint half-reach of the leaf in chart coordinates and
      :math:`\bar\delta = (|a_c^0| + h_a)/\sqrt2` (the chart is the exponential map at its
      centre, which stretches by at most :math:`\sinh\delta/\delta`), so
      :math:`d(p(z), p_1) \le D = d(p_c, p_1) + \ell`;
    * vectors: :math:`|\Gamma_{1\to p}v_1 - v| \le W = W_c + \theta_1|v_1^0| + h_b +
      \theta_2|b_c^0|`, with :math:`W_c` the centre's, :math:`h_b` the vector half-reach and
      :math:`\theta_1, \theta_2` the holonomies (rotations by :math:`K` times the area,
      :func:`triangle_area_bound`) of the triangles :math:`(p_1, c, p)` (transport from
      :math:`p_1` through :math:`c` instead of directly) and :math:`(o, c, p)` (the chart's
      frame is transported radially from its centre :math:`o`);
    * :math:`\rho \le (D^2 + W^2)^{1/2}`, and :math:`\Delta` is at most
      :func:`defect_bound` at :math:`D`, :math:`W` and the largest speed.

    Parameters
    ----------
    chart : SPD2Chart
    zc, basis, zslack : arrays (m, 6), (m, 6, 6), (m, 6)
    z_ref : array (6,)
    t : array (n,)
    tau : float
    energy_lo : array (m,)
    energy_ref : float

    Returns
    -------
    ndarray (m,)
    """
    zc, basis, zslack = (np.asarray(x, dtype=float) for x in (zc, basis, zslack))
    z_ref = np.asarray(z_ref, dtype=float)
    h_a, h_b = _reach(basis[:, :3], zslack[:, :3]), _reach(basis[:, 3:], zslack[:, 3:])
    a0c = _coords_traceless(zc[:, :3])
    ell = _sinhc_sqrt(0.5 * (a0c + h_a) ** 2) * h_a * (1 + 1e-12)
    p_c, v_c = chart.to_bundle(zc)
    p_1, v_1 = (x[0] for x in chart.to_bundle(z_ref[None]))
    path = convexity_path(p_c, v_c, np.broadcast_to(p_1, p_c.shape),
                          np.broadcast_to(v_1, v_c.shape))
    d_c = np.sqrt(np.sum(path.log ** 2, axis=(-2, -1)))
    dh_c = _traceless_norm(path.log)
    w_c = np.sqrt(np.sum((path.end - path.start) ** 2, axis=(-2, -1)))
    area1 = triangle_area_bound(dh_c, dh_c, dh_c - ell, dh_c + ell, ell)
    area2 = triangle_area_bound(a0c, a0c, a0c - ell, a0c + ell, ell)
    w_hi = (w_c + K * area1 * _coords_traceless(z_ref[3:]) + h_b
            + K * area2 * _coords_traceless(zc[:, 3:])) * (1 + 1e-9)
    d_hi = (d_c + ell) * (1 + 1e-9)
    speed = np.maximum(np.linalg.norm(zc[:, 3:], axis=1) + h_b, np.linalg.norm(z_ref[3:]))
    defect = defect_bound(t, tau, d_hi, w_hi, speed * (1 + 1e-9))
    e_lo = np.asarray(energy_lo, float)
    if energy_center is not None:
        w_cz = (h_b + K * area2 * _coords_traceless(zc[:, 3:])) * (1 + 1e-9)
        rho_cz = np.sqrt(ell * ell + w_cz * w_cz) * (1 + 1e-12)
        from_centre = (np.asarray(energy_center, float) * (1 - 1e-12)
                       - np.asarray(gradient_center, float) * (1 + 1e-9) * rho_cz
                       - defect_bound(t, tau, ell, w_cz, (np.linalg.norm(zc[:, 3:], axis=1)
                                                          + h_b) * (1 + 1e-9)))
        e_lo = np.maximum(e_lo, from_centre)
    num = (e_lo - float(energy_ref) - defect) * (1 - 1e-9)
    return np.maximum(num, 0.0) / np.sqrt(d_hi * d_hi + w_hi * w_hi)
