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
A clean file is read by a vectorised reader (pyarrow, which comes with Streamlit) at about the
speed of ``pandas.read_csv``, with the same numbers bit for bit; a file with a problem is read
again row by row, which words every message (:mod:`dpcore.data._csv_cells`). Without pyarrow
every file is read row by row. Files written by :func:`to_csv` are safe to open in a
spreadsheet (see :func:`neutralize_cell`).
"""

from __future__ import annotations

import csv
import io
import os
import re
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
from ..settings import get_limits
from ._csv_cells import _read_cells
from ._csv_layouts import (
    LAYOUTS,
    _check_columns,
    _check_task,
    _layout,
    _shown,
    expected_columns,
)
from ._csv_points import _responses
from ._decoding import _read_source
from .tables import BLANK, HUGE_VALUE

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

# ------------------------------------------------------------------------------ columns
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
    text = _read_source(source, max_bytes, "load_csv")
    read = _read_cells(m, text, task, max_rows, covariate=covariate.strip(), unread=others,
                       mapped=mapped, group=group, blank=blank)
    layout, problems, rows, values, bad = (read.layout, read.problems, read.rows, read.values,
                                           read.bad)
    columns = list(layout.columns)
    n = len(rows)
    # (A clean file has no bad cell: one pass over the flags instead of one per row.)
    ok = ~bad.any(axis=1) if bad.any() else np.ones(n, dtype=bool)
    y = values[:, layout.n_lead:]
    if not ok.all():
        # Rows with a bad cell are already reported; zeros keep NaN and inf out of the
        # geometry.
        y = np.where(ok[:, None], y, 0.0)
    points, kind, on_manifold = _responses(m, layout, y, rows, ok, renormalize=renormalize,
                                           atol=atol, problems=problems)
    points = np.ascontiguousarray(points)  # not a view of the covariate's table
    if not problems and not on_manifold:
        # Safety net for rounding: every returned point must be on the manifold.
        on = np.asarray(m.belongs(points, atol=atol), dtype=bool)
        problems.add_rows(~on, rows, None, lambda i: (
            f"the point in columns {layout.shown} is not on {m!r} within atol={atol:g} "
            "after conversion, because of rounding (its coordinates are too tiny, or too "
            "large relative to their differences). Check the values or rescale them."))

    x = None
    if task == "regression":
        x = values[:, 0].copy()
        good_x = x[~bad[:, 0]] if not ok.all() else x
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
                        columns=tuple(columns), ignored=read.ignored, dropped=read.dropped,
                        groups=read.groups, slots=layout.slots)


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
