"""Closed-form volume laws of SPD(k) with the affine-invariant metric.

The volume density of ``exp`` (from the eigenvalues of the whitened tangent vector), its bound
over annuli, the radial law of SPD(1) and SPD(2) (through the modified Struve function
``L_0``) and the volume growth rate: the methods :class:`~dpcore.manifolds.SPD` overrides.
"""

from __future__ import annotations

import math

import numpy as np

from ._functions import dlog_struve_l0, log_sinhc, log_struve_l0
from ._spd_kernels import _SQRT2

__all__ = ["SPDVolumeMixin"]


class SPDVolumeMixin:
    """Volume laws of ``SPD(k)`` (mixed into :class:`~dpcore.manifolds.SPD`); uses its ``k``."""

    # ------------------------------------------------------------ volume
    def log_volume_density(self, x, v, *, rho=None):
        r"""``sum_{i<j} log(sinh(g_ij) / g_ij)``, ``g_ij = |lam_i − lam_j| / 2`` with ``lam``
        the eigenvalues of ``x^{-1/2} v x^{-1/2}`` (the (i, j) direction of the curvature
        operator has eigenvalue ``−(lam_i − lam_j)^2 / 4``, the diagonal ones 0).

        Parameters
        ----------
        x, v : array, shape ``(..., k, k)``
        rho : array, shape ``(...)``, optional
            Unused: the density depends on the eigenvalues, not on ``|v|`` alone.

        Returns
        -------
        ndarray, shape ``(...)``
        """
        w, q = np.linalg.eigh(np.asarray(x, dtype=float))
        inv_sqrt = (q / np.sqrt(w)[..., None, :]) @ q.mT
        white = inv_sqrt @ np.asarray(v, dtype=float) @ inv_sqrt
        lam = np.linalg.eigvalsh(0.5 * (white + np.swapaxes(white, -1, -2)))
        i, j = np.triu_indices(lam.shape[-1], 1)
        return np.sum(log_sinhc(0.5 * np.abs(lam[..., i] - lam[..., j])), axis=-1)

    def log_volume_density_max(self, rho_lo, rho_hi):
        """``k (k − 1) / 2 · log(sinh(c) / c)``, ``c = rho_hi / sqrt 2``: each
        ``|lam_i − lam_j| <= sqrt(2) |v|`` and ``sinh(x) / x`` increases.

        Parameters
        ----------
        rho_lo, rho_hi : array, shape ``(...)``
            (``rho_lo`` is not needed.)

        Returns
        -------
        ndarray, shape of ``rho_hi``
        """
        k = self.k
        return 0.5 * k * (k - 1) * log_sinhc(np.asarray(rho_hi) / math.sqrt(2.0))

    def radial_log_volume(self, r):
        r"""SPD(1): 0 (it is isometric to R); SPD(2): ``log r + log L_0(r / sqrt 2)``.

        For SPD(2) the eigen-radius vector :math:`\rho` (log-eigenvalues of
        :math:`\eta^{-1/2} y \eta^{-1/2}`, :math:`d = |\rho|`) has density
        :math:`\propto h(|\rho|)\sinh(|\rho_1 - \rho_2|/2)`; in polar coordinates
        :math:`|\rho_1 - \rho_2|/2 = r|\sin\psi|/\sqrt2` and
        :math:`\int_0^{2\pi}\sinh(c|\sin\psi|)\,d\psi = 2\pi L_0(c)` (modified Struve function).

        Parameters
        ----------
        r : array, shape ``(...)``

        Returns
        -------
        ndarray, shape ``(...)``

        Raises
        ------
        NotImplementedError
            For k > 2: the eigen-radius density does not reduce to one dimension.
        """
        r = np.asarray(r, dtype=float)
        if self.k == 1:
            return np.zeros_like(r)
        self._check_radial_law()
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.log(r) + log_struve_l0(r / _SQRT2)

    def radial_dlog_volume(self, r):
        """Derivative of :meth:`radial_log_volume` (``L_0' = L_1 + 2 / pi``).

        Parameters
        ----------
        r : array, shape ``(...)``

        Returns
        -------
        ndarray, shape ``(...)``

        Raises
        ------
        NotImplementedError
            For k > 2.
        """
        r = np.asarray(r, dtype=float)
        if self.k == 1:
            return np.zeros_like(r)
        self._check_radial_law()
        with np.errstate(divide="ignore", invalid="ignore"):
            return 1.0 / r + dlog_struve_l0(r / _SQRT2) / _SQRT2

    def sample_uniform_ball(self, center, radius, size, rng):
        r"""SPD(2): ``size`` points uniform in the geodesic ball ``B_radius(center)``; None
        for k != 2.

        With :math:`p = C^{1/2} e^{M} C^{1/2}`, :math:`M = sI + \mu N`, :math:`N` the
        reflection :math:`[[\cos 2\phi, \sin 2\phi], [\sin 2\phi, -\cos 2\phi]]`
        (:math:`N^2 = I`), SPD(2) is the product of a line, :math:`x = \sqrt2 s` (flat), and
        the hyperbolic plane of curvature :math:`-1/2` in geodesic polar coordinates
        :math:`\rho = \sqrt2\mu`, :math:`\theta = 2\phi`, whose area element is
        :math:`\sqrt2 \sinh(\rho/\sqrt2)\,d\rho\,d\theta`; :math:`d(C, p)^2 = x^2 + \rho^2`.
        So: :math:`x` uniform on :math:`[-R, R]`, :math:`\rho` from the disc's radial law
        (inverse CDF :math:`\rho = 2\sqrt2\,\mathrm{asinh}(\sqrt u\,\sinh(R/(2\sqrt2)))`),
        kept when :math:`x^2 + \rho^2 \le R^2` (exact rejection from the enclosing cylinder),
        :math:`\phi` uniform on :math:`[0, \pi)`, and
        :math:`e^M = e^s(\cosh\mu\,I + \sinh\mu\,N)`.
        """
        if self.k != 2:
            return None
        radius, size = float(radius), int(size)
        vals, vecs = np.linalg.eigh(np.asarray(center, dtype=float))
        root = (vecs * np.sqrt(vals)) @ vecs.T
        xs, rhos, have = [], [], 0
        scale = math.sinh(radius / (2.0 * _SQRT2))
        while have < size:
            m = int(1.6 * (size - have)) + 8
            x = radius * (2.0 * rng.random(m) - 1.0)
            rho = 2.0 * _SQRT2 * np.arcsinh(np.sqrt(rng.random(m)) * scale)
            keep = x * x + rho * rho <= radius * radius
            xs.append(x[keep])
            rhos.append(rho[keep])
            have += int(keep.sum())
        s = np.concatenate(xs)[:size] / _SQRT2
        mu = np.concatenate(rhos)[:size] / _SQRT2
        two_phi = 2.0 * math.pi * rng.random(size)
        ch, sh, es = np.cosh(mu), np.sinh(mu), np.exp(s)
        e = np.empty((size, 2, 2))
        e[:, 0, 0] = es * (ch + sh * np.cos(two_phi))
        e[:, 1, 1] = es * (ch - sh * np.cos(two_phi))
        e[:, 0, 1] = e[:, 1, 0] = es * sh * np.sin(two_phi)
        p = root @ e @ root
        return 0.5 * (p + np.swapaxes(p, -1, -2))

    def _check_radial_law(self):
        if self.k > 2:
            raise NotImplementedError(
                f"{self!r} has no closed-form radial law for k > 2 (the eigen-radius density "
                "does not reduce to one dimension); sample_laplace / sample_gaussian draw its "
                "eigen-radius vector by MCMC instead."
            )

    @property
    def volume_growth_rate(self):
        r"""``sqrt(k (k^2 − 1) / 12)``.

        The volume grows like :math:`\prod_{i<j} \sinh(|\rho_i - \rho_j|/2)`, i.e. like
        :math:`e^{\langle w, \rho \rangle}` with :math:`w_i = (k + 1 - 2i)/2` for sorted
        :math:`\rho`; its largest rate per unit :math:`|\rho|` is :math:`|w|`.
        """
        k = self.k
        return math.sqrt(k * (k * k - 1) / 12.0)
