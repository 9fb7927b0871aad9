r"""Affine-arithmetic enclosure of the clipped joint-regression gradient on SPD(2) over
parallelepipeds of the chart of :mod:`dpcore.sampling.spd2_chart` (issue 28 point 1).

The formulas of :func:`~dpcore.sampling.spd2_chart.frame_gradient`, step by step, in the affine
arithmetic of :mod:`dpcore.sampling.affine` over :math:`z = z_c + B\varepsilon + \zeta`
(:math:`\varepsilon \in [-1, 1]^6`, :math:`|\zeta_k| \le s_k`: each coordinate is an affine
form with error :math:`s_k`). The special functions use the enclosures of
:mod:`dpcore.sampling.spd2_parts`; the responses :math:`\tilde Y_i = Ty_iT^\top` and
:math:`\log\det\tilde Y_i` are interval constants computed from the floats :math:`T` and
:math:`y_i` (:func:`response_enclosure`), so the result holds for the exact real chart of the
public float :math:`T`. The constants :math:`1/\sqrt2` and :math:`\sqrt2` of the orthonormal
coordinates are intervals; :math:`t_i` are the release's floats (exact).

The result, for each leaf and each of the six components of :math:`G` (A-frame,
orthonormal coordinates), is :math:`G = G_0 + L\varepsilon + \xi`, :math:`|\xi| \le E`,
pointwise. Where a range is not finite (a too large leaf) the leaf gets
:math:`G_0 = L = 0`, :math:`E = \infty` (only the bound :math:`g \ge 0`, which holds
everywhere).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from .affine import AffineForm
from .intervals import Interval
from .spd2_parts import (
    asinh2_parts,
    asinhc_parts,
    clip_parts,
    cosh_sqrt_parts,
    phi1_parts,
    phi2_parts,
    sinhc_sqrt_parts,
)

__all__ = ["SPD2Enclosure", "SPD2TaylorEnclosure", "enclose_spd2_gradient", "enclose_spd2_taylor",
           "log_volume_bound", "residual_norm_range", "response_enclosure"]

_SQRT2 = Interval.point(2.0).sqrt()
_INV_SQRT2 = Interval.point(1.0) / _SQRT2
#: Leaves x terms evaluated at once.
CHUNK = 1 << 15


class SPD2Enclosure(NamedTuple):
    """``value`` (m, 6), ``linear`` (m, 6, 6) per unit :math:`\\varepsilon`, ``error`` (m, 6)."""

    value: np.ndarray
    linear: np.ndarray
    error: np.ndarray


def response_enclosure(T, y):
    r"""Interval entries ``(y00, y01, y11)`` of :math:`Ty_iT^\top` (each (n,)) and
    :math:`\log\det` of it."""
    T = np.asarray(T, dtype=float)
    y = np.asarray(y, dtype=float)
    ent = {}
    for (a, b) in ((0, 0), (0, 1), (1, 1)):
        acc = None
        for c in range(2):
            for d in range(2):
                term = Interval.point(y[:, c, d]) * (T[a, c] * Interval.point(T[b, d]))
                acc = term if acc is None else acc + term
        ent[a, b] = acc
    det = ent[0, 0] * ent[1, 1] - ent[0, 1].square()
    return ent[0, 0], ent[0, 1], ent[1, 1], det.log()


class Kit(NamedTuple):
    """The form class and the ``parts`` of each special function for it."""

    form: type
    cosh: object
    sinhc: object
    asinhc: object
    asinh2: object
    phi1: object
    phi2: object
    clip: object


AFFINE = Kit(AffineForm, cosh_sqrt_parts, sinhc_sqrt_parts, asinhc_parts, asinh2_parts,
             phi1_parts, phi2_parts, clip_parts)


def _expm(n00, n01, n11, kit):
    r"""Unimodular factor of :math:`\exp N` of symmetric 2 x 2 affine entries
    (:func:`~dpcore.sampling.spd2_chart.expm_unimodular`)."""
    h = (n00 - n11).scale(0.5)
    delta2 = h.square() + n01.square()
    ch = delta2.apply(kit.cosh, lo=0.0)
    sh = delta2.apply(kit.sinhc, lo=0.0)
    return ch + sh * h, sh * n01, ch - sh * h


def _leaf_forms(zc, basis, zslack):
    k = basis.shape[-1]
    return [AffineForm(zc[:, j, None].copy(), np.moveaxis(basis[:, j, :], -1, 0)[:, :, None].copy(),
                       zslack[:, j, None].copy()) for j in range(k)]


def _full(form, shape):
    k = form.k
    out = [np.broadcast_to(form.c, shape), np.broadcast_to(form.a, (k,) + shape)]
    if hasattr(form, "B"):
        out.append(np.broadcast_to(form.B, (k, k) + shape))
    return out + [np.broadcast_to(form.e, shape)]


def _choose(mask, x, y):
    """Elementwise ``x`` where ``mask`` else ``y`` (both valid forms; so is the choice)."""
    shape = np.broadcast_shapes(x.shape, y.shape, np.shape(mask))
    return type(x)(*(np.where(mask, u, v) for u, v in zip(_full(x, shape), _full(y, shape),
                                                           strict=True)))


def _clipped(l00, l01, l11, c, tau):
    r"""The clipped residual :math:`\psi(L) = L\min(1, \tau/|L|_F)`, per term the tighter of
    two valid forms: :math:`cL` with the clip factor's form ``c`` (exact where the residual
    stays inside the ball), and the projection bound. :math:`\psi` is the projection onto
    the :math:`\tau`-ball in the orthonormal coordinates, whose Jacobians are symmetric with
    eigenvalues in [0, 1]; along the segment from any point :math:`L^\circ`,
    :math:`\psi(L) - \psi(L^\circ) = M(L - L^\circ)` with :math:`\|M - \tfrac12I\| \le \tfrac12`
    (the flat sampler's straddling terms, :mod:`dpcore.sampling.bundle_flat`), so
    :math:`\psi(L) = \tfrac12L + (\psi(L^\circ) - \tfrac12L^\circ) + \rho`,
    :math:`|\rho|_F \le \tfrac12|L - L^\circ|_F`; :math:`L^\circ` is the forms' centre and
    :math:`|L - L^\circ|_F^2 \le r_{00}^2 + 2r_{01}^2 + r_{11}^2` with their radii."""
    prod = (c * l00, c * l01, c * l11)
    centre = [Interval.point(np.asarray(f.c, dtype=float)) for f in (l00, l01, l11)]
    norm2 = centre[0].square() + centre[1].square() * 2.0 + centre[2].square()
    ratio = Interval.point(np.full(np.shape(norm2.lo), float(tau))) / norm2.sqrt()
    factor = Interval._make(np.minimum(ratio.lo, 1.0), np.minimum(ratio.hi, 1.0))
    r00, r01, r11 = (f.radius() for f in (l00, l01, l11))
    half = 0.5 * np.sqrt(r00 * r00 + 2.0 * r01 * r01 + r11 * r11) * (1 + 1e-12)
    out = []
    for f, cen, p, share in zip((l00, l01, l11), centre, prod, (1.0, _INV_SQRT2.hi, 1.0),
                                strict=True):
        const = cen * factor - cen * 0.5
        proj = f.scale(0.5) + type(f).constant(const, f.k)
        proj = proj.widened(half * share)
        out.append(_choose(proj.e < p.e, proj, p))
    return out


def _residual_forms(z, t, ys, kit):
    """``(ell, zeta, z01, q)`` of every (leaf, term) for the forms ``z`` (module docstring of
    :mod:`dpcore.sampling.spd2_chart`)."""
    y00, y01, y11, logdet = ys
    root = (logdet * 0.5).exp()
    y00, y01, y11 = y00 / root, y01 / root, y11 / root
    a00, a01, a11 = z[0], z[1] * _INV_SQRT2, z[2]
    b00, b01, b11 = z[3], z[4] * _INV_SQRT2, z[5]
    f00, f01, f11 = _expm(a00.scale(-0.5), a01.scale(-0.5), a11.scale(-0.5), kit)
    half_t = -0.5 * t
    e00, e01, e11 = _expm(b00.scale(half_t), b01.scale(half_t), b11.scale(half_t), kit)
    k00, k01 = e00 * f00 + e01 * f01, e00 * f01 + e01 * f11
    k10, k11 = e01 * f00 + e11 * f01, e01 * f01 + e11 * f11
    u00, u01 = k00 * y00 + k01 * y01, k00 * y01 + k01 * y11
    u10, u11 = k10 * y00 + k11 * y01, k10 * y01 + k11 * y11
    z00, z01, z11 = u00 * k00 + u01 * k01, u00 * k10 + u01 * k11, u10 * k10 + u11 * k11
    ell = (kit.form.constant(logdet[None, :], a00.k) - (b00 + b11).scale(t)) - (a00 + a11)
    zeta = (z00 - z11).scale(0.5)
    return ell, zeta, z01, zeta.square() + z01.square()


def _norm2(ell, q, kit):
    """:math:`|L|_F^2 = \tfrac12\\ell^2 + 2\\operatorname{arsinh}^2\\sqrt q` of the forms."""
    return ell.square().scale(0.5) + q.apply(kit.asinh2, lo=0.0).scale(2.0)


def _terms(z, t, ys, tau, kit=AFFINE):
    """The six summed components (value shape (m,)) for the forms ``z``."""
    ell, zeta, z01, q = _residual_forms(z, t, ys, kit)
    b00, b01, b11 = z[3], z[4] * _INV_SQRT2, z[5]
    kappa = q.apply(kit.asinhc, lo=0.0)
    l00, l01, l11 = ell.scale(0.5) + kappa * zeta, kappa * z01, ell.scale(0.5) - kappa * zeta
    if tau is not None:
        norm2 = _norm2(ell, q, kit)
        l00, l01, l11 = _clipped(l00, l01, l11, norm2.apply(kit.clip(tau), lo=0.0), tau)
    alpha, beta = (b00 - b11).scale(0.5), b01
    x = (alpha.square() + beta.square()).scale(t).scale(t)
    # <psi, Omega> = beta (psi11 - psi00) + 2 alpha psi01 (the clip commutes with the maps)
    proj = beta * (l11 - l00) + (alpha * l01).scale(2.0)
    wp = x.apply(kit.phi1, lo=0.0).scale(t).scale(t).scale(0.5) * proj
    wv = x.apply(kit.phi2, lo=0.0).scale(t).scale(t).scale(t).scale(0.5) * proj
    parts = [l00 - wp * beta, l01 + wp * alpha, l11 + wp * beta,
             l00.scale(t) - wv * beta, l01.scale(t) + wv * alpha, l11.scale(t) + wv * beta]
    out = [-(q.mean(axis=-1)) for q in parts]
    out[1], out[4] = out[1] * _SQRT2, out[4] * _SQRT2
    return out


def enclose_spd2_gradient(zc, basis, zslack, t, ys, tau, *, chunk=CHUNK):
    r""":math:`G = G_0 + L\varepsilon + \xi` over parallelepipeds (module docstring).

    Parameters
    ----------
    zc : array (m, 6)
        Centres.
    basis : array (m, 6, 6)
        :math:`B` (columns: the noise symbols).
    zslack : array (m, 6)
        Coordinate slack :math:`s`.
    t : array (n,)
        Covariates.
    ys : tuple
        :func:`response_enclosure` of the responses.
    tau : float or None

    Returns
    -------
    SPD2Enclosure
    """
    zc = np.asarray(zc, dtype=float)
    m = zc.shape[0]
    n = np.asarray(t).size
    value, linear, error = np.zeros((m, 6)), np.zeros((m, 6, 6)), np.zeros((m, 6))
    step = max(1, chunk // max(n, 1))
    with np.errstate(invalid="ignore", over="ignore"):
        for s in range(0, m, step):
            sl = slice(s, min(m, s + step))
            forms = _terms(_leaf_forms(zc[sl], basis[sl], zslack[sl]), np.asarray(t, float),
                           ys, tau)
            for j, f in enumerate(forms):
                value[sl, j] = np.broadcast_to(f.c, (sl.stop - sl.start,))
                linear[sl, j, :] = np.broadcast_to(f.a, (6, sl.stop - sl.start)).T
                error[sl, j] = np.broadcast_to(f.e, (sl.stop - sl.start,))
    bad = ~(np.all(np.isfinite(value), axis=1) & np.all(np.isfinite(error), axis=1)
            & np.all(np.isfinite(linear), axis=(1, 2)))
    value[bad], linear[bad], error[bad] = 0.0, 0.0, np.inf
    return SPD2Enclosure(value, linear, error)


def residual_norm_range(zc, basis, zslack, t, ys, *, chunk=CHUNK):
    r"""Lower and upper bounds ``(m, n)`` of each residual norm :math:`|L_i|_F = d(\gamma_z(t_i),
    y_i)` over parallelepipeds (the same forms as :func:`enclose_spd2_gradient`:
    :math:`|L_i|_F^2 = \tfrac12\ell_i^2 + 2\operatorname{arsinh}^2\sqrt{q_i}`)."""
    zc = np.asarray(zc, dtype=float)
    m, n = zc.shape[0], np.asarray(t).size
    lo, hi = np.zeros((m, n)), np.full((m, n), np.inf)
    step = max(1, chunk // max(n, 1))
    with np.errstate(invalid="ignore", over="ignore"):
        for s in range(0, m, step):
            sl = slice(s, min(m, s + step))
            ell, _, _, q = _residual_forms(_leaf_forms(zc[sl], basis[sl], zslack[sl]),
                                           np.asarray(t, float), ys, AFFINE)
            norm2 = _norm2(ell, q, AFFINE).range()
            lo[sl] = np.sqrt(np.maximum(norm2.lo, 0.0)) * (1 - 1e-15)
            hi[sl] = np.sqrt(np.maximum(norm2.hi, 0.0)) * (1 + 1e-15)
    bad = ~(np.isfinite(lo) & np.isfinite(hi))
    lo[bad], hi[bad] = 0.0, np.inf
    return lo, hi


class SPD2TaylorEnclosure(NamedTuple):
    r"""``value`` (m, 6), ``linear`` (m, 6, 6), ``quad`` (m, 6, 6, 6) (component, symbol,
    symbol), ``error`` (m, 6): :math:`G = G_0 + L\varepsilon + \varepsilon^\top Q
    \varepsilon + \xi`."""

    value: np.ndarray
    linear: np.ndarray
    quad: np.ndarray
    error: np.ndarray


def _taylor_kit():
    from . import spd2_parts as P
    from .taylor2 import TaylorForm2

    return Kit(TaylorForm2, P.cosh_sqrt_parts2, P.sinhc_sqrt_parts2, P.asinhc_parts2,
               P.asinh2_parts2, P.phi1_parts2, P.phi2_parts2, P.clip_parts2)


def enclose_spd2_taylor(zc, basis, zslack, t, ys, tau, *, chunk=CHUNK // 4):
    r"""The same formulas in the second-order Taylor models of :mod:`dpcore.sampling.taylor2`
    (products keep their quadratic terms; only third-order terms and kinks go to the error):
    :math:`G = G_0 + L\varepsilon + \varepsilon^\top Q\varepsilon + \xi` over
    parallelepipeds (arguments as :func:`enclose_spd2_gradient`)."""
    from .taylor2 import parallelepiped_variables

    kit = _taylor_kit()
    zc = np.asarray(zc, dtype=float)
    m = zc.shape[0]
    n = np.asarray(t).size
    value, linear = np.zeros((m, 6)), np.zeros((m, 6, 6))
    quad, error = np.zeros((m, 6, 6, 6)), np.zeros((m, 6))
    step = max(1, chunk // max(n, 1))
    with np.errstate(invalid="ignore", over="ignore"):
        for s in range(0, m, step):
            sl = slice(s, min(m, s + step))
            k = sl.stop - sl.start
            forms = _terms(parallelepiped_variables(zc[sl], basis[sl], zslack[sl]),
                           np.asarray(t, float), ys, tau, kit)
            for j, f in enumerate(forms):
                value[sl, j] = np.broadcast_to(f.c, (k,))
                linear[sl, j, :] = np.broadcast_to(f.a, (6, k)).T
                quad[sl, j] = np.moveaxis(np.broadcast_to(f.B, (6, 6, k)), -1, 0)
                error[sl, j] = np.broadcast_to(f.e, (k,))
    bad = ~(np.all(np.isfinite(value), axis=1) & np.all(np.isfinite(error), axis=1)
            & np.all(np.isfinite(linear), axis=(1, 2)) & np.all(np.isfinite(quad), axis=(1, 2, 3)))
    value[bad], linear[bad], quad[bad], error[bad] = 0.0, 0.0, 0.0, np.inf
    return SPD2TaylorEnclosure(value, linear, quad, error)


def log_volume_bound(zlo, zhi):
    r"""Upper bound of :math:`\log J(a)` over the boxes ``[zlo, zhi]`` (``(m, >= 3)``):
    :math:`J = \sinh\delta/\delta` increases with :math:`\delta^2 = ((a_0 - a_2)/2)^2 +
    a_1^2/2`."""
    a0, a1, a2 = (Interval._make(zlo[:, j], zhi[:, j]) for j in range(3))
    delta2 = ((a0 - a2) * 0.5).square() + a1.square() * 0.5
    return np.log(sinhc_sqrt_parts(delta2, slope=False)[0].hi) * (1 + 1e-12) + 1e-15
