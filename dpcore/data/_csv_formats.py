"""How the CSV files of each kind of manifold write a point: the one registry of file layouts
(issue 29 point 5: knowledge about an external format goes through one registry per concern,
not through switches on manifold classes).

Every manifold has its own columns (:meth:`~dpcore.manifolds.Manifold.csv_columns`, read and
written by :mod:`dpcore.data.csvio`). Some kinds of files write points in other ways too, which
the reader recognises from the header or a column mapping: places as latitude and longitude in
degrees (``Sphere(2)``), SPD matrices with all ``k * k`` entries (``SPD(k)``, ``k >= 2``),
planar shapes as landmarks (``KendallShape``). A :class:`PointFormat` states them for one
manifold class; :func:`file_format` finds the format of a manifold (through its class's MRO, so
a subclass shares its parent's format), and :data:`FORMATS` is the registry. A format also reads
the points of its manifold's own columns (:meth:`PointFormat.read_points`, the manifold's
``csv_read``; points on the sphere with a faster check that decides alike).
"""

from __future__ import annotations

import numpy as np

from ..manifolds import SPD, KendallShape, Sphere
from ..manifolds.base import RowProblems
from .geographic import latlon_columns

__all__ = ["FORMATS", "PointFormat", "file_format", "spd_full_columns"]


def spd_full_columns(k) -> list[str]:
    """``s11, s12, ..., s1k, s21, ..., skk``: every entry, row-major (``s{i}_{j}`` when
    ``k >= 10``, as :meth:`dpcore.manifolds.SPD.csv_columns`)."""
    sep = "_" if k >= 10 else ""
    return [f"s{i}{sep}{j}" for i in range(1, k + 1) for j in range(1, k + 1)]


class PointFormat:
    """The layouts of files of points of one manifold class: by default only the manifold's
    own columns, read as coordinates."""

    #: Whether a row this format rejects without naming a column (a point that is not on the
    #: manifold) can be reported at the matrix entry that shows why (SPD: a variance that is
    #: not positive, a correlation of magnitude 1 or more).
    locates_matrix_entries = False

    def own_kind(self, m) -> str:
        """The layout kind of the manifold's own columns."""
        return "coordinates"

    def layouts(self, m) -> dict:
        """The layouts a column mapping may name: kind -> the reader's column names, in the
        order read; the manifold's own first."""
        return {self.own_kind(m): tuple(m.csv_columns())}

    def detect(self, m, raw, present) -> tuple:
        """The layout of a header without a column mapping: ``(kind, value columns,
        ignore_others)`` from the header's names as written (``raw``) and the set of its
        lower-case names (``present``)."""
        return self.own_kind(m), tuple(m.csv_columns()), False

    def alternatives(self, m) -> str:
        """The other layouts, in words, for the message of a header that misses columns."""
        return ""

    def read_points(self, m, values, ok, *, atol, renormalize):
        """``m.csv_read(values, ok, ...)``: the points of the rows of the manifold's own
        columns, the problems of the rows ``ok`` and whether every checked row without a
        problem is on the manifold (:meth:`~dpcore.manifolds.Manifold.csv_read`)."""
        return m.csv_read(values, ok, atol=atol, renormalize=renormalize)


class SphereFormat(PointFormat):
    """``Sphere(2)`` files may hold places: one latitude and one longitude column in degrees
    (other columns are then ignored), recognised when none of the own columns is present."""

    def layouts(self, m) -> dict:
        own = {"coordinates": tuple(m.csv_columns())}
        return {**own, "latlon": ("lat", "lon")} if m.dim == 2 else own

    def detect(self, m, raw, present) -> tuple:
        own = tuple(m.csv_columns())
        if m.dim == 2 and not present & set(own):
            pair = latlon_columns([h for h in raw if h])
            if pair is not None:
                return "latlon", tuple(pair), True
        return "coordinates", own, False

    def alternatives(self, m) -> str:
        if m.dim != 2:
            return ""
        return (" A file of places may instead have one latitude and one longitude column in "
                "degrees (lat or latitude, lon, lng, long or longitude; other columns are then "
                "ignored).")

    def read_points(self, m, values, ok, *, atol, renormalize):
        """As ``m.csv_read`` decides, with less work: rows whose norm is within ``atol`` of 1
        by a margin (:func:`surely_on_sphere`, every row of a clean file) pass both
        :meth:`~dpcore.manifolds.Sphere.csv_problems` and ``belongs``; ``csv_problems``
        looks only at the others, and its messages are the same."""
        if renormalize or not _sphere_checks(m):
            return m.csv_read(values, ok, atol=atol, renormalize=renormalize)
        points = m.from_csv_rows(values)
        ok = np.asarray(ok, dtype=bool)
        sure = surely_on_sphere(points[ok] if not ok.all() else points, atol)
        if sure.all():
            return points, [], True
        unsure = np.flatnonzero(~sure)
        at = np.zeros(sure.size, dtype=np.intp)
        at[unsure] = np.arange(unsure.size)
        checked = values[ok] if not ok.all() else values
        problems = []
        for check in m.csv_problems(checked[unsure], atol=atol):
            mask = np.zeros(sure.size, dtype=bool)
            mask[unsure] = check.mask
            problems.append(RowProblems(mask, check.column,
                                        lambda i, say=check.message: say(at[i])))
        return points, problems, False


def _sphere_checks(m) -> bool:
    """Whether ``m`` reads and checks its points as :class:`~dpcore.manifolds.Sphere` does
    (a subclass may override them; then it is asked about every row)."""
    cls = type(m)
    return all(getattr(cls, name) is getattr(Sphere, name)
               for name in ("from_csv_rows", "csv_problems", "csv_read", "belongs"))


def surely_on_sphere(y, atol):
    """Which rows ``y`` (n, c) surely have a norm within ``atol`` of 1 by both
    :func:`~dpcore.manifolds._functions.stable_norm` (``Sphere.csv_problems``) and
    ``np.linalg.norm`` (``Sphere.belongs``): the norm from the sum of squares, which differs
    from either by a few 1e-16 per column (relative; no underflow above a sum of 1e-200),
    clears the threshold by a margin of 1e-14 (c + 8) (1 + atol); near it the norms are at
    most 1 + atol. The others may pass too: the callers ask the manifold about them."""
    squares = np.einsum("ij,ij->i", y, y)
    margin = 1e-14 * (y.shape[-1] + 8) * (1 + atol)
    return (squares >= 1e-200) & (np.abs(np.sqrt(squares) - 1.0) <= atol - margin)


class SPDFormat(PointFormat):
    """``SPD(k)``, ``k >= 2``: the upper triangle (the own columns) or the full matrix, all
    ``k * k`` entries named, row by row."""

    locates_matrix_entries = True

    def own_kind(self, m) -> str:
        return "spd_upper" if m.k >= 2 else "coordinates"

    def layouts(self, m) -> dict:
        own = {self.own_kind(m): tuple(m.csv_columns())}
        return {**own, "spd_full": tuple(spd_full_columns(m.k))} if m.k >= 2 else own

    def detect(self, m, raw, present) -> tuple:
        if m.k >= 2:
            full = spd_full_columns(m.k)
            if set(full) <= present:
                return "spd_full", tuple(full), False
        return self.own_kind(m), tuple(m.csv_columns()), False

    def alternatives(self, m) -> str:
        if m.k < 2:
            return ""
        full, k = spd_full_columns(m.k), m.k
        listed = ", ".join(full) if k == 2 else (f"{full[0]}, ..., {full[k - 1]}, {full[k]}, "
                                                 f"..., {full[-1]}")
        return (f" SPD files may also list the full matrix, all {len(full)} entries row by "
                f"row: {listed}.")


class KendallFormat(PointFormat):
    """Planar shapes: the own columns are landmarks (centred and scaled when read; a file of
    preshapes is recognised as such by the reader)."""

    def own_kind(self, m) -> str:
        return "landmarks"


#: The registry: the file format of each manifold class (others: :class:`PointFormat`).
FORMATS: dict[type, PointFormat] = {Sphere: SphereFormat(), SPD: SPDFormat(),
                                    KendallShape: KendallFormat()}
_DEFAULT = PointFormat()


def file_format(manifold) -> PointFormat:
    """The :class:`PointFormat` of ``manifold``'s class (the nearest class of its MRO in
    :data:`FORMATS`)."""
    for cls in type(manifold).__mro__:
        if cls in FORMATS:
            return FORMATS[cls]
    return _DEFAULT
