"""The CSV format of SPD matrices: the methods :class:`~dpcore.manifolds.SPD` overrides.

A matrix is written as its upper triangle, row-major (``s11, s12, ..., skk``); reading one back
symmetrizes it, and :meth:`SPDCSVMixin.csv_problems` reports the matrices that are not safely
positive definite (thresholds :data:`PD_RTOL` and :data:`PD_MIN_EIGENVALUE`).
"""

from __future__ import annotations

import re

import numpy as np

from ._csv_format import RowProblems, _failed
from ._spd_kernels import sym

__all__ = ["PD_MIN_EIGENVALUE", "PD_RTOL", "SPDCSVMixin"]

#: Relative threshold below which a matrix read from CSV counts as not positive definite: its
#: smallest eigenvalue must exceed this times the largest (:meth:`SPD.csv_problems`).
PD_RTOL = 1e-12
#: Smallest eigenvalue a matrix read from CSV may have: below it (e.g. at subnormal 5e-324) the
#: matrix logarithm and the affine-invariant distance underflow.
PD_MIN_EIGENVALUE = 1e-100


class SPDCSVMixin:
    """CSV format of ``SPD(k)`` (mixed into :class:`~dpcore.manifolds.SPD`); uses its ``k``
    and the ``_csv_values`` / ``_csv_span`` helpers of ``Manifold``."""

    # ------------------------------------------------------------ CSV format
    def csv_columns(self):
        """The upper triangle, row-major: ``s11, s12, ..., s1k, s22, ..., skk`` (``s{i}_{j}``
        when ``k >= 10``).

        Returns
        -------
        list of str
            ``k (k + 1) / 2`` names.
        """
        sep = "_" if self.k >= 10 else ""
        return [f"s{i}{sep}{j}" for i in range(1, self.k + 1) for j in range(i, self.k + 1)]

    def to_csv_rows(self, points):
        """The upper triangle of the symmetric part of each matrix, row-major.

        Parameters
        ----------
        points : array, shape ``(..., k, k)``

        Returns
        -------
        ndarray, shape ``(..., k (k + 1) / 2)``
        """
        iu = np.triu_indices(self.k)
        return sym(points)[..., iu[0], iu[1]]

    def from_csv_rows(self, values, *, renormalize=False):
        """The symmetric matrices of upper triangles (not checked to be positive definite).

        Parameters
        ----------
        values : array, shape ``(..., k (k + 1) / 2)``
        renormalize : bool
            Ignored.

        Returns
        -------
        ndarray, shape ``(..., k, k)``
        """
        values = self._csv_values(values)
        # Entry (i, j) is the upper-triangle value of (min(i, j), max(i, j)); adding 0.0 turns
        # -0.0 into +0.0, as did building the matrix as a sum with zeros (bit for bit).
        mats = values[..., _symmetric_index(self.k)].reshape(values.shape[:-1]
                                                             + (self.k, self.k))
        mats += 0.0
        return mats

    def csv_problems(self, values, *, atol=1e-6, renormalize=False):
        """Matrices that are not safely positive definite: smallest eigenvalue at most
        ``PD_RTOL`` times the largest, or at most ``PD_MIN_EIGENVALUE``.

        Parameters
        ----------
        values : array, shape ``(n, k (k + 1) / 2)``
        atol, renormalize
            Unused (the matrices are symmetric by construction).

        Returns
        -------
        list of RowProblems
        """
        values = self._csv_values(values)
        if values.shape[0] == 0:
            return []
        return self._pd_problems(self.from_csv_rows(values))

    def csv_read(self, values, ok, *, atol=1e-6, renormalize=False):
        """:meth:`from_csv_rows` and :meth:`csv_problems` in one pass (one conversion, one
        check of the eigenvalues). A checked row without a problem is exactly symmetric with
        eigenvalues above ``PD_MIN_EIGENVALUE`` > 0, so it :meth:`belongs`: ``on_manifold``
        is True (:meth:`~dpcore.manifolds.Manifold.csv_read`)."""
        mats = self.from_csv_rows(values)
        ok = np.asarray(ok, dtype=bool)
        if not ok.any():
            return mats, [], True
        return mats, self._pd_problems(mats if ok.all() else mats[ok]), True

    def _pd_problems(self, mats):
        bad, eig = _not_safely_pd(mats)
        span = self._csv_span()
        return _failed([RowProblems(bad, None, lambda i: (
            f"the matrix in columns {span} is not positive definite (smallest eigenvalue "
            f"{eig[i, 0]:.6g}, largest {eig[i, -1]:.6g}); SPD data need strictly positive "
            f"eigenvalues, at least {PD_RTOL:g} times the largest and above "
            f"{PD_MIN_EIGENVALUE:g}."))])

    def csv_header_hint(self, unexpected, expected):
        """Explains lower-triangle columns such as ``s21``: the format lists the upper triangle.

        Parameters
        ----------
        unexpected : list of str
            The unexpected column names, as written in the header.
        expected : list of str
            The columns the file should have (a regression file's start with ``x``).

        Returns
        -------
        str
        """
        for name in unexpected:
            match = re.fullmatch(r"s(\d)(\d)|s(\d+)_(\d+)", name.lower())
            if match:
                i, j = (int(g) for g in match.groups() if g is not None)
                sep = "" if match.group(1) else "_"
                if i > j and f"s{j}{sep}{i}" in expected:
                    return (f" SPD files list only the upper triangle ({expected[0]}, "
                            f"{expected[1]}, ..., {expected[-1]}): the matrix is symmetric, so "
                            f"'{name}' is the same entry as 's{j}{sep}{i}'. Drop the "
                            "lower-triangle columns.")
        return ""


def _symmetric_index(k):
    """For each entry of a ``k x k`` matrix (row-major), its position in the upper triangle
    (row-major): the entry of ``(min(i, j), max(i, j))``."""
    pos = np.zeros((k, k), dtype=np.intp)
    pos[np.triu_indices(k)] = np.arange(k * (k + 1) // 2)
    return np.maximum(pos, pos.T).ravel()  # the lower triangle's zeros give way


#: A 2 x 2 matrix whose closed-form smallest eigenvalue is at least this times its largest
#: (and at least ``_SURE_MIN``) is safely positive definite by a wide margin: the rounding of
#: the closed form (about 1e-4 of the bound at worst) and of ``eigvalsh`` (a backward stable
#: solver, within a small multiple of 1e-16 of the largest eigenvalue) cannot take it to
#: ``PD_RTOL`` = 1e-12 or ``PD_MIN_EIGENVALUE``.
_SURE_RTOL = 1e-11
_SURE_MIN = 1e-99
#: Diagonal entries the closed form is trusted with (no underflow or overflow in its
#: products).
_SURE_DIAGONAL = (1e-60, 1e60)


def _not_safely_pd(mats):
    """``(bad, eig)``: which symmetric matrices (n, k, k) are not safely positive definite
    (smallest eigenvalue at most ``PD_RTOL`` times the largest magnitude, or at most
    ``PD_MIN_EIGENVALUE``), decided by ``np.linalg.eigvalsh`` as ever; ``eig`` holds its
    eigenvalues for the matrices it looked at (NaN elsewhere, among which no bad one).

    For 2 x 2 matrices a closed form first clears those that pass by a wide margin (every
    matrix of a clean file): ``eigvalsh`` looks only at the others, so the decision is the
    one of ``eigvalsh`` on every matrix (``tests/manifolds/test_csv_read_checks.py``).
    """
    n, k = mats.shape[0], mats.shape[-1]
    unsure = np.ones(n, dtype=bool)
    if k == 2:
        unsure = ~_surely_pd_2x2(mats)
    eig = np.full((n, k), np.nan)
    bad = np.zeros(n, dtype=bool)
    if unsure.any():
        sub = np.linalg.eigvalsh(mats if unsure.all() else mats[unsure])
        scale = np.max(np.abs(sub), axis=-1)
        eig[unsure] = sub
        bad[unsure] = sub[:, 0] <= np.maximum(PD_RTOL * scale, PD_MIN_EIGENVALUE)
    return bad, eig


def _surely_pd_2x2(mats):
    """Which 2 x 2 symmetric matrices are positive definite by a wide margin: the closed-form
    eigenvalues ``det / big`` and ``big = (a + c) / 2 + sqrt(((a - c) / 2)^2 + b^2)`` give
    ``small >= _SURE_RTOL * big`` and ``small >= _SURE_MIN``, with both diagonal entries
    within ``_SURE_DIAGONAL`` (others are left to ``eigvalsh``)."""
    a, b, c = mats[:, 0, 0], mats[:, 0, 1], mats[:, 1, 1]
    with np.errstate(all="ignore"):
        half = 0.5 * (a - c)
        big = 0.5 * (a + c) + np.sqrt(half * half + b * b)
        small = (a * c - b * b) / big
        low, high = _SURE_DIAGONAL
        return ((a >= low) & (a <= high) & (c >= low) & (c <= high)
                & (small >= _SURE_RTOL * big) & (small >= _SURE_MIN))
