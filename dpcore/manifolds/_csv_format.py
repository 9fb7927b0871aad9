"""The CSV format of points: default methods of :class:`~dpcore.manifolds.Manifold`.

One point is one row of a CSV file (``dpcore.data.load_csv`` / ``to_csv``). This module holds
:class:`RowProblems`, the rows of a batch that fail one check, and :class:`CSVFormatMixin`,
the default format (the point array flattened in C order, in columns ``y1..yN``) that
:class:`~dpcore.manifolds.base.Manifold` inherits and the concrete spaces override.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import NamedTuple

import numpy as np

__all__ = ["CSVFormatMixin", "RowProblems"]


class RowProblems(NamedTuple):
    """The rows of a batch of CSV values that fail one check of :meth:`Manifold.csv_problems`.

    Attributes
    ----------
    mask : ndarray of bool, shape ``(n,)``
        Which rows fail the check.
    column : str or None
        The CSV column at fault (one of :meth:`Manifold.csv_columns`), or None when the point
        as a whole is.
    message : callable
        ``message(i) -> str`` describes the problem of row ``i`` (an index into the batch, for
        ``mask[i]`` True); messages are built only for the rows a caller reports.
    """

    mask: np.ndarray
    column: str | None
    message: Callable[[int], str]


def _mean_rows(x):
    """``np.mean(x, axis=-2, keepdims=True)`` of an array ``(n, k, d)``, bit for bit, a few
    times faster on a block of rows that stays in the processor's cache: numpy sums that
    axis in order from zero, ``0.0 + x[:, 0] + x[:, 1] + ...`` (the zero turns -0.0 into
    +0.0), and divides by ``k`` (the tests check it against ``np.mean`` on adversarial values
    and shapes). Only for ``d >= 2`` (numpy reduces a last axis of 1 another way)."""
    if x.ndim != 3 or x.shape[1] < 1 or x.shape[2] < 2:
        return np.mean(x, axis=-2, keepdims=True)
    n, k, d = x.shape
    out = np.empty((n, 1, d))
    for c in range(d):  # a coordinate at a time: numpy loops fast over a long last axis
        total = x[:, 0, c] + 0.0
        for j in range(1, k):
            total += x[:, j, c]
        total /= k
        out[:, 0, c] = total
    return out


def _failed(checks):
    """The entries of a list of :class:`RowProblems` that some row fails."""
    return [c for c in checks if np.any(c.mask)]


class CSVFormatMixin:
    """Default CSV format of the points of a manifold (mixed into ``Manifold``).

    Uses ``point_shape``, ``point_ndim`` and ``belongs`` of the manifold it is mixed into.
    """

    # ------------------------------------------------------------------ CSV format
    # One point is one row of a CSV file (dpcore.data.load_csv / to_csv). By default the row is
    # the point array flattened in C order, in columns y1..yN; a space whose points read better
    # otherwise (a symmetric matrix as its upper triangle, a preshape as raw landmarks)
    # overrides csv_columns, to_csv_rows and from_csv_rows together, and csv_problems where
    # its rows need checks of their own (with messages that name the columns).
    def csv_columns(self) -> list[str]:
        """Names of the CSV columns that hold one point, in file order.

        Returns
        -------
        list of str
            Here ``y1..yN``: the point array flattened in C order, ``N = prod(point_shape)``.
        """
        size = int(np.prod(self.point_shape))
        return [f"y{j}" for j in range(1, size + 1)]

    def _csv_span(self) -> str:
        """The response columns as written in messages: ``y1..y3`` (or the one name)."""
        cols = self.csv_columns()
        return f"{cols[0]}..{cols[-1]}" if len(cols) > 1 else cols[0]

    def _csv_values(self, values):
        """``values`` as a float array whose last axis has one entry per CSV column."""
        values = np.asarray(values, dtype=float)
        n_cols = len(self.csv_columns())
        if values.ndim < 1 or values.shape[-1] != n_cols:
            raise ValueError(f"`values` must have {n_cols} columns ({self._csv_span()}) for "
                             f"{self!r}, got shape {values.shape}.")
        return values

    def to_csv_rows(self, points):
        """The CSV row values of points (inverse of :meth:`from_csv_rows`).

        Parameters
        ----------
        points : array, shape ``(..., *point_shape)``

        Returns
        -------
        ndarray, shape ``(..., len(csv_columns()))``
            Here the points flattened in C order.
        """
        points = np.asarray(points, dtype=float)
        return points.reshape(points.shape[: points.ndim - self.point_ndim] + (-1,))

    def from_csv_rows(self, values, *, renormalize=False):
        """Points from CSV row values (inverse of :meth:`to_csv_rows`).

        Only conversion: rows that :meth:`csv_problems` reports give unspecified values (no
        error, no warning).

        Parameters
        ----------
        values : array, shape ``(..., len(csv_columns()))``
        renormalize : bool
            Map every row onto the manifold where the space has a natural rescaling (the
            sphere, the hyperboloid); ignored here.

        Returns
        -------
        ndarray, shape ``(..., *point_shape)``
            Here the values reshaped.

        Raises
        ------
        ValueError
            If the last axis does not have one entry per CSV column.
        """
        values = self._csv_values(values)
        return values.reshape(values.shape[:-1] + tuple(self.point_shape))

    def csv_problems(self, values, *, atol=1e-6, renormalize=False):
        """The rows of CSV values that do not give a point of the manifold.

        Parameters
        ----------
        values : array, shape ``(n, len(csv_columns()))``
            Finite values, one row per point.
        atol : float
            Tolerance of the checks.
        renormalize : bool
            As for :meth:`from_csv_rows` (rows that it maps onto the manifold pass).

        Returns
        -------
        list of RowProblems
            One entry per failed check that some row fails, in the order the checks run;
            empty when every row gives a point. Here one check: :meth:`belongs` (with ``atol``)
            of the points of :meth:`from_csv_rows`.
        """
        values = self._csv_values(values)
        if values.shape[0] == 0:
            return []
        points = self.from_csv_rows(values, renormalize=renormalize)
        off = ~np.asarray(self.belongs(points, atol=atol), dtype=bool)
        span = self._csv_span()
        return _failed([RowProblems(off, None, lambda i: (
            f"the point in columns {span} is not on {self!r} (tolerance atol={atol:g})."))])

    def csv_read(self, values, ok, *, atol=1e-6, renormalize=False):
        """Points of every row and the problems of the rows ``ok``, in one pass where a space
        shares the work (:meth:`from_csv_rows` and :meth:`csv_problems`).

        Parameters
        ----------
        values : array, shape ``(n, len(csv_columns()))``
        ok : bool array, shape ``(n,)``
            The rows to check (the others are already reported).
        atol, renormalize
            As for :meth:`csv_problems`.

        Returns
        -------
        points : ndarray, shape ``(n, *point_shape)``
        problems : list of RowProblems
            Masks over the rows ``ok``, as :meth:`csv_problems` of ``values[ok]`` gives them.
        on_manifold : bool
            Whether every checked row without a problem is known to be a point that
            :meth:`belongs` (with ``atol``), by construction or by a check of the space's own
            that decides as ``belongs`` would, so that the reader's final check is not needed.
            Here False.
        """
        points = self.from_csv_rows(values, renormalize=renormalize)
        ok = np.asarray(ok, dtype=bool)
        checked = np.asarray(values)
        if not ok.all():  # a copy of every row costs as much as the check
            checked = checked[ok]
        problems = (self.csv_problems(checked, atol=atol, renormalize=renormalize)
                    if checked.shape[0] else [])
        return points, problems, False

    def csv_header_hint(self, unexpected, expected) -> str:
        """A hint appended to the error for a CSV header with unexpected columns, where they
        suggest a known mistake (e.g. SPD files that list the lower triangle too).

        Parameters
        ----------
        unexpected : list of str
            The unexpected column names, as written in the header.
        expected : list of str
            The columns the file should have (a regression file's start with ``x``).

        Returns
        -------
        str
            Sentences starting with a space, or ``""`` (here always).
        """
        return ""
