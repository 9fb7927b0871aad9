r"""The speed-bounded tangent bundle of :math:`S^2` in the geodesic's own coordinates: a public
output lattice and a certified lower bound of the clipped joint gradient's norm over boxes
(issue 28; the sampler is :mod:`dpcore.sampling.bundle_native`).

Coordinates
-----------
A point :math:`(p, v)`, :math:`|v| \le V`, is the rotation :math:`R = \exp([\omega]) = (p, e,
n)` (columns: the footpoint, the unit direction of :math:`v`, :math:`n = p \times e`) and the
speed :math:`s = |v|`: :math:`z = (\omega, s)` with :math:`|\omega| \le \pi`, :math:`s \in [0,
V]` (:func:`rotation_matrix` is Rodrigues' formula; :func:`bundle_points` maps coordinates to
:math:`(p, v)`). :math:`SO(3)` acts simply transitively on the unit tangent bundle, so the Liouville
measure there is a constant times Haar measure, whose density in rotation vectors is
:math:`(2 - 2\cos|\omega|)/|\omega|^2`; with the fibre's polar coordinates the Sasaki volume of
:math:`TS^2` is, up to a constant, :math:`J(z)\,dz`,

.. math:: J(\omega, s) = s\,\frac{2 - 2\cos|\omega|}{|\omega|^2}

(:func:`log_volume_density`; decreasing in :math:`|\omega|` on :math:`[0, 2\pi]`).

The lattice (public)
--------------------
:class:`NativeLattice`: the box :math:`[-\pi, \pi]^3 \times [0, V]`, cells of a :math:`2^{32}`
grid per axis, released as the fixed float point :math:`z_K = o + \gamma(K + \tfrac12)` mapped
by :func:`bundle_points`. The support :math:`D_L` is the set of cells with :math:`|\omega_K| \le
\pi - 2\gamma_\omega` and :math:`s_K \le V - 2\gamma_s`: each such cell lies inside
:math:`|\omega| < \pi`, where every rotation has one rotation vector, so :math:`D_L` covers the
bundle once, except the public shells :math:`|\omega| > \pi - 3\gamma_\omega` (rotations by
almost :math:`\pi`) and :math:`s > V - 3\gamma_s`.

The lower bound of :math:`g` over a box (:func:`cap_lower_bound`)
------------------------------------------------------------------
**The frame form.** With :math:`\rho_i = t_is` the prediction :math:`\hat y_i =
\mathrm{Exp}_p(t_iv) = \cos\rho_i\,p + \sin\rho_i\,e` has the orthonormal frame
:math:`(\hat y_i, T_i, n)`, :math:`T_i = -\sin\rho_i\,p + \cos\rho_i\,e`, and the datum's
coordinates there are :math:`x_i = \mathrm{Rot}_3(-\rho_i)R^\top y_i` (rotation about the third
axis). Its angle from :math:`\hat y_i` is :math:`\theta_i = \mathrm{atan2}(|(x_2, x_3)|, x_1)`,
its azimuth :math:`\psi_i = \mathrm{atan2}(x_3, x_2)`, and the clipped residual is
:math:`r_i(\cos\psi_iT_i + \sin\psi_in)`, :math:`r_i = \min(\theta_i, \tau)`. The adjoint Jacobi
fields of :math:`S^2` (paper 002, eqs. 7-8) carry it back to :math:`p`: along :math:`e` with
factor 1 (footpoint) and :math:`t_i` (vector), along :math:`n` with :math:`\cos\rho_i` and
:math:`t_i\,\mathrm{sinc}\,\rho_i`. So in the frame :math:`(e, n)`, up to one global sign,

.. math:: G = \frac1n\sum_i r_iM_i, \qquad M_i = (\cos\psi_i,\ \cos\rho_i\sin\psi_i,\
          t_i\cos\psi_i,\ t_i\,\mathrm{sinc}\rho_i\sin\psi_i),

and :math:`g = |G|`, the Sasaki norm (``tests/sampling/test_sphere_native.py`` checks it
against the library's :func:`~dpcore.learning.regression.regression_gradient`). For any unit
:math:`\hat u \in \mathbb{R}^4`, :math:`g \ge \langle\hat u, G\rangle`; the bound takes
:math:`\hat u = G(z_c)/|G(z_c)|` at the box's centre.

**Each datum stays in a cap.** For :math:`z` in a box with centre :math:`z_c`, half-widths
:math:`h_\omega` and :math:`h_s`: (i) :math:`\exp: \mathfrak{so}(3) \to SO(3)` is 1-Lipschitz
for the bi-invariant metric (sectional curvature :math:`\ge 0`, so by Rauch's comparison with
flat space every Jacobi field along a ray from the identity grows at most linearly), hence
:math:`R_c^\top R(z)` is a rotation by at most :math:`\phi = |h_\omega|`; (ii) writing
:math:`x_i(z) = Q\,\mathrm{Rot}_3(-t_i\Delta s)x_i(z_c)` with :math:`Q =
\mathrm{Rot}_3(-\rho_i)R(z)^\top R_c\mathrm{Rot}_3(\rho_i)`, a rotation by the same angle
:math:`\le\phi`, and :math:`\Delta s = s - s_c`: the rotation about the third axis moves
:math:`x_i(z_c)` along a circle of radius :math:`|e_3 \times x_i(z_c)|` by the angle
:math:`|t_i\Delta s|`, then :math:`Q` moves it by at most :math:`\phi`. So :math:`x_i(z)` lies
in the cap of geodesic radius :math:`\kappa_i = \phi + |t_i|h_s|e_3 \times x_i(z_c)|` about
:math:`x_i(z_c)`: :math:`\theta_i \in [\theta_{c,i} - \kappa_i, \theta_{c,i} + \kappa_i]`, and
when the cap misses both poles :math:`\pm e_1` its azimuths lie within :math:`\arcsin(\sin\kappa_i
/ \sin\theta_{c,i})` of :math:`\psi_{c,i}` (the great circles from the pole tangent to the
cap); otherwise any azimuth (this also covers a residual of any direction at the cut locus
:math:`\theta_i = \pi`, whatever the library returns there, as long as its norm is at most
:math:`\tau`).

**Each term's minimum.** :math:`\langle\hat u, r_iM_i\rangle = r_i(a_i\cos\psi_i +
B_i(\rho_i)\sin\psi_i)` with :math:`a_i = \hat u_1 + t_i\hat u_3`, :math:`B_i(\rho) = \hat
u_2\cos\rho + \hat u_4t_i\,\mathrm{sinc}\rho`; :math:`|B_i(\rho_i) - B_i(\rho_{c,i})| \le b_i =
|t_i|h_s(|\hat u_2| + |\hat u_4||t_i|\sigma_1)` with :math:`\sigma_1 = 0.4362 \ge
\max|\mathrm{sinc}'|`, so the bracket is at least :math:`f_i = |(a_i, B_i(\rho_{c,i}))|
\min_\psi\cos(\psi - \varphi_i) - b_i` over the azimuth range (:math:`\varphi_i =
\mathrm{atan2}(B_i, a_i)`; the minimum of the cosine is :math:`-1` where the range holds an odd
multiple of :math:`\pi`, else at an end), and with :math:`r_i \in [r_{lo}, r_{hi}]` (the clip of
the angle range) the term is at least :math:`r_{lo}f_i` if :math:`f_i \ge 0`, else
:math:`r_{hi}f_i`. Summing, :math:`g(z) \ge \frac1n\sum_i \min_i`.

**Floats.** The scope of rigour is exact real arithmetic on the float data (covariates,
responses, the boxes' float centres and half-widths, taken as exact). The caps and azimuth
ranges are widened by a relative :math:`10^{-12}` and an absolute :math:`10^{-12}`, the
cosine's minimum lowered by :math:`10^{-15}`, the sum lowered by :math:`10^{-12}` times the sum
of the terms' magnitudes and by the absolute :data:`G_SLACK` :math:`= 10^{-10}`, far above the
float differences (about :math:`10^{-15}`) between this form, the library's :math:`g` at the
float proposals and the exact values. Near the cut locus the residual's direction is
ill-conditioned in floats (its error grows like :math:`u/\sin\theta`), so a term whose angle
range comes within :data:`CUT_MARGIN` of :math:`\pi` takes any azimuth (a bound that holds for
a residual of any direction with norm at most :math:`\tau`). Proposals are padded out of their
box by one lattice spacing, far more than the rounding of any float proposed in it.
"""

from __future__ import annotations

import math

import numpy as np

from .bundle_lattice import DyadicGrid

__all__ = ["CUT_MARGIN", "G_SLACK", "SINC1", "NativeLattice", "bundle_points", "cap_lower_bound",
           "frame_gradient", "log_volume_density", "rotation_matrix"]

#: Absolute slack subtracted from every lower bound of g (module docstring, "Floats").
G_SLACK = 1e-10
#: An upper bound of :math:`\max_\rho|\mathrm{sinc}'(\rho)|` (0.43618 at
#: :math:`\rho \approx 2.08`).
SINC1 = 0.4362
#: Terms whose angle range comes within this of the cut locus take any azimuth (module
#: docstring, "Floats").
CUT_MARGIN = 1e-4
#: Halvings of each side of the lattice box down to the lattice spacing.
LEVELS = 32


def rotation_matrix(omega):
    r"""Rodrigues' formula :math:`\exp([\omega]) = I + \mathrm{sinc}|\omega|\,[\omega] +
    \frac{1 - \cos|\omega|}{|\omega|^2}[\omega]^2` for rotation vectors ``(m, 3)``; returns
    ``(m, 3, 3)`` (a fixed float function: the released points are computed by it)."""
    w = np.asarray(omega, dtype=float).reshape(-1, 3)
    r2 = np.sum(w * w, axis=-1)
    r = np.sqrt(r2)
    small = r < 1e-4
    safe = np.where(small, 1.0, r)
    # Taylor series below 1e-4 (the next terms are below 1e-17 relative)
    a = np.where(small, 1.0 - r2 / 6.0 + r2 * r2 / 120.0, np.sin(safe) / safe)
    b = np.where(small, 0.5 - r2 / 24.0 + r2 * r2 / 720.0, (1.0 - np.cos(safe)) / safe**2)
    k = np.zeros((w.shape[0], 3, 3))
    k[:, 0, 1], k[:, 0, 2], k[:, 1, 2] = -w[:, 2], w[:, 1], -w[:, 0]
    k[:, 1, 0], k[:, 2, 0], k[:, 2, 1] = w[:, 2], -w[:, 1], w[:, 0]
    return np.eye(3) + a[:, None, None] * k + b[:, None, None] * (k @ k)


def bundle_points(z):
    """``(p, v)``, each ``(m, 3)``, of native coordinates ``z = (omega, s)`` ``(m, 4)``."""
    z = np.asarray(z, dtype=float).reshape(-1, 4)
    rot = rotation_matrix(z[:, :3])
    return rot[:, :, 0], z[:, 3:4] * rot[:, :, 1]


def _haar(r):
    r = np.asarray(r, dtype=float)
    safe = np.where(r > 1e-4, r, 1.0)
    return np.where(r > 1e-4, (2.0 - 2.0 * np.cos(safe)) / safe**2, 1.0 - r * r / 12.0)


def log_volume_density(z):
    r""":math:`\log J(z)` (module docstring) at native coordinates ``(m, 4)``."""
    z = np.asarray(z, dtype=float).reshape(-1, 4)
    with np.errstate(divide="ignore"):
        return np.log(z[:, 3]) + np.log(_haar(np.sqrt(np.sum(z[:, :3] ** 2, axis=-1))))


def log_volume_bound(lo, hi):
    r"""An upper bound of :math:`\log J` over boxes ``[lo, hi]`` ``(m, 4)``: the largest speed
    times Haar's density at the box's smallest :math:`|\omega|` (it decreases in
    :math:`|\omega|`), with a relative margin of :math:`10^{-12}`."""
    gap = np.maximum(np.maximum(lo[:, :3], -hi[:, :3]), 0.0)
    r_min = np.sqrt(np.sum(gap * gap, axis=-1)) * (1 - 1e-12)
    return np.log(np.maximum(hi[:, 3], 1e-300)) + np.log(_haar(r_min)) + 1e-12


def _data_frames(rot, s, t, y):
    """Each datum's coordinates ``(x1, x2, x3)`` in its prediction's frame and ``rho``,
    ``(m, n)`` each, for frames ``rot`` ``(m, 3, 3)`` and speeds ``s`` ``(m,)``."""
    yf = np.einsum("nk,mkj->mnj", y, rot)                  # R^T y_i, (m, n, 3)
    rho = s[:, None] * t[None, :]
    cr, sr = np.cos(rho), np.sin(rho)
    return (cr * yf[..., 0] + sr * yf[..., 1], -sr * yf[..., 0] + cr * yf[..., 1],
            yf[..., 2], rho)


def _terms(x1, x2, x3, rho, t, tau):
    """Per term: the angle from the prediction, |(x2, x3)|, the azimuth's cosine and sine
    (1, 0 where the datum is at the prediction: atan2's convention), the clipped residual and
    :math:`M` ``(..., 4)``."""
    perp = np.sqrt(x2 * x2 + x3 * x3)
    theta = np.arctan2(perp, x1)
    safe = np.where(perp > 0, perp, 1.0)
    cp, sp = np.where(perp > 0, x2 / safe, 1.0), np.where(perp > 0, x3 / safe, 0.0)
    sinc = np.sinc(rho / np.pi)
    m = np.stack([cp, np.cos(rho) * sp, t * cp, t * sinc * sp], axis=-1)
    return theta, perp, cp, sp, np.minimum(theta, tau), m


def frame_gradient(z, t, y, tau):
    r""":math:`G` in the frame :math:`(e, n)` (module docstring, "The frame form") at native
    coordinates ``(m, 4)``: ``(m, 4)`` (footpoint along e, n; vector along e, n)."""
    z = np.asarray(z, dtype=float).reshape(-1, 4)
    t = np.asarray(t, dtype=float).reshape(-1)
    x1, x2, x3, rho = _data_frames(rotation_matrix(z[:, :3]), z[:, 3], t,
                                   np.asarray(y, dtype=float))
    *_, r, m = _terms(x1, x2, x3, rho, t, float(tau))
    return np.einsum("mn,mnk->mk", r, m) / t.size


def cap_lower_bound(zc, h, t, y, tau):
    r"""Lower bounds of :math:`g` over boxes with centres ``zc`` ``(m, 4)`` and half-widths
    ``h`` ``(m, 4)`` in native coordinates (module docstring), and :math:`g` at the centres.

    The azimuth range :math:`[\psi_c - \eta, \psi_c + \eta]` is taken relative to
    :math:`\varphi_i`: with :math:`\delta \in (-\pi, \pi]` the wrapped difference, the
    cosine's minimum over the range is :math:`-1` if :math:`|\delta| + \eta \ge \pi`, i.e. if
    :math:`\cos\delta \le -\cos\eta`, else :math:`\cos(|\delta| + \eta) = \cos\delta\cos\eta
    - |\sin\delta|\sin\eta` (the cosine is even and decreasing on :math:`[0, \pi]`), with
    :math:`\sin\eta = \kappa_i/\sin\theta_{c,i} \ge \sin\kappa_i/\sin\theta_{c,i}` (a wider
    range) and :math:`\cos\delta`, :math:`\sin\delta` from the azimuth's cosine and sine: no
    inverse trigonometric function.
    The numpy reference of the compiled kernel
    :func:`~dpcore.sampling._native_numba.native_cap_bound` (same formulas, tested equal).

    Returns
    -------
    (ndarray (m,), ndarray (m,))
        The certified lower bounds (may be negative: no information) and :math:`g(z_c)`.
    """
    zc = np.asarray(zc, dtype=float).reshape(-1, 4)
    h = np.abs(np.asarray(h, dtype=float).reshape(-1, 4))
    t = np.asarray(t, dtype=float).reshape(-1)
    y = np.asarray(y, dtype=float)
    tau = float(tau)
    n = t.size
    x1, x2, x3, rho = _data_frames(rotation_matrix(zc[:, :3]), zc[:, 3], t, y)
    theta, perp, cp, sp, r_c, m = _terms(x1, x2, x3, rho, t, tau)
    s_c = np.einsum("mn,mnk->mk", r_c, m) / n
    g_c = np.sqrt(np.sum(s_c * s_c, axis=-1))
    u = np.where(g_c[:, None] > 0, s_c / np.where(g_c > 0, g_c * (1 + 1e-15), 1.0)[:, None],
                 np.array([1.0, 0.0, 0.0, 0.0]))
    phi = np.sqrt(np.sum(h[:, :3] ** 2, axis=-1))
    hs = h[:, 3]
    at = np.abs(t)[None, :]
    kappa = (phi[:, None] + at * hs[:, None] * np.sqrt(x1 * x1 + x2 * x2)) * (1 + 1e-12)
    kappa = kappa + 1e-12
    th_lo, th_hi = theta - kappa, theta + kappa
    a = u[:, None, 0] + t[None, :] * u[:, None, 2]
    b_c = u[:, None, 1] * np.cos(rho) + u[:, None, 3] * t[None, :] * np.sinc(rho / np.pi)
    b1 = at * hs[:, None] * (np.abs(u[:, None, 1]) + np.abs(u[:, None, 3]) * at * SINC1)
    b1 = b1 * (1 + 1e-12)
    hyp = np.sqrt(a * a + b_c * b_c)
    inside = (th_lo > 0) & (th_hi < np.pi - CUT_MARGIN) & (hyp > 0)
    # sine and cosine of the azimuth range's half-width eta, widened: sin(kappa) <= kappa,
    # and sin(theta) = perp for the unit datum (its rounding is far inside the widening)
    sh = kappa / np.where(inside, perp, 1.0)
    sh = np.minimum(sh * (1 + 1e-12) + 1e-12, 1.0)
    ch = np.sqrt(1.0 - sh * sh)
    safe = np.where(hyp > 0, hyp, 1.0)
    cd, sd = (cp * a + sp * b_c) / safe, np.abs(sp * a - cp * b_c) / safe
    # cos(|delta| + eta) = cd ch - sd sh while |delta| + eta < pi, i.e. while cd > -ch
    c_min = np.where(inside & (cd > -ch), np.maximum(cd * ch - sd * sh - 1e-15, -1.0), -1.0)
    f_min = hyp * c_min - b1
    r_lo = np.minimum(np.maximum(th_lo, 0.0), tau)
    r_hi = np.minimum(th_hi, tau)
    term = np.where(f_min >= 0, r_lo * f_min, r_hi * f_min)
    total = np.sum(term, axis=-1) / n
    lower = total - 1e-12 * np.sum(np.abs(term), axis=-1) / n - G_SLACK
    return lower, g_c


class NativeLattice(DyadicGrid):
    r"""Public lattice of :math:`[-\pi, \pi]^3 \times [0, V]` and its support (module
    docstring), optionally within a public footpoint ball.

    With a ball (centre :math:`c`, radius :math:`R`) the support keeps only the cells whose
    lattice point's footpoint :math:`p_K` has :math:`d(p_K, c) \le R - 4\gamma_\omega` (a
    public float test on :math:`K`): a cell's rotations lie within
    :math:`\sqrt3\gamma_\omega/2` of its point's (1-Lipschitz exponential), and a rotation by
    an angle :math:`\alpha` moves the footpoint by at most :math:`\alpha`, so such a cell lies
    inside the ball. A box whose centre's footpoint is farther than :math:`R + |h_\omega|` from
    :math:`c` misses the ball.

    Parameters
    ----------
    max_speed : float
        The speed bound :math:`V \in (0, \pi]`.
    center : array (3,), optional
        Public centre of the footpoint ball (with ``radius``).
    radius : float, optional
        Public radius of the footpoint ball, in :math:`(0, \pi]`; None: the whole sphere.
    """

    dim = 4
    levels = LEVELS

    def __init__(self, max_speed, center=None, radius=None):
        self.max_speed = float(max_speed)
        if not 0.0 < self.max_speed <= math.pi:
            raise ValueError(f"`max_speed` must be in (0, pi], got {max_speed!r}.")
        self.radius = None if radius is None else float(radius)
        self.center = None
        if self.radius is not None:
            if not 0.0 < self.radius <= math.pi:
                raise ValueError(f"`radius` must be in (0, pi], got {radius!r}.")
            c = np.asarray(center, dtype=float).reshape(3)
            if not (np.all(np.isfinite(c)) and abs(float(np.linalg.norm(c)) - 1.0) < 1e-9):
                raise ValueError("`center` must be a unit vector of R^3.")
            self.center = c / np.linalg.norm(c)
        self.origin = np.array([-math.pi, -math.pi, -math.pi, 0.0])
        self.span = np.array([2 * math.pi] * 3 + [self.max_speed])
        self.spacing = self.span / 2.0**self.levels

    def in_support(self, index):
        """Whether each index's cell belongs to the public support :math:`D_L`."""
        index = np.asarray(index, dtype=np.int64).reshape(-1, 4)
        z = self.coordinates(index)
        ok = np.all((index >= 0) & (index < 2**self.levels), axis=-1)
        ok &= np.sqrt(np.sum(z[:, :3] ** 2, axis=-1)) <= math.pi - 2 * self.spacing[0]
        ok &= z[:, 3] <= self.max_speed - 2 * self.spacing[3]
        if self.radius is not None:
            p, _ = bundle_points(z)
            ok &= self.footpoint_distance(p) <= self.radius - 4 * self.spacing[0]
        return ok

    def footpoint_distance(self, p):
        """Geodesic distance of footpoints ``(m, 3)`` to the ball's centre."""
        cross = np.linalg.norm(np.cross(p, self.center), axis=-1)
        return np.arctan2(cross, p @ self.center)

    def misses(self, lo, hi):
        """Boxes that surely miss :math:`|\\omega| \\le \\pi` (or the footpoint ball)."""
        gap = np.maximum(np.maximum(lo[:, :3], -hi[:, :3]), 0.0)
        out = np.sqrt(np.sum(gap * gap, axis=-1)) > math.pi
        if self.radius is not None:
            zc, h = 0.5 * (lo + hi), 0.5 * (hi - lo)
            p, _ = bundle_points(zc)
            reach = self.radius + np.sqrt(np.sum(h[:, :3] ** 2, axis=-1)) * (1 + 1e-12) + 1e-12
            out |= self.footpoint_distance(p) > reach
        return out

    def outside(self, z):
        """Whether points ``(m, 4)`` have their footpoint outside the ball (steering only)."""
        if self.radius is None:
            return np.zeros(np.asarray(z).shape[0], dtype=bool)
        return self.footpoint_distance(bundle_points(z)[0]) > self.radius

    def point(self, index):
        """The released ``(p, v)`` of indices ``(m, 4)``, each ``(m, 3)`` (public function)."""
        return bundle_points(self.coordinates(index))

    @property
    def record(self):
        """Public description of the lattice for a release record."""
        out = {"lattice_spacing": self.spacing.tolist(), "lattice_origin": self.origin.tolist(),
               "lattice_levels": self.levels,
               "lattice_coordinates": "rotation vector of the frame (p, v/|v|, p x v/|v|) "
                                      "and the speed |v|"}
        if self.radius is not None:
            out["lattice_ball"] = {"center": self.center.tolist(), "radius": self.radius}
        return out
