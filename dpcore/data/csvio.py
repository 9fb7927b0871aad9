"""Reading and writing manifold-valued data as CSV, with validation that names rows and columns.

File format (one observation per row, header row required; see :func:`expected_columns`):

* regression: column ``x`` (the real covariate), then the response columns;
* Fréchet mean: the response columns only.

Response columns per manifold: ``Sphere(d)`` and ``Hyperbolic(d)`` ``y1..y{d+1}`` (for the
hyperboloid ``y1`` is the time-like coordinate); ``Euclidean(d)`` ``y1..yd``; ``SPD(k)`` the upper
triangle row-major ``s11, s12, ..., s1k, s22, ..., skk`` (``s{i}_{j}`` when ``k >= 10``);
``KendallShape(k)`` raw landmark coordinates ``lx1, ly1, ..., lxk, lyk``. The format is a fact
of each manifold class (:meth:`~dpcore.manifolds.Manifold.csv_columns`,
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

import numpy as np

from .._validation import as_float_array, check_int, check_manifold, check_positive
from ..exceptions import MAX_PROBLEMS, DataValidationError, Problem
from ..settings import get_limits
from ._decoding import _read_text, _sniff_delimiter
from .tables import (
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
    "MAX_PROBLEMS",
    "DataValidationError",
    "Problem",
    "expected_columns",
    "load_csv",
    "neutralize_cell",
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


# ------------------------------------------------------------------------------ reading
def _read_table(m, text, columns, max_rows, problems):
    """Header checks and cell extraction.

    Returns ``(rows, cells, padded, delimiter)``: spreadsheet row numbers of the data rows, their
    cells in the order of ``columns``, the ``(i, j)`` positions filled in for short rows, and the
    delimiter.
    """
    delimiter = _sniff_delimiter(text)
    records = _records(text, delimiter)
    expect = ", ".join(columns)
    header = _first_record(records, f" ({expect})")
    raw, keys, names = _header_names(header, f": {expect}")
    positions = _positions(keys, names, problems)
    missing = [c for c in columns if c not in positions]
    extra = [names[j] for j, k in enumerate(keys) if k and k not in columns]
    if missing:
        hint = ""
        if missing == ["x"]:
            hint = " Regression needs the covariate column 'x'; for a Fréchet mean use task='mean'."
        elif len(positions) == 1 and extra and len(columns) > 1:
            hint = (f" The header has a single column, '{extra[0]}': "
                    "expected comma-separated values (',' is the standard separator; ';', tab "
                    "and '|' are recognised too).")
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

    index = [positions[c][0] for c in columns]
    rows, cells, padded = _collect_rows(records, index, columns, keys, max_rows, problems,
                                        delimiter, "load_csv")
    return rows, cells, padded, delimiter


# ------------------------------------------------------------------------------ geometry
def _points(m, y, rows, ok, *, renormalize, atol, problems):
    """Turn response values (n, c) into points, reporting off-manifold rows (only ``ok`` rows)."""
    if ok.any():
        checked = np.asarray(rows)[ok]
        for check in m.csv_problems(y[ok], atol=atol, renormalize=renormalize):
            problems.add_rows(check.mask, checked, check.column, check.message)
    return m.from_csv_rows(y, renormalize=renormalize)


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
        preshapes (centred, unit norm); SPD responses are symmetric matrices built from the
        upper triangle.

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
    m = check_manifold(manifold)
    task = _check_task(task)
    max_rows = get_limits().max_rows if max_rows is None else check_int(max_rows, "max_rows")
    atol = check_positive(atol, "atol")
    if not isinstance(renormalize, (bool, np.bool_)):
        raise TypeError(f"`renormalize` must be a bool, got {type(renormalize).__name__}.")
    if ball is not None:
        center, radius = _check_ball(m, ball)

    columns = expected_columns(m, task)
    problems = _Collector({c: i for i, c in enumerate(columns)})
    text = _read_text(source, max_bytes, "load_csv")
    rows, cells, padded, delimiter = _read_table(m, text, columns, max_rows, problems)

    n = len(rows)
    need = 2 if task == "regression" else 1
    if n == 0:
        problems.add(None, None, "the file has a header row but no data rows.")
        problems.raise_if_any()
    elif n < need:
        problems.add(None, None, f"the file has {n} data row; {task} needs at least {need}.")

    values, bad = _to_numbers(cells, rows, columns, delimiter, problems, padded)
    ok = ~bad.any(axis=1)
    resp = columns[1:] if task == "regression" else columns
    y = values[:, 1:] if task == "regression" else values
    # Rows with a bad cell are already reported; zeros keep NaN and inf out of the geometry.
    y = np.where(ok[:, None], y, 0.0)
    points = _points(m, y, rows, ok, renormalize=renormalize, atol=atol, problems=problems)
    if not problems:
        # Safety net for rounding: every returned point must be on the manifold.
        on = np.asarray(m.belongs(points, atol=atol), dtype=bool)
        problems.add_rows(~on, rows, None, lambda i: (
            f"the point in columns {_span(resp)} is not on {m!r} within atol={atol:g} after "
            "conversion, because of rounding (its coordinates are too tiny, or too large "
            "relative to their differences). Check the values or rescale them."))

    if task == "regression":
        x = values[:, 0]
        good_x = x[~bad[:, 0]]
        if n >= 2 and good_x.size >= 2 and np.ptp(good_x) == 0:
            problems.add(None, "x", f"every value is {good_x[0]:.6g}; regression needs at least "
                                    "two different covariate values.")

    if ball is not None and not problems:
        with np.errstate(all="ignore"):
            d = np.asarray(m.dist(center, points), dtype=float)
        problems.add_rows(~(d <= radius), rows, None, lambda i: (
            f"the point is at distance {d[i]:.6g} from the centre, outside the assumed ball of "
            f"radius {radius:g}."))

    problems.raise_if_any()
    return (x.copy(), points) if task == "regression" else points


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
