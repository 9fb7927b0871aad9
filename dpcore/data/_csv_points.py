"""From the numbers of a manifold CSV file to points: full SPD matrices checked symmetric,
latitude and longitude converted, landmarks told from preshapes, and every point off the
manifold reported at its row and, when one entry explains it, its column.

Part of :mod:`dpcore.data.csvio` (see there for the formats).
"""

from __future__ import annotations

import numpy as np

from ..exceptions import MAX_PROBLEMS
from ._csv_formats import file_format
from ._csv_layouts import _span
from .geographic import latlon_range_problems, latlon_to_sphere


def _points(m, y, rows, ok, *, renormalize, atol, problems, names=None, span=None):
    """Turn response values (n, c) into points, reporting off-manifold rows (only ``ok``
    rows); returns ``(points, on_manifold)`` (:meth:`~dpcore.manifolds.Manifold.csv_read`).

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

    points, found, on_manifold = m.csv_read(y, ok, atol=atol, renormalize=renormalize)
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
    scale = np.max(np.abs(mats), axis=(-2, -1))
    gap = np.abs(mats - mats.swapaxes(-1, -2))
    bad = ok & np.any(gap > atol * scale[:, None, None], axis=(-2, -1))
    for i in np.flatnonzero(bad)[:MAX_PROBLEMS]:
        lower = gap[i] > atol * scale[i]
        a, b = (int(v) for v in np.argwhere(np.tril(lower, -1))[0])
        problems.add(int(rows[i]), names[a * k + b], (
            f"the matrix is not symmetric: {names[a * k + b]} = {mats[i, a, b]:.6g} but "
            f"{names[b * k + a]} = {mats[i, b, a]:.6g}. A full SPD matrix must equal its "
            f"transpose (up to atol={atol:g} times its largest entry)."))
    problems.total += max(int(bad.sum()) - MAX_PROBLEMS, 0)
    iu = np.triu_indices(k)
    upper = (0.5 * (mats + mats.swapaxes(-1, -2)))[:, iu[0], iu[1]]
    return upper, ~bad


def _are_preshapes(m, y, ok, atol) -> bool:
    """Whether every row read (``ok``) is already a preshape: landmarks centred and of unit
    size within ``atol``."""
    land = y[ok].reshape((-1, *m.point_shape))
    centred = np.max(np.abs(land.mean(axis=-2)), axis=-1, initial=0.0) <= atol
    unit = np.abs(np.linalg.norm(land.reshape(land.shape[0], -1), axis=-1) - 1) <= atol
    return bool(np.all(centred & unit))


def _responses(m, layout, y, rows, ok, *, renormalize, atol, problems):
    """``(points, kind, on_manifold)``: the points of the response values ``y`` in
    ``layout``, the final layout kind (``"landmarks"`` becomes ``"preshapes"`` when every row
    is one) and whether every checked point is on the manifold by construction."""
    kind = layout.kind
    names = layout.values
    if kind == "latlon":
        latlon_range_problems(y[:, 0], y[:, 1], rows, names, problems)
        return latlon_to_sphere(y[:, 0], y[:, 1]), kind, False
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
