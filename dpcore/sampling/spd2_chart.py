r"""Joint-regression coordinates of :math:`T\,\mathrm{SPD}(2)` and the clipped gradient in them,
without eigendecompositions (issue 28 point 1: the formulas an enclosure can follow).

Chart
-----
A public float matrix :math:`T` (about :math:`C^{-1/2}` for the public centre :math:`C`) fixes
:math:`S = T^{-1}` (exactly, as a real matrix). Coordinates :math:`z = (a, b) \in \mathbb{R}^6`
are two symmetric matrices in orthonormal coordinates,
:math:`\hat A = \begin{pmatrix} a_0 & a_1/\sqrt2 \\ a_1/\sqrt2 & a_2\end{pmatrix}`, likewise
:math:`\hat B`, and

.. math:: A = S\exp(\hat A/2), \qquad p = AA^\top = S\exp(\hat A)S^\top, \qquad
          v = A\hat BA^\top .

:math:`W \mapsto AWA^\top` maps the Frobenius norm onto the affine-invariant norm at
:math:`p` (:math:`\operatorname{tr}(p^{-1}AWA^\top p^{-1}AW'A^\top) = \operatorname{tr}(WW')`,
as :math:`p^{-1}A = A^{-\top}`), so :math:`\{AE_kA^\top\}` is an orthonormal frame at
:math:`p` (the *A-frame*), :math:`|b| = \|v\|_p`, and :math:`|a| = d(SS^\top, p)` (a geodesic
from :math:`SS^\top`). The Sasaki volume in these coordinates is the volume density of
:math:`\exp_{SS^\top}` at :math:`\hat A` (the fibre coordinates are orthonormal):
:math:`J(a) = \sinh\delta_a/\delta_a`, :math:`\delta_a^2 = ((a_0 - a_2)/2)^2 + a_1^2/2`
(the half-gap of :math:`\hat A`'s eigenvalues; one off-diagonal pair in
:mod:`dpcore.sampling._spd`'s law).

The gradient in the A-frame
---------------------------
Paper 002 eqs. 5-8, 15, 40 as derived in :mod:`dpcore.learning.kernels.spd` (read it first),
rewritten without the eigenvectors :math:`U` of :math:`\hat B`. With
:math:`\tilde Y_i = T y_i T^\top`, :math:`K_i = \exp(-t_i\hat B/2)\exp(-\hat A/2)` and
:math:`Z_i = K_i\tilde Y_iK_i^\top` (the response seen from the prediction and transported
back to :math:`p`, in the A-frame: :math:`X \mapsto e^{t\hat B/2}Xe^{t\hat B/2}` is the
isometry of the geodesic :math:`e^{t\hat B}` through :math:`I`):

* :math:`\ell_i = \log\det Z_i = \log\det\tilde Y_i - t_i\operatorname{tr}\hat B -
  \operatorname{tr}\hat A` (affine in :math:`z`);
* the scale drops out of the rest: with the unimodular factors
  :math:`K_i' = e^{(t_i\operatorname{tr}\hat B + \operatorname{tr}\hat A)/4}K_i` and
  :math:`\hat Y_i = \tilde Y_i/\sqrt{\det\tilde Y_i}`, :math:`Z_i' = K_i'\hat Y_iK_i'^\top =
  Z_i/\sqrt{\det Z_i}` has determinant 1 and eigenvalues :math:`e^{\pm\eta_i}`; its
  traceless part :math:`Z_i'^0` has :math:`q_i = |Z_i'^0|_F^2/2 = \sinh^2\eta_i`, so
  :math:`L_i = \operatorname{logm}Z_i = \tfrac12\ell_iI + h(q_i)Z_i'^0` with
  :math:`h(q) = \operatorname{arsinh}(\sqrt q)/\sqrt q`, and
  :math:`|L_i|_F^2 = \tfrac12\ell_i^2 + 2\operatorname{arsinh}^2\sqrt{q_i}`;
* the clip :math:`c_i = \min(1, \tau/|L_i|_F)`;
* the adjoint Jacobi maps act as the identity (footpoint) and :math:`t_i` (vector) on
  :math:`\mathrm{span}\{I, \hat B^0\}` and as :math:`\cosh(t_id)` and
  :math:`\sinh(t_id)/d` on the traceless direction orthogonal to :math:`\hat B^0`,
  :math:`\Omega = \begin{pmatrix}-\beta & \alpha\\ \alpha & \beta\end{pmatrix}` for
  :math:`\hat B^0 = \begin{pmatrix}\alpha & \beta\\ \beta & -\alpha\end{pmatrix}`,
  :math:`d^2 = \alpha^2 + \beta^2 = |\Omega|_F^2/2` (the eigen-frame's off-diagonal entry of
  the kernel module, :math:`g_{01} = d`). The projection onto :math:`\Omega` is
  :math:`\langle L, \Omega\rangle\Omega/(2d^2)`, and with
  :math:`\varphi_1(x) = (\cosh\sqrt x - 1)/x`, :math:`\varphi_2(x) = (\sinh\sqrt x/\sqrt x -
  1)/x` (entire):

.. math:: F_p = -\frac1n\sum_i c_i\Big[L_i + \tfrac12t_i^2\varphi_1(t_i^2d^2)
          \langle L_i, \Omega\rangle\Omega\Big], \qquad
          F_v = -\frac1n\sum_i c_i\Big[t_iL_i + \tfrac12t_i^3\varphi_2(t_i^2d^2)
          \langle L_i, \Omega\rangle\Omega\Big],

:math:`\langle L_i, \Omega\rangle = h(q_i)\,2(\alpha Z'^0_{i,01} -
\beta Z'^0_{i,00})`. :math:`G = (F_p, F_v)` in orthonormal coordinates (6 numbers) and
:math:`g = |G|` is the library's :math:`\sqrt{\|\nabla_pE\|_p^2 + \|\nabla_vE\|_p^2}`
(``tests/sampling/test_spd2_chart.py`` checks both against
:func:`~dpcore.learning.regression.regression_gradient`).

The 2 x 2 exponential: for a symmetric :math:`N` with :math:`\operatorname{tr}N = 2s` and
traceless part :math:`N^0`, :math:`|N^0|_F^2 = 2\delta^2`,
:math:`\exp N = e^s(\cosh\delta\,I + \frac{\sinh\delta}{\delta}N^0)`; the unimodular
factor is the bracket.
"""

from __future__ import annotations

import numpy as np

__all__ = ["SPD2Chart", "asinhc", "clipped_fit", "energy", "expm_unimodular", "frame_gradient",
           "gradient_jacobian", "huber", "phi1", "phi2", "residual_norms"]

_R2 = float(np.sqrt(2.0))


def _sym(c):
    """Entries ``(x00, x01, x11)`` of the symmetric matrices with orthonormal coordinates
    ``c`` (..., 3)."""
    return c[..., 0], c[..., 1] / _R2, c[..., 2]


def _coords(x00, x01, x11):
    return np.stack([x00, _R2 * x01, x11], axis=-1)


def _cosh_sqrt(x):
    return np.cosh(np.sqrt(x))


def _sinhc_sqrt(x):
    s = np.sqrt(x)
    return np.where(s > 1e-4, np.sinh(s) / np.where(s > 0, s, 1.0), 1.0 + x / 6.0)


def phi1(x):
    r""":math:`(\cosh\sqrt x - 1)/x` (1/2 at 0), floats ``x >= 0``."""
    x = np.asarray(x, dtype=float)
    s = np.sqrt(x)
    small = x < 1e-2
    big = 2.0 * np.sinh(0.5 * s) ** 2 / np.where(small, 1.0, x)
    return np.where(small, 0.5 + x / 24.0 + x * x / 720.0 + x**3 / 40320.0, big)


def phi2(x):
    r""":math:`(\sinh\sqrt x/\sqrt x - 1)/x` (1/6 at 0), floats ``x >= 0``."""
    x = np.asarray(x, dtype=float)
    s = np.sqrt(x)
    small = x < 1e-2
    big = (np.sinh(s) / np.where(small, 1.0, s) - 1.0) / np.where(small, 1.0, x)
    return np.where(small, 1.0 / 6.0 + x / 120.0 + x * x / 5040.0 + x**3 / 362880.0, big)


def asinhc(q):
    r""":math:`\operatorname{arsinh}(\sqrt q)/\sqrt q` (1 at 0), floats ``q >= 0``."""
    q = np.asarray(q, dtype=float)
    small = q < 1e-4
    x = np.sqrt(np.where(small, 1.0, q))
    return np.where(small, 1.0 - q / 6.0 + 3.0 * q * q / 40.0, np.arcsinh(x) / x)


def expm_unimodular(n00, n01, n11):
    r"""Entries of :math:`e^{-s}\exp N` (determinant 1) for symmetric 2 x 2 :math:`N`."""
    h = 0.5 * (n00 - n11)
    delta2 = h * h + n01 * n01
    ch, sh = _cosh_sqrt(delta2), _sinhc_sqrt(delta2)
    return ch + sh * h, sh * n01, ch - sh * h


def expm_sym(n00, n01, n11):
    """Entries of :math:`\\exp N` for symmetric 2 x 2 :math:`N` (module docstring)."""
    e = np.exp(0.5 * (n00 + n11))
    u00, u01, u11 = expm_unimodular(n00, n01, n11)
    return e * u00, e * u01, e * u11


class SPD2Chart:
    r"""The chart of the module docstring for a public centre ``C`` (2 x 2 SPD).

    Parameters
    ----------
    center : array (2, 2)
        The public centre; :math:`T` is the float inverse square root computed from it
        (public), and the chart's own centre is :math:`SS^\top = (T^\top T)^{-1}`, within
        rounding of ``center``.
    """

    dim = 6

    def __init__(self, center):
        c = np.asarray(center, dtype=float)
        w, u = np.linalg.eigh(c)
        self.T = (u / np.sqrt(w)) @ u.T
        self.S = np.linalg.inv(self.T)

    # ------------------------------------------------------------------ maps
    def footpoint_factor(self, z):
        """:math:`A = S\\exp(\\hat A/2)` (m, 2, 2)."""
        a00, a01, a11 = _sym(np.asarray(z, dtype=float)[..., :3])
        e00, e01, e11 = expm_sym(0.5 * a00, 0.5 * a01, 0.5 * a11)
        e = np.stack([np.stack([e00, e01], -1), np.stack([e01, e11], -1)], -2)
        return self.S @ e

    def to_bundle(self, z):
        """Footpoints and shooting vectors ``(m, 2, 2)`` of coordinates ``z`` (m, 6)."""
        z = np.asarray(z, dtype=float)
        a = self.footpoint_factor(z)
        b00, b01, b11 = _sym(z[..., 3:])
        bm = np.stack([np.stack([b00, b01], -1), np.stack([b01, b11], -1)], -2)
        p = a @ np.swapaxes(a, -1, -2)
        v = a @ bm @ np.swapaxes(a, -1, -2)
        return 0.5 * (p + np.swapaxes(p, -1, -2)), 0.5 * (v + np.swapaxes(v, -1, -2))

    def responses(self, y):
        r""":math:`\tilde Y_i = Ty_iT^\top` as entries ``(n, 3)`` and :math:`\log\det\tilde
        Y_i` (floats)."""
        y = np.asarray(y, dtype=float)
        w = self.T @ y @ self.T.T
        ent = np.stack([w[:, 0, 0], 0.5 * (w[:, 0, 1] + w[:, 1, 0]), w[:, 1, 1]], axis=-1)
        logdet = np.log(ent[:, 0] * ent[:, 2] - ent[:, 1] ** 2)
        return ent, logdet

    @staticmethod
    def volume_density(z):
        r""":math:`J(a) = \sinh\delta_a/\delta_a` at coordinates ``(m, >= 3)``."""
        a00, a01, a11 = _sym(np.asarray(z, dtype=float)[..., :3])
        h = 0.5 * (a00 - a11)
        return _sinhc_sqrt(h * h + a01 * a01)


def _residuals(z, t, ytil, logdet):
    """Per (point, term): ell, the traceless Z' entries (zeta, z01), h(q), |L|^2, and the
    shooting vector's alpha, beta, with the covariates as a row (module docstring)."""
    z = np.asarray(z, dtype=float)
    a00, a01, a11 = (q[:, None] for q in _sym(z[:, :3]))
    b00, b01, b11 = (q[:, None] for q in _sym(z[:, 3:]))
    tt = np.asarray(t, dtype=float)[None, :]
    f00, f01, f11 = expm_unimodular(-0.5 * a00, -0.5 * a01, -0.5 * a11)
    e00, e01, e11 = expm_unimodular(-0.5 * tt * b00, -0.5 * tt * b01, -0.5 * tt * b11)
    # K' = E' F' (general 2 x 2), Z' = K' Yhat K'^T
    k00, k01 = e00 * f00 + e01 * f01, e00 * f01 + e01 * f11
    k10, k11 = e01 * f00 + e11 * f01, e01 * f01 + e11 * f11
    root = np.exp(0.5 * logdet)[None, :]
    y00, y01, y11 = ytil[None, :, 0] / root, ytil[None, :, 1] / root, ytil[None, :, 2] / root
    u00, u01 = k00 * y00 + k01 * y01, k00 * y01 + k01 * y11
    u10, u11 = k10 * y00 + k11 * y01, k10 * y01 + k11 * y11
    z00, z01, z11 = u00 * k00 + u01 * k01, u00 * k10 + u01 * k11, u10 * k10 + u11 * k11
    ell = logdet[None, :] - tt * (b00 + b11) - (a00 + a11)
    zeta = 0.5 * (z00 - z11)
    q = zeta * zeta + z01 * z01
    kappa = asinhc(q)
    norm2 = 0.5 * ell * ell + 2.0 * q * kappa * kappa
    return ell, zeta, z01, kappa, norm2, 0.5 * (b00 - b11), b01, tt


def residual_norms(z, t, ytil, logdet):
    r""":math:`|L_i|_F = d(\gamma_z(t_i), y_i)` per point and term ``(m, n)`` at chart
    coordinates ``z`` (m, 6)."""
    return np.sqrt(_residuals(np.atleast_2d(z), t, ytil, logdet)[4])


def huber(r, tau):
    r""":math:`\rho_\tau(r)`: :math:`\tfrac12r^2` up to :math:`\tau`,
    :math:`\tau r - \tfrac12\tau^2` beyond (elementwise)."""
    return np.where(r <= tau, 0.5 * r * r, tau * r - 0.5 * tau * tau)


def energy(z, t, ytil, logdet, tau):
    r"""The clipped regression energy :math:`E = \frac1n\sum_i\rho_\tau(|L_i|_F)` (Huber:
    :math:`\tfrac12r^2` up to :math:`\tau`, :math:`\tau r - \tfrac12\tau^2` beyond) at chart
    coordinates ``z`` (m, 6): the function whose Riemannian gradient
    :func:`frame_gradient` is."""
    return np.mean(huber(residual_norms(z, t, ytil, logdet), tau), axis=1)


def frame_gradient(z, t, ytil, logdet, tau):
    r""":math:`G = (F_p, F_v)` (m, 6) at chart coordinates ``z`` (m, 6), in orthonormal
    coordinates of the A-frame (module docstring), from :meth:`SPD2Chart.responses`.

    Parameters
    ----------
    z : array (m, 6)
    t : array (n,)
    ytil, logdet : arrays (n, 3), (n,)
    tau : float or None
        The residual clip (None: unclipped).

    Returns
    -------
    ndarray (m, 6)
    """
    ell, zeta, z01, kappa, norm2, alpha, beta, tt = _residuals(z, t, ytil, logdet)
    c = np.ones_like(norm2) if tau is None else np.minimum(
        1.0, tau / np.sqrt(np.maximum(norm2, 1e-300)))
    d2 = alpha * alpha + beta * beta
    proj = kappa * 2.0 * (alpha * z01 - beta * zeta)          # <L, Omega>
    # L = (ell/2) I + kappa Z0; Omega = [[-beta, alpha], [alpha, beta]]
    l00, l01, l11 = 0.5 * ell + kappa * zeta, kappa * z01, 0.5 * ell - kappa * zeta
    x = tt * tt * d2
    wp = 0.5 * tt * tt * phi1(x) * proj
    wv = 0.5 * tt**3 * phi2(x) * proj
    n = tt.shape[1]
    fp = [-np.sum(c * (l00 - wp * beta), axis=1) / n, -np.sum(c * (l01 + wp * alpha), axis=1) / n,
          -np.sum(c * (l11 + wp * beta), axis=1) / n]
    fv = [-np.sum(c * (tt * l00 - wv * beta), axis=1) / n,
          -np.sum(c * (tt * l01 + wv * alpha), axis=1) / n,
          -np.sum(c * (tt * l11 + wv * beta), axis=1) / n]
    return np.concatenate([_coords(*fp), _coords(*fv)], axis=-1)


def gradient_jacobian(z, t, ytil, logdet, tau, h=1e-6):
    """:math:`DG` (6, 6) at one point ``z`` (6,) by central differences of
    :func:`frame_gradient` (a whitening matrix: any matrix keeps the samplers exact)."""
    eye = np.eye(6) * h
    return ((frame_gradient(z + eye, t, ytil, logdet, tau)
             - frame_gradient(z - eye, t, ytil, logdet, tau)) / (2 * h)).T


def clipped_fit(t, ytil, logdet, tau, start=None, steps=40):
    """A zero of :math:`G`: damped Newton steps with :func:`gradient_jacobian`, on the
    unclipped gradient and then the clipped one, from ``start`` (default 0: the chart's
    centre). Any point keeps the samplers exact; this only centres them."""
    z = np.zeros(6) if start is None else np.asarray(start, dtype=float).copy()
    for clip in (None, tau):
        for _ in range(steps):
            g = frame_gradient(z[None], t, ytil, logdet, clip)[0]
            step = np.linalg.lstsq(gradient_jacobian(z, t, ytil, logdet, clip), g,
                                   rcond=None)[0]
            lam, g0 = 1.0, float(np.linalg.norm(g))
            while lam > 1e-8 and float(np.linalg.norm(frame_gradient(
                    (z - lam * step)[None], t, ytil, logdet, clip)[0])) > g0:
                lam *= 0.5
            z = z - lam * step
    return z
