"""Reading and writing manifold-valued data as CSV, with validation that names rows and columns.

File format (one observation per row, header row required; see :func:`expected_columns`):

* regression: column ``x`` (the real covariate), then the response columns;
* Fréchet mean: the response columns only.

Response columns per manifold: ``Sphere(d)`` and ``Hyperbolic(d)`` ``y1..y{d+1}`` (for the
hyperboloid ``y1`` is the time-like coordinate); ``Euclidean(d)`` ``y1..yd``; ``SPD(k)`` the upper
triangle row-major ``s11, s12, ..., s1k, s22, ..., skk`` (``s{i}_{j}`` when ``k >= 10``);
``KendallShape(k)`` landmark coordinates ``lx1, ly1, ..., lxk, lyk`` (raw, or already preshapes).
Two more layouts are recognised from the header (:func:`read_manifold_csv`): ``SPD(k)`` as the
full matrix ``s11, s12, ..., s21, ..., skk`` (checked symmetric), and ``Sphere(2)`` as one latitude
and one longitude column in degrees (other columns ignored). A column mapping
(``read_manifold_csv(..., columns=...)``) reads any of these layouts from columns with names of
the file's own, ignoring the other columns; a group (person) column can be read along as text.
The format is a fact of each manifold class (:meth:`~dpcore.manifolds.Manifold.csv_columns`,
:meth:`~dpcore.manifolds.Manifold.from_csv_rows` / :meth:`~dpcore.manifolds.Manifold.to_csv_rows`
and the checks of :meth:`~dpcore.manifolds.Manifold.csv_problems`); this module reads and
writes the files.

Row numbers in error messages count as a spreadsheet does: the header is row 1 and the first
data row is row 2, so "row N" is line N of the file (unless a quoted cell spans several lines).
Nothing is ever written to disk while loading. The generic part -- decoding, delimiters, records,
numbers, problems collected by row and column -- is :mod:`dpcore.data.tables`, whose rules
(encodings, decimal commas, limits) apply here too; this module adds the manifold formats.
Files written by :func:`to_csv` are safe to open in a spreadsheet (see :func:`neutralize_cell`).
"""

from __future__ import annotations

import csv
import io
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from .._validation import (
    as_float_array,
    check_choice,
    check_int,
    check_manifold,
    check_positive,
)
from ..exceptions import MAX_PROBLEMS, DataValidationError, Problem
from ..manifolds import SPD, KendallShape, Sphere
from ..settings import get_limits
from ._decoding import _read_text, _sniff_delimiter
from .geographic import latlon_columns, latlon_range_problems, latlon_to_sphere
from .tables import (
    BLANK,
    HUGE_VALUE,
    _collect_rows,
    _Collector,
    _first_record,
    _header_names,
    _positions,
    _records,
    _to_numbers,
)

__all__ = [
    "HUGE_VALUE",
    "LAYOUTS",
    "MAX_PROBLEMS",
    "DataValidationError",
    "ManifoldData",
    "Problem",
    "expected_columns",
    "load_csv",
    "read_manifold_csv",
    "neutralize_cell",
    "response_columns",
    "to_csv",
]

TASKS = ("regression", "mean")


# ------------------------------------------------------------------------------ columns
def _check_task(task) -> str:
    if task not in TASKS:
        raise ValueError(f"`task` must be 'regression' or 'mean', got {task!r}.")
    return task


def expected_columns(manifold, task="regression") -> list[str]:
    """Column names of the CSV format for ``manifold`` and ``task``, in file order.

    Parameters
    ----------
    manifold : Manifold
    task : {"regression", "mean"}
        Regression files start with the covariate column ``x``.

    Returns
    -------
    list of str
        E.g. ``['x', 'y1', 'y2', 'y3']`` for ``Sphere(2)`` and ``['s11', 's12', 's22']`` for
        ``SPD(2)`` with ``task="mean"``: the manifold's
        :meth:`~dpcore.manifolds.Manifold.csv_columns`, by default ``y1..yN`` (the point array
        flattened in C order).
    """
    m = check_manifold(manifold)
    cols = m.csv_columns()
    return ["x", *cols] if _check_task(task) == "regression" else cols


def _span(cols) -> str:
    return f"{cols[0]}..{cols[-1]}" if len(cols) > 1 else cols[0]


# ------------------------------------------------------------------------------ layouts
#: How the response columns of a file were read (:attr:`ManifoldData.layout`).
LAYOUTS = ("coordinates", "latlon", "spd_upper", "spd_full", "landmarks", "preshapes")


@dataclass(frozen=True)
class _Layout:
    """The columns read from a file: ``kind`` (before the landmark/preshape distinction),
    the columns in the order read (``x`` first for regression; names as written in the
    header for latitude and longitude and for a column mapping), whether other columns are
    ignored and, for a column mapping, the reader's name of each value column (``slots``)."""

    kind: str
    columns: tuple
    n_lead: int
    ignore_others: bool = False
    slots: tuple = ()

    @property
    def values(self) -> tuple:
        return self.columns[self.n_lead:]

    @property
    def shown(self) -> str:
        """The value columns for a message: ``y1..y3``, or every name when they were mapped."""
        return _shown(self.values, self.slots)


def _shown(values, slots=()) -> str:
    """Columns for a message: a span ``y1..y3`` when they bear the reader's own names, else
    every name (mapped names need not run in sequence)."""
    if slots and [v.lower() for v in values] != [s.lower() for s in slots]:
        return ", ".join(values)
    return _span(values)


def _spd_full_columns(k) -> list[str]:
    """``s11, s12, ..., s1k, s21, ..., skk``: every entry, row-major (``s{i}_{j}`` when
    ``k >= 10``, as :meth:`dpcore.manifolds.SPD.csv_columns`)."""
    sep = "_" if k >= 10 else ""
    return [f"s{i}{sep}{j}" for i in range(1, k + 1) for j in range(1, k + 1)]


def _layout(m, task, raw, keys, covariate="x", mapped=None) -> _Layout:
    """The layout of a file with header names ``raw`` (as written) and ``keys`` (lower case).

    With a column mapping (``mapped``: ``(kind, {slot: file column})`` from
    :func:`_check_columns`), the layout it names, its columns as spelled in the header. Else
    Sphere(2): a latitude and a longitude column (and none of ``y1..y3``) mean places in
    degrees. SPD(k), k >= 2: all ``k * k`` entries named mean full matrices. Otherwise the
    manifold's own columns (:func:`expected_columns`).
    """
    lead = (covariate,) if task == "regression" else ()
    if mapped is not None:
        spelled = {}
        for name, key in zip(raw, keys, strict=True):
            spelled.setdefault(key, name)
        kind, chosen = mapped
        names = tuple(spelled.get(c.lower(), c) for c in (*lead, *chosen.values()))
        return _Layout(kind, names, len(lead), ignore_others=True, slots=tuple(chosen))
    own = m.csv_columns()
    present = {k for k in keys if k}
    if isinstance(m, Sphere) and m.dim == 2 and not present & set(own):
        pair = latlon_columns([h for h in raw if h])
        if pair is not None:
            return _Layout("latlon", (*lead, *pair), len(lead), ignore_others=True)
    if isinstance(m, SPD) and m.k >= 2:
        full = _spd_full_columns(m.k)
        if set(full) <= present:
            return _Layout("spd_full", (*lead, *full), len(lead))
        return _Layout("spd_upper", (*lead, *own), len(lead))
    kind = "landmarks" if isinstance(m, KendallShape) else "coordinates"
    return _Layout(kind, (*lead, *own), len(lead))


def response_columns(manifold, header) -> tuple[str, ...]:
    """The columns of a file that :func:`read_manifold_csv` reads as its points (without a
    column mapping), as spelled in the header, in the order read.

    The layout is the one the reader finds from the header (latitude and longitude on S²,
    the full SPD matrix, else the manifold's own columns); only the columns present are
    listed. A page that lets the user choose the covariate offers the other numeric columns:
    a covariate among these columns is reported by the reader.

    Parameters
    ----------
    manifold : Manifold
    header : sequence of str
        The file's column names (e.g. :attr:`dpcore.data.TextTable.columns`).

    Returns
    -------
    tuple of str

    Examples
    --------
    >>> from dpcore.manifolds import Sphere
    >>> response_columns(Sphere(2), ["city", "Latitude", "Longitude", "population"])
    ('Latitude', 'Longitude')
    """
    m = check_manifold(manifold)
    raw = [str(h).replace("\ufeff", "").strip() for h in header]
    keys = [h.lower() for h in raw]
    spelled = {}
    for name, key in zip(raw, keys, strict=True):
        if key:
            spelled.setdefault(key, name)
    layout = _layout(m, "mean", raw, keys)
    return tuple(spelled[c.lower()] for c in layout.values if c.lower() in spelled)


def _slot_layouts(m) -> dict:
    """The layouts a column mapping may name for ``m``: kind -> the reader's column names, in
    the order read (:func:`read_manifold_csv`, ``columns``)."""
    own = tuple(m.csv_columns())
    if isinstance(m, Sphere) and m.dim == 2:
        return {"coordinates": own, "latlon": ("lat", "lon")}
    if isinstance(m, SPD) and m.k >= 2:
        return {"spd_upper": own, "spd_full": tuple(_spd_full_columns(m.k))}
    return {"landmarks" if isinstance(m, KendallShape) else "coordinates": own}


def _check_columns(m, columns, task) -> tuple:
    """``columns`` checked: a mapping from the reader's names of exactly one layout's columns
    to file column names. Returns ``(kind, chosen)``: the layout and ``{slot: file column}``
    (keys in lower case, names stripped) in the layout's order."""
    if not isinstance(columns, Mapping):
        raise TypeError("`columns` must be a mapping from the reader's column names to the "
                        f"file's (e.g. {{'y1': 'px'}}), got {type(columns).__name__}.")
    given = {}
    for slot, name in columns.items():
        if not isinstance(slot, str) or not isinstance(name, str) or not name.strip():
            raise TypeError("`columns` must map column names (str) to column names (str), got "
                            f"{slot!r}: {name!r}.")
        key = slot.strip().lower()
        if key in given:
            raise ValueError(f"`columns` names the reader's column {key!r} twice.")
        given[key] = name.strip()
    layouts = _slot_layouts(m)
    kinds = [kind for kind, slots in layouts.items() if set(slots) == set(given)]
    if not kinds:
        listed = "; or ".join(", ".join(slots) for slots in layouts.values())
        covar = (" The covariate column is chosen with `covariate`." if task == "regression"
                 and "x" in given else "")
        raise ValueError(f"the keys of `columns` must be the reader's columns of one layout of "
                         f"{m!r}: {listed}; got {', '.join(given)}.{covar}")
    kind = kinds[0]
    return kind, {s: given[s] for s in layouts[kind]}


def _check_roles(layout, group):
    """Raise a :class:`DataValidationError` (row 1, the column) if one file column would be
    read in two roles (covariate, a value column, the group column). Without a column mapping
    the value columns are the file's (its latitude, say), so the conflict is one of the file
    and the roles asked for, reported like any problem of the file."""
    roles = [("the covariate" if i < layout.n_lead else
              f"column {layout.slots[i - layout.n_lead]}" if layout.slots
              else "a response column", c)
             for i, c in enumerate(layout.columns)]
    if group is not None:
        roles.append(("the group column", group))
    seen = {}
    for role, name in roles:
        other = seen.setdefault(name.lower(), role)
        if other != role:
            raise DataValidationError(f"the file's column {name!r} is chosen for both {other} "
                                      f"and {role}; each column has one role.", row=1,
                                      column=name)


def _alternatives(m) -> str:
    """The other layouts a manifold's files may have, for the missing-columns message."""
    if isinstance(m, Sphere) and m.dim == 2:
        return (" A file of places may instead have one latitude and one longitude column in "
                "degrees (lat or latitude, lon, lng, long or longitude; other columns are then "
                "ignored).")
    if isinstance(m, SPD) and m.k >= 2:
        full = _spd_full_columns(m.k)
        k = m.k
        listed = ", ".join(full) if k == 2 else (f"{full[0]}, ..., {full[k - 1]}, {full[k]}, "
                                                 f"..., {full[-1]}")
        return (f" SPD files may also list the full matrix, all {len(full)} entries row by "
                f"row: {listed}.")
    return ""


# ------------------------------------------------------------------------------ reading
def _read_table(m, text, task, max_rows, covariate="x", unread="error", mapped=None,
                group=None):
    """Header checks and cell extraction.

    Returns ``(layout, problems, rows, cells, padded, delimiter, ignored)``: the
    :class:`_Layout`, the problems found so far (a collector ordered by the columns read),
    spreadsheet row numbers of the data rows, their cells in the order of
    ``layout.columns`` (then the ``group`` column's, when there is one), the ``(i, j)``
    positions filled in for short rows, the delimiter and the names of the columns ignored.
    """
    delimiter = _sniff_delimiter(text)
    records = _records(text, delimiter)
    if mapped is None:
        expect = ", ".join(expected_columns(m, task))
    else:
        lead = [covariate] if task == "regression" else []
        expect = ", ".join([*lead, *mapped[1].values()])
    header = _first_record(records, f" ({expect})")
    raw, keys, names = _header_names(header, f": {expect}")
    layout = _layout(m, task, raw, keys, covariate, mapped)
    _check_roles(layout, group)
    columns = list(layout.columns)
    read_columns = columns + ([group] if group is not None else [])
    problems = _Collector({c: i for i, c in enumerate(read_columns)})
    positions = _positions(keys, names, problems)
    expect = ", ".join(columns)
    read = {c.lower() for c in read_columns}
    others = [names[j] for j, k in enumerate(keys) if k and k not in read]
    ignore = layout.ignore_others or unread == "ignore"
    extra = [] if ignore else others
    # Columns the caller chose (a mapping, the group column): a missing one is named alone.
    chosen = {}
    if layout.slots:
        for i, c in enumerate(columns):
            chosen[c.lower()] = ("the covariate" if i < layout.n_lead else
                                 layout.slots[i - layout.n_lead])
    if group is not None:
        chosen[group.lower()] = "the group column"
    missing = [c for c in columns if c.lower() not in positions and c.lower() not in chosen]
    for c in read_columns:
        if c.lower() not in positions and c.lower() in chosen:
            listed = ", ".join(n for n, k in zip(names, keys, strict=True) if k)
            problems.add(1, c, f"no column named '{c}' (chosen for {chosen[c.lower()]}) in the "
                               f"header; its columns are: {listed}.")
    if missing:
        hint = ""
        if missing == ["x"]:
            hint = " Regression needs the covariate column 'x'; for a Fréchet mean use task='mean'."
        elif len(positions) == 1 and extra and len(columns) > 1:
            hint = (f" The header has a single column, '{extra[0]}': "
                    "expected comma-separated values (',' is the standard separator; ';', tab "
                    "and '|' are recognised too).")
        if missing != ["x"]:
            hint += _alternatives(m)
        listed = ", ".join(f"'{c}'" for c in missing)
        problems.add(1, missing[0], f"missing column(s) {listed}. Expected the columns: "
                                    f"{expect}.{hint}")
    if extra:
        hint = m.csv_header_hint(extra, columns)
        if extra[0].lower() == "x" and "x" not in columns:
            hint = " The Fréchet-mean task takes no covariate; use task='regression' or drop 'x'."
        listed = ", ".join(f"'{c}'" for c in extra)
        problems.add(1, extra[0], f"unexpected column(s) {listed}. Expected the columns: "
                                  f"{expect}.{hint}")
    problems.raise_if_any()

    index = [positions[c.lower()][0] for c in read_columns]
    rows, cells, padded = _collect_rows(records, index, read_columns, keys, max_rows, problems,
                                        delimiter, "load_csv")
    ignored = tuple(others) if ignore else ()
    return layout, problems, rows, cells, padded, delimiter, ignored


def _drop_blank(rows, cells, padded, columns):
    """The rows none of whose cells is empty, and how many were left out.

    Short rows (``padded``) are kept: they are reported already. Returns ``(rows, cells,
    padded, dropped)`` with ``padded`` renumbered.
    """
    short = {i for i, _ in padded}
    keep = [i for i, rec in enumerate(cells) if i in short or all(c.strip() for c in rec)]
    dropped = len(cells) - len(keep)
    if not dropped:
        return rows, cells, padded, 0
    if not keep:
        raise DataValidationError(
            f"every one of the {dropped:,} data rows has an empty cell in the columns read "
            f"({', '.join(columns)}), so none is left.")
    new = {old: i for i, old in enumerate(keep)}
    return (rows[keep], [cells[i] for i in keep],
            {(new[i], j) for i, j in padded}, dropped)


# ------------------------------------------------------------------------------ geometry
def _points(m, y, rows, ok, *, renormalize, atol, problems, names=None, span=None):
    """Turn response values (n, c) into points, reporting off-manifold rows (only ``ok`` rows).

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

    if ok.any():
        checked = np.asarray(rows)[ok]
        for check in m.csv_problems(y[ok], atol=atol, renormalize=renormalize):
            if isinstance(m, SPD) and check.column is None:
                _add_spd_problems(m, y[ok], check.mask, reword(check.message), checked,
                                  problems, names)
            else:
                problems.add_rows(check.mask, checked, rename.get(check.column, check.column),
                                  reword(check.message))
    return m.from_csv_rows(y, renormalize=renormalize)


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
    """``(points, kind)``: the points of the response values ``y`` in ``layout`` and the
    final layout kind (``"landmarks"`` becomes ``"preshapes"`` when every row is one)."""
    kind = layout.kind
    names = layout.values
    if kind == "latlon":
        latlon_range_problems(y[:, 0], y[:, 1], rows, names, problems)
        return latlon_to_sphere(y[:, 0], y[:, 1]), kind
    if kind == "spd_full":
        y, symmetric = _spd_from_full(m, y, rows, ok, atol, problems, names)
        ok = ok & symmetric
        k = m.k
        names = [names[i * k + j] for i, j in zip(*np.triu_indices(k), strict=True)]
    if kind == "landmarks" and ok.any() and _are_preshapes(m, y, ok, atol):
        kind = "preshapes"
    span = layout.shown if layout.slots else None
    return _points(m, y, rows, ok, renormalize=renormalize, atol=atol, problems=problems,
                   names=names, span=span), kind


# ------------------------------------------------------------------------------ results
@dataclass(frozen=True, eq=False)
class ManifoldData:
    """Manifold-valued data read from CSV (see :func:`read_manifold_csv`).

    Attributes
    ----------
    y : ndarray, shape (n, *point_shape)
        The points.
    x : ndarray, shape (n,), or None
        The covariate (regression files), None for Fréchet-mean files.
    rows : ndarray of int, shape (n,)
        Spreadsheet row number of each point (header = row 1).
    layout : str
        How the responses were written (one of :data:`LAYOUTS`): ``"coordinates"`` (the
        manifold's own columns), ``"latlon"`` (latitude and longitude in degrees, converted
        to S²), ``"spd_upper"`` / ``"spd_full"`` (upper triangle, or all ``k * k`` entries of
        symmetric matrices), ``"landmarks"`` (raw landmarks, centred and scaled to preshapes)
        or ``"preshapes"`` (landmarks already centred and of unit size).
    columns : tuple of str
        The columns read, in the order read (the covariate first for regression), as named
        in the file's header.
    ignored : tuple of str
        Other columns of the file, not read (with ``"latlon"``, a column mapping or
        ``others="ignore"``; elsewhere they are errors). The group column is not listed.
    dropped : int
        Data rows left out because a cell read was empty (``blank="drop"``).
    groups : ndarray of object (str), shape (n,), or None
        The group column's value (who the row belongs to) of each point, stripped; None
        without a group column.
    slots : tuple of str
        With a column mapping, the reader's name of each value column (``y1``, ``lat``,
        ``s12``, ...) in the order of ``columns`` after the covariate; empty otherwise.
    """

    y: np.ndarray
    x: np.ndarray | None
    rows: np.ndarray
    layout: str
    columns: tuple
    ignored: tuple = ()
    dropped: int = 0
    groups: np.ndarray | None = None
    slots: tuple = ()

    @property
    def note(self) -> str:
        """One or two sentences for a user saying how the file was read."""
        n = self.y.shape[0]
        values = self.columns[1:] if self.x is not None else self.columns
        span = _shown(values, self.slots)
        # One lambda per layout: only the layout read is formatted (a one-column file has no
        # values[1]).
        what = {
            "coordinates": lambda: f"Read {n} points from the columns {span}.",
            "latlon": lambda: (
                f"Read {n} places from the columns {values[0]} (latitude) and {values[1]} "
                "(longitude), in degrees, as points of the unit sphere S²."),
            "spd_upper": lambda: (
                f"Read {n} symmetric matrices from their upper triangle ({span})."),
            "spd_full": lambda: (
                f"Read {n} matrices given in full ({span}, all {len(values)} entries); each is "
                "symmetric within tolerance."),
            "landmarks": lambda: (
                f"Read {n} raw landmark configurations ({span}): each was centred and scaled to "
                "unit size (a preshape), which keeps its shape."),
            "preshapes": lambda: (
                f"Read {n} landmark configurations ({span}) that are already preshapes "
                "(centred, unit size)."),
        }[self.layout]()
        if self.ignored:
            what += f" Columns not used: {', '.join(self.ignored)}."
        if self.dropped:
            what += (f" {self.dropped} row{'s' if self.dropped != 1 else ''} with an empty cell "
                     "left out.")
        return what


def read_manifold_csv(source, manifold, task="regression", *, blank="error",
                      renormalize=False, max_rows=None, atol=1e-6, ball=None, max_bytes=None,
                      covariate="x", others="error", columns=None, group=None):
    """Load and validate manifold-valued data from CSV, saying how the file was read.

    :func:`load_csv` with more choices: rows with an empty cell can be dropped and counted,
    the columns may have other names (a column mapping), a group column can be read along,
    and the result says which layout the file had (:class:`ManifoldData`).

    Besides each manifold's own columns (:func:`expected_columns`), two layouts are
    recognised from the header (or named by ``columns``):

    * ``Sphere(2)``: one latitude and one longitude column in degrees (``lat``/``latitude``
      and ``lon``/``lng``/``long``/``longitude``, any case) and none of ``y1..y3``. Places
      become :func:`~dpcore.data.latlon_to_sphere` points; latitudes outside [-90, 90] and
      longitudes outside [-180, 360] are reported; other columns (names, populations) are
      ignored and listed in :attr:`ManifoldData.ignored`.
    * ``SPD(k)``, ``k >= 2``: all ``k * k`` entries ``s11, s12, ..., s1k, s21, ..., skk``
      (row-major). Each matrix must be symmetric within ``atol`` times its largest entry
      (otherwise the first lower-triangle entry that differs is reported); its symmetric
      part is used.

    ``KendallShape`` landmarks may be raw (any position and scale) or preshapes: raw rows are
    centred and scaled, and the layout says ``"landmarks"`` unless every row already was a
    preshape within ``atol`` (``"preshapes"``).

    Parameters
    ----------
    source, manifold, task, renormalize, max_rows, atol, ball, max_bytes
        As for :func:`load_csv`.
    blank : {"error", "drop"}
        An empty cell in a column read is reported (``"error"``), or its row is left out and
        counted in :attr:`ManifoldData.dropped` (``"drop"``).
    covariate : str
        Regression: the column read as the covariate (default ``"x"``), as named in the
        header (a column mapping of the user's file).
    others : {"error", "ignore"}
        Columns that are not read: reported as unexpected (``"error"``), or skipped and
        listed in :attr:`ManifoldData.ignored` (``"ignore"``; an identifier or a person
        column). A column mapping (``columns``) and latitude/longitude files always ignore
        them.
    columns : mapping of str to str, optional
        A column mapping for a file whose columns have names of their own: the reader's name
        of each column of one layout -> the file's column holding it (matched
        case-insensitively after stripping spaces). The keys name the layout and must be
        exactly its columns: the manifold's own (:func:`expected_columns` without ``x``,
        e.g. ``{"y1": "px", "y2": "py", "y3": "pz"}``), ``{"lat": ..., "lon": ...}`` on
        ``Sphere(2)``, or all ``k * k`` entries ``s11 .. skk`` on ``SPD(k)`` (full
        matrices). Every other column of the file is ignored and listed in
        :attr:`ManifoldData.ignored`; messages name the file's columns. By default the layout
        is recognised from the header names.
    group : str, optional
        A column naming who each row belongs to (a person, a patient: the unit of group
        privacy), read as text into :attr:`ManifoldData.groups`. An empty cell there is an
        empty cell read: reported, or its row dropped (``blank``).

    Returns
    -------
    ManifoldData

    Raises
    ------
    DataValidationError
        As for :func:`load_csv`, plus non-symmetric full SPD matrices and latitudes or
        longitudes out of range; every problem with its row and column. Matrices that are not
        positive definite are reported at a non-positive diagonal entry or at an off-diagonal
        entry larger than the geometric mean of its two diagonal entries, when one explains
        it. A mapped or group column missing from the header is named with its role (row 1),
        as is one file column chosen for two roles (the covariate, a value column -- e.g. the
        file's latitude, see :func:`response_columns` -- or the group column).
    TypeError, ValueError
        For invalid arguments: ``columns`` whose keys are not the columns of one layout.

    Examples
    --------
    >>> import io
    >>> from dpcore.manifolds import Sphere
    >>> text = "station;Breite;Länge;who\\nA;48,1;11,6;ann\\nB;52,5;13,4;bob\\n"
    >>> d = read_manifold_csv(io.StringIO(text), Sphere(2), "mean",
    ...                       columns={"lat": "Breite", "lon": "Länge"}, group="who")
    >>> d.layout, d.columns, d.ignored, d.groups.tolist()
    ('latlon', ('Breite', 'Länge'), ('station',), ['ann', 'bob'])
    """
    m = check_manifold(manifold)
    task = _check_task(task)
    check_choice(blank, "blank", BLANK)
    max_rows = get_limits().max_rows if max_rows is None else check_int(max_rows, "max_rows")
    atol = check_positive(atol, "atol")
    if not isinstance(renormalize, (bool, np.bool_)):
        raise TypeError(f"`renormalize` must be a bool, got {type(renormalize).__name__}.")
    if ball is not None:
        center, radius = _check_ball(m, ball)

    check_choice(others, "others", ("error", "ignore"))
    if not isinstance(covariate, str) or not covariate.strip():
        raise TypeError(f"`covariate` must be a column name, got {covariate!r}.")
    if group is not None:
        if not isinstance(group, str) or not group.strip():
            raise TypeError(f"`group` must be a column name, got {group!r}.")
        group = group.strip()
    mapped = None if columns is None else _check_columns(m, columns, task)
    text = _read_text(source, max_bytes, "load_csv")
    layout, problems, rows, cells, padded, delimiter, ignored = _read_table(
        m, text, task, max_rows, covariate.strip(), others, mapped, group)
    columns = list(layout.columns)
    dropped = 0
    if blank == "drop" and cells:
        rows, cells, padded, dropped = _drop_blank(
            rows, cells, padded, columns + ([group] if group is not None else []))
    groups = None
    if group is not None:
        short = {i for i, j in padded if j == len(columns)}
        groups = np.array([rec[-1].strip() for rec in cells], dtype=object)
        cells = [rec[:-1] for rec in cells]
        empty = np.array([not g and i not in short for i, g in enumerate(groups)], dtype=bool)
        problems.add_rows(empty, rows, group, lambda i: (
            "the cell is empty; every row needs a value in the group column."))

    n = len(rows)
    need = 2 if task == "regression" else 1
    if n == 0:
        problems.add(None, None, "the file has a header row but no data rows.")
        problems.raise_if_any()
    elif n < need:
        left = f" left after dropping {dropped} with an empty cell" if dropped else ""
        problems.add(None, None, f"the file has {n} data row{left}; {task} needs at least "
                                 f"{need}.")

    values, bad = _to_numbers(cells, rows, columns, delimiter, problems, padded)
    ok = ~bad.any(axis=1)
    y = values[:, layout.n_lead:]
    # Rows with a bad cell are already reported; zeros keep NaN and inf out of the geometry.
    y = np.where(ok[:, None], y, 0.0)
    points, kind = _responses(m, layout, y, rows, ok, renormalize=renormalize, atol=atol,
                              problems=problems)
    if not problems:
        # Safety net for rounding: every returned point must be on the manifold.
        on = np.asarray(m.belongs(points, atol=atol), dtype=bool)
        problems.add_rows(~on, rows, None, lambda i: (
            f"the point in columns {layout.shown} is not on {m!r} within atol={atol:g} "
            "after conversion, because of rounding (its coordinates are too tiny, or too "
            "large relative to their differences). Check the values or rescale them."))

    x = None
    if task == "regression":
        x = values[:, 0].copy()
        good_x = x[~bad[:, 0]]
        if n >= 2 and good_x.size >= 2 and np.ptp(good_x) == 0:
            problems.add(None, columns[0], f"every value is {good_x[0]:.6g}; regression needs "
                                           "at least two different covariate values.")

    if ball is not None and not problems:
        with np.errstate(all="ignore"):
            d = np.asarray(m.dist(center, points), dtype=float)
        problems.add_rows(~(d <= radius), rows, None, lambda i: (
            f"the point is at distance {d[i]:.6g} from the centre, outside the assumed ball of "
            f"radius {radius:g}."))

    problems.raise_if_any()
    return ManifoldData(y=points, x=x, rows=np.asarray(rows, dtype=int), layout=kind,
                        columns=tuple(columns), ignored=ignored, dropped=int(dropped),
                        groups=groups, slots=layout.slots)


def load_csv(source, manifold, task="regression", *, renormalize=False, max_rows=None,
             atol=1e-6, ball=None, max_bytes=None):
    """Load and validate manifold-valued data from CSV.

    Parameters
    ----------
    source : path (str or os.PathLike), bytes, or file-like object
        A ``str`` is always a file path. File-like objects may be binary or text (e.g.
        ``io.BytesIO``, ``io.StringIO`` or Streamlit's ``UploadedFile``); objects with a
        ``getvalue()`` method are read in full regardless of their current position. Bytes
        are decoded as described under Notes. Nothing is written to disk.
    manifold : Manifold
        Determines the response columns (see :func:`expected_columns`).
    task : {"regression", "mean"}
        ``"regression"`` expects a covariate column ``x`` and at least 2 rows;
        ``"mean"`` expects the response columns only and at least 1 row.
    renormalize : bool
        Sphere: divide every point by its norm instead of rejecting points whose norm differs
        from 1 by more than ``atol``. Hyperbolic: rescale every point with ``<y, y>_L < 0`` to
        ``<y, y>_L = -1``. Ignored elsewhere (Kendall landmarks are always centred and scaled).
    max_rows : int, optional
        Maximum number of data rows. By default the limit of :func:`dpcore.settings.get_limits`
        (100 000 unless the environment variable ``DPCORE_MAX_ROWS`` says otherwise). Rows are
        counted while reading, so a file over the limit is rejected without parsing the rest.
    atol : float
        Tolerance for points on the sphere (``| |y| - 1 | <= atol``) and the hyperboloid
        (``|<y, y>_L + 1| <= atol (1 + y1^2)``). Points within tolerance are returned as
        written, not projected, unless ``renormalize`` is set.
    ball : tuple (center, radius), optional
        If given, every point must lie within geodesic distance ``radius`` of ``center``
        (the support assumption of private Fréchet means and regressions).
    max_bytes : int, optional
        Largest file in bytes; by default the library's limit,
        :attr:`dpcore.settings.Limits.max_upload_mb` MiB (200, or the environment variable
        ``DPCORE_MAX_UPLOAD_MB``), as for :func:`dpcore.data.read_table`. The dashboard passes
        its own upload cap.

    Returns
    -------
    (x, y) for ``task="regression"``, y for ``task="mean"``
        ``x`` has shape (n,), ``y`` has shape (n, *point_shape). Kendall responses are
        preshapes (centred, unit norm, from raw landmarks or preshapes); SPD responses are
        symmetric matrices built from the upper triangle or the full matrix; ``Sphere(2)``
        files may give latitude and longitude in degrees instead of ``y1..y3``. The layouts
        are those of :func:`read_manifold_csv`, which also says which one a file had and can
        drop rows with empty cells.

    Raises
    ------
    DataValidationError
        If anything is wrong with the file or its contents: undecodable or binary data,
        malformed CSV, a missing header, missing, unexpected or duplicated columns, too few or
        too many rows, too many bytes, empty or non-numeric cells, NaN or infinity, magnitudes
        above 1e12, a constant covariate, points off the manifold (off the sphere or the
        hyperboloid, matrices that are not positive definite, degenerate landmark
        configurations) or outside ``ball``. All problems found (up to 20 listed) are reported
        together, each with its row (header = row 1, first data row = row 2) and column.
    TypeError, ValueError
        For invalid arguments (not for problems in the data), and ``ValueError`` if
        ``DPCORE_MAX_ROWS`` is set to anything but a positive integer.

    Notes
    -----
    Encodings (UTF-8, UTF-16 or UTF-32 with a BOM, UTF-16 without one; others are rejected
    with the offset, row and column of the first bad byte), delimiters (``,``, ``;``, tab,
    ``|``; decimal commas only where the delimiter is not a comma), blank lines, unnamed
    columns and the limits are those of :func:`dpcore.data.read_table`, described in
    :mod:`dpcore.data.tables`. Header names are matched case-insensitively after stripping
    spaces, so column order is free.

    Accepted points satisfy ``manifold.belongs(y, atol=atol)``; points that would not after
    conversion (coordinates so tiny or so far from the origin that rounding dominates) are
    reported.
    """
    data = read_manifold_csv(source, manifold, task, renormalize=renormalize,
                             max_rows=max_rows, atol=atol, ball=ball, max_bytes=max_bytes)
    return (data.x, data.y) if task == "regression" else data.y


def _check_ball(m, ball):
    try:
        center, radius = ball
    except (TypeError, ValueError) as exc:
        raise TypeError("`ball` must be a pair (center, radius).") from exc
    center = as_float_array(center, "center")
    if center.shape != tuple(m.point_shape):
        raise ValueError(
            f"`center` must have shape {tuple(m.point_shape)} for {m!r}, got {center.shape}."
        )
    return center, check_positive(radius, "radius")


# ------------------------------------------------------------------------------ writing
_FORMULA_START = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")


def neutralize_cell(cell) -> str:
    """A cell made safe to open in a spreadsheet (no formula injection).

    Spreadsheets run a cell that starts with ``=``, ``+``, ``-`` or ``@`` as a formula (and
    some skip a leading tab or carriage return first), so text such as
    ``=HYPERLINK(...)`` or ``+cmd|' /C calc'!A0`` written into a CSV file can execute when
    the file is opened. Such cells get a leading single quote, which spreadsheets display as
    text. Plain numbers (``-0.5``, ``+1e-3``) are left alone: they are not formulas.

    Parameters
    ----------
    cell : object
        The cell value; converted with ``str``.

    Returns
    -------
    str
        ``cell`` unchanged, or prefixed with ``'`` if it could start a formula.
    """
    text = str(cell)
    if text.startswith(_FORMULA_START) and not _PLAIN_NUMBER.fullmatch(text):
        return "'" + text
    return text


def to_csv(manifold, y, x=None, path_or_buf=None):
    """Write points (and optionally covariates) in the format :func:`load_csv` reads.

    Parameters
    ----------
    manifold : Manifold
    y : array-like, shape (n, *point_shape)
        Points. SPD matrices are written as the upper triangle of their symmetric part;
        Kendall preshapes as their landmark coordinates.
    x : array-like, shape (n,), optional
        Covariates; when given the file has the regression format (first column ``x``).
    path_or_buf : str, os.PathLike or file-like, optional
        Where to write (UTF-8, ``\\n`` line endings). Text and binary file objects work.

    Returns
    -------
    str or None
        The CSV text if ``path_or_buf`` is None, otherwise None.

    Notes
    -----
    Numbers are written with ``repr``, the shortest text that reads back as the same float,
    so ``load_csv(to_csv(...))`` reproduces the data exactly (Kendall preshapes up to the
    rounding of re-centring and re-scaling, about 1e-16). Every cell, header names included,
    goes through :func:`neutralize_cell`, so the file is safe to open in a spreadsheet: a
    cell that could start a formula (``=``, ``+``, ``-``, ``@``, tab, carriage return) and is
    not a plain number is prefixed with ``'``. The built-in formats only write numbers and
    fixed column names, which are never changed (``-0.5`` stays a number).
    """
    m = check_manifold(manifold)
    y = as_float_array(y, "y")
    ps = tuple(m.point_shape)
    if y.ndim != len(ps) + 1 or y.shape[1:] != ps:
        raise ValueError(f"`y` must have shape (n, {', '.join(map(str, ps))}), got {y.shape}.")
    n = y.shape[0]
    if not np.all(np.isfinite(y)):
        raise ValueError("`y` contains NaN or infinite values.")
    flat = m.to_csv_rows(y)
    task = "mean"
    if x is not None:
        task = "regression"
        x = as_float_array(x, "x")
        if x.shape != (n,):
            raise ValueError(f"`x` must have shape ({n},), got {x.shape}.")
        if not np.all(np.isfinite(x)):
            raise ValueError("`x` contains NaN or infinite values.")
        flat = np.column_stack([x, flat])
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerow(
        [neutralize_cell(c) for c in expected_columns(m, task)]
    )
    # repr of a finite float never holds a delimiter or a quote, so plain joins (twice as
    # fast as csv.writer) are exact here.
    buf.write("".join(
        ",".join([neutralize_cell(repr(v)) for v in row]) + "\n" for row in flat.tolist()
    ))
    text = buf.getvalue()

    if path_or_buf is None:
        return text
    if isinstance(path_or_buf, (str, os.PathLike)):
        with open(path_or_buf, "w", encoding="utf-8", newline="") as fh:
            fh.write(text)
        return None
    if not hasattr(path_or_buf, "write"):
        raise TypeError(
            f"`path_or_buf` must be a path or a file-like object, got {type(path_or_buf).__name__}."
        )
    binary = isinstance(path_or_buf, (io.RawIOBase, io.BufferedIOBase)) or "b" in str(
        getattr(path_or_buf, "mode", "")
    )
    path_or_buf.write(text.encode("utf-8") if binary else text)
    return None
