"""From the numbers of a manifold CSV file to points: full SPD matrices checked symmetric,
latitude and longitude converted, landmarks told from preshapes, and every point off the
manifold reported at its row and, when one entry explains it, its column.

Part of :mod:`dpcore.data.csvio` (see there for the formats).
"""

from __future__ import annotations

import numpy as np

from ..exceptions import MAX_PROBLEMS
from ..manifolds._csv_format import _mean_rows
from ._csv_formats import _sphere_checks, file_format, surely_on_sphere
from ._csv_layouts import _span
from .geographic import latlon_range_problems, latlon_to_sphere


def _points(m, y, rows, ok, *, renormalize, atol, problems, names=None, span=None):
    """Turn response values (n, c) into points, reporting off-manifold rows (only ``ok``
    rows); returns ``(points, on_manifold)`` (:meth:`~dpcore.manifolds.Manifold.csv_read`,
    through the file format's :meth:`~dpcore.data._csv_formats.PointFormat.read_points`).

    ``names``: the file's column of each of ``m.csv_columns()`` (default those names);
    ``span``: how messages name the columns of a point when they were mapped (the manifold's
    messages say ``columns y1..y3``)."""
    own = m.csv_columns()
    names = own if names is None else list(names)
    rename = dict(zip(own, names, strict=True))

    def reword(message):
        if span is None:
            return message
        return lambda i: message(i).replace(f"columns {_span(own)}", f"columns {span}")

    points, found, on_manifold = file_format(m).read_points(m, y, ok, atol=atol,
                                                             renormalize=renormalize)
    if ok.any():
        checked = np.asarray(rows)[ok]
        for check in found:
            if check.column is None and file_format(m).locates_matrix_entries:
                _add_spd_problems(m, y[ok], check.mask, reword(check.message), checked,
                                  problems, names)
            else:
                problems.add_rows(check.mask, checked, rename.get(check.column, check.column),
                                  reword(check.message))
    return points, on_manifold


def _add_spd_problems(m, upper, mask, message, rows, problems, names):
    """The matrices :meth:`SPD.csv_problems` rejects (``mask``, ``message``), each reported at
    the entry that shows why when one does: a diagonal entry (a variance) that is not
    positive, or an off-diagonal entry with ``|s_ij| >= sqrt(s_ii s_jj)`` (a 2 x 2 principal
    minor that is not positive: a correlation of magnitude 1 or more). ``names``: the file's
    column of each upper-triangle entry, row-major."""
    iu = np.triu_indices(m.k)
    idx = np.flatnonzero(mask)
    for i in idx[:MAX_PROBLEMS]:
        mat = m.from_csv_rows(upper[i])
        column, why = _spd_culprit(mat, names, iu)
        problems.add(int(rows[i]), column, message(i) + why)
    problems.total += max(idx.size - MAX_PROBLEMS, 0)


def _spd_culprit(mat, names, iu):
    """``(column, reason)`` for a matrix that is not positive definite (see
    :func:`_add_spd_problems`); ``(None, "")`` when no single entry explains it."""
    name = {(int(a), int(b)): names[t] for t, (a, b) in enumerate(zip(*iu, strict=True))}
    diag = np.diag(mat)
    if np.any(diag <= 0):
        j = int(np.argmax(diag <= 0))
        return name[j, j], (f" Its diagonal entry {name[j, j]} = {diag[j]:.6g} is a variance "
                            "and must be positive.")
    with np.errstate(all="ignore"):
        corr = np.abs(mat) / np.sqrt(np.outer(diag, diag))
    corr[np.tril_indices(len(diag))] = 0.0
    if np.max(corr) >= 1:
        a, b = (int(v) for v in np.unravel_index(np.argmax(corr), corr.shape))
        return name[a, b], (f" Its entry {name[a, b]} = {mat[a, b]:.6g} is at least "
                            f"sqrt({name[a, a]} * {name[b, b]}) = "
                            f"{np.sqrt(diag[a] * diag[b]):.6g} in magnitude (a correlation of "
                            f"{corr[a, b]:.3g}, above 1).")
    return None, ""


def _spd_from_full(m, values, rows, ok, atol, problems, names):
    """Upper triangles of full matrices (n, k * k); rows whose matrix is not symmetric within
    ``atol`` times its largest entry are reported at the first lower-triangle entry that
    differs from its mirror (``names``: the file's column of each entry, row-major). Returns
    ``(upper, symmetric)``."""
    k = m.k
    mats = values.reshape(-1, k, k)
    # The largest |entry| of each row, column by column (numpy reduces a short last axis
    # slowly; the maximum is exact in any order).
    scale = np.abs(values[:, 0])
    for j in range(1, k * k):
        np.maximum(scale, np.abs(values[:, j]), out=scale)
    # |s_ij - s_ji| of the pairs i < j: the gap of the matrix is symmetric, zero on the
    # diagonal (where ``0 > atol * scale`` never holds), so these decide alone.
    iu = np.triu_indices(k)
    limit = atol * scale
    bad = np.zeros(values.shape[0], dtype=bool)
    for r, c in zip(*np.triu_indices(k, 1), strict=True):
        bad |= np.abs(values[:, r * k + c] - values[:, c * k + r]) > limit
    bad &= ok
    for i in np.flatnonzero(bad)[:MAX_PROBLEMS]:
        gap = np.abs(mats[i] - mats[i].T)
        lower = gap > atol * scale[i]
        a, b = (int(v) for v in np.argwhere(np.tril(lower, -1))[0])
        problems.add(int(rows[i]), names[a * k + b], (
            f"the matrix is not symmetric: {names[a * k + b]} = {mats[i, a, b]:.6g} but "
            f"{names[b * k + a]} = {mats[i, b, a]:.6g}. A full SPD matrix must equal its "
            f"transpose (up to atol={atol:g} times its largest entry)."))
    problems.total += max(int(bad.sum()) - MAX_PROBLEMS, 0)
    # 0.5 (s_ij + s_ji) of the upper triangle, as halving the matrix plus its transpose.
    upper = values[:, iu[0] * k + iu[1]]
    upper += values[:, iu[1] * k + iu[0]]
    upper *= 0.5
    return upper, ~bad


def _are_preshapes(m, y, ok, atol) -> bool:
    """Whether every row read (``ok``) is already a preshape: landmarks centred and of unit
    size within ``atol``.

    Decided as ``max |land.mean(axis=-2)| <= atol`` and ``| np.linalg.norm - 1 | <= atol``
    for every row, with less work: the means by :func:`_mean_rows` (the same numbers); the
    norms from sums of squares in another order (within a few 1e-16 of numpy's), so that only
    the rows within 1e-13 of the threshold need ``np.linalg.norm`` itself; and the first
    rows looked at first, as raw landmarks fail there."""
    land = (y if ok.all() else y[ok]).reshape((-1, *m.point_shape))
    parts = [land[:_FIRST_ROWS], *(land[i:i + _BLOCK]
                                   for i in range(_FIRST_ROWS, land.shape[0], _BLOCK))]
    for part in parts:  # blocks of rows that stay in the processor's cache
        if not part.shape[0]:
            continue
        mean = _mean_rows(part)[:, 0, :]
        if not (np.maximum(np.abs(mean[:, 0]), np.abs(mean[:, 1])) <= atol).all():
            return False
        flat = part.reshape(part.shape[0], -1)
        gap = np.abs(np.sqrt(np.einsum("ij,ij->i", flat, flat)) - 1)
        margin = _MARGIN * (1 + atol)  # near the threshold the norms are at most 1 + atol
        if (gap > atol + margin).any():
            return False
        near = np.flatnonzero(~(gap <= atol - margin))
        if near.size and not (np.abs(np.linalg.norm(flat[near], axis=-1) - 1) <= atol).all():
            return False
    return True


#: Rows :func:`_are_preshapes` looks at first, and the margin within which the order of a sum
#: of squares could decide (its rounding is a few 1e-16 of the norm at most), per unit of
#: ``1 + atol``.
_FIRST_ROWS = 64
_BLOCK = 4096
_MARGIN = 1e-13


def _responses(m, layout, y, rows, ok, *, renormalize, atol, problems):
    """``(points, kind, on_manifold)``: the points of the response values ``y`` in
    ``layout``, the final layout kind (``"landmarks"`` becomes ``"preshapes"`` when every row
    is one) and whether every checked point is on the manifold by construction."""
    kind = layout.kind
    names = layout.values
    if kind == "latlon":
        latlon_range_problems(y[:, 0], y[:, 1], rows, names, problems)
        points = latlon_to_sphere(y[:, 0], y[:, 1])
        # The reader's final check (Sphere.belongs) is needed only if some point may fail it.
        return points, kind, _sphere_checks(m) and bool(surely_on_sphere(points, atol).all())
    if kind == "spd_full":
        y, symmetric = _spd_from_full(m, y, rows, ok, atol, problems, names)
        ok = ok & symmetric
        k = m.k
        names = [names[i * k + j] for i, j in zip(*np.triu_indices(k), strict=True)]
    if kind == "landmarks" and ok.any() and _are_preshapes(m, y, ok, atol):
        kind = "preshapes"
    span = layout.shown if layout.slots else None
    points, on_manifold = _points(m, y, rows, ok, renormalize=renormalize, atol=atol,
                                  problems=problems, names=names, span=span)
    return points, kind, on_manifold
