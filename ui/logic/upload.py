"""Uploads on every page that reads a file: the roles of its columns and the data they hold.

One pure module behind the one upload-and-mapping widget (:func:`ui.upload.upload_and_map`,
:func:`ui.upload.map_file`) of the Fréchet mean, Linear regression and Geodesic regression
pages. No Streamlit here: a page says what it reads (:class:`UploadTarget`), the file is
scanned once (:func:`scan_upload`), the roles get defaults from its header
(:func:`default_roles`), the user may change them, and :func:`read_mapped` reads the mapped
columns with the library's reader (:func:`dpcore.data.read_manifold_csv`: ``columns=``,
``covariate=``, ``group=``), in memory only. Roles of a file's columns:

* an optional **covariate** (regression pages): a numeric column; by default one that no point
  layout uses (``t``, ``time``, ``x``, ``age``, ``dose``, … first, else the first numeric
  column no layout names, else none). A response column is never the default covariate.
* the **point (response) columns**, by layout (:func:`layouts_for`): S² coordinates
  ``y1..y3`` or latitude and longitude in degrees; SPD(k) upper triangle or full matrix (1- or
  0-based: ``s11, s12, s22`` or ``s00, s01, s11``); Kendall landmarks ``lx1, ly1, …`` or
  ``x1, y1, …`` (k from the header); Euclidean coordinates, any number (d = those the header
  names ``y1..yd``, else the page's default count).
* an optional **person** column (group privacy): never a default (:func:`person_hint`).

Every other column is ignored and listed; identifier-like columns (``id``, row counters,
distinct text) are never chosen by default. Problems are :class:`dpcore.data.DataValidationError`
naming the row and the file's column; what the page says is :mod:`ui.logic.upload_text`,
re-exported here. A regression page's pure part (:func:`ui.upload.upload_and_map` adds the
preview and a widget per role)::

    target = UploadTarget("kendall", covariate=True)           # k from the header
    upload = scan_upload(raw, max_bytes=upload_max_bytes())
    mapping = default_roles(target, upload.profiles).mapping   # layout, columns, covariate
    manifold = manifold_of(target, mapping.layout, len(mapping.columns))   # KendallShape(8)
    read = read_mapped(upload, manifold, mapping)              # .x, .y, .groups, .rows
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field, replace

import numpy as np

from ui.caps import upload_max_rows

from .regression_data import PersonRows
from .upload_text import (
    covariate_text,
    incomplete_mapping_text,
    mapping_legend,
    no_covariate_text,
    param_left_out,
    param_note,
    param_read_text,
    person_hint,
    person_rows_text,
    recognised_text,
    responses_text,
    user_message,
)

__all__ = ["covariate_choices", "covariate_options", "covariate_text", "default_covariate",
           "default_layout", "default_point_columns", "default_roles", "header_param",
           "incomplete_mapping_text", "layouts_for", "manifold_of", "mapped_columns",
           "MappedUpload", "mapping_legend", "mapping_param", "MeanUpload", "no_covariate_text",
           "param_left_out", "param_note", "param_read_text", "person_hint", "person_rows_text",
           "point_layouts", "PointLayout", "PointMapping", "read_mapped", "recognised_text",
           "responses_text", "Roles", "scan_upload", "slot_options", "UploadTable",
           "UploadTarget", "user_message"]


#: Names of a covariate, first choice of the default (compared as :func:`_key` makes them).
_COVARIATE_NAMES = ("t", "time", "x", "age", "dose", "year", "years", "day", "days", "week",
                    "month", "hour", "hours", "session_no", "visit")
#: Names any point layout of any manifold uses (never a default covariate).
_POINT_NAMES = re.compile(r"(?:y\d+|l?[xy]\d+|s\d+(?:_\d+)?|lat|latitude|lon|lng|long|"
                          r"longitude)", re.IGNORECASE)
_SPD_SLOT = re.compile(r"s(\d+)_(\d+)|s(\d)(\d)")


def _key(name):
    """A header name compared: lower case, a trailing unit ``(years)`` / ``[mmHg]`` dropped,
    spaces, dots and dashes as ``_``."""
    text = re.sub(r"\s*[(\[][^)\]]*[)\]]\s*$", "", str(name).strip().lower())
    return re.sub(r"[\s.\-]+", "_", text).strip("_")


@dataclass(frozen=True)
class UploadTarget:
    """What a page reads from a file.

    Attributes
    ----------
    kind : str
        A manifold key of :mod:`ui.manifolds` (``"sphere"``, ``"spd"``, ``"kendall"``,
        ``"euclidean"``).
    param : int, optional
        The page's manifold parameter (SPD k, landmarks k, dimension d); None: the kind's
        default.
    covariate : bool
        Whether a covariate column is read (regression pages).
    infer_param : bool
        Whether a header naming another parameter wins (``lx1..ly8``: 8 landmarks; ``y1..y3``:
        d = 3; all of ``s11..s33``: SPD(3)). False keeps ``param`` (a page whose manifold is
        set elsewhere).
    responses : int
        Euclidean: the response columns chosen by default when the header names no
        ``y1..yd``.
    max_responses : int, optional
        Euclidean: most response columns.
    renormalize : bool
        S²: project points off the sphere onto it instead of reporting them.
    covariate_ids : bool
        Whether identifier-like columns are offered as the covariate (marked; never the
        default). Geodesic regression offers neither them nor the point's columns.
    """

    kind: str
    param: int | None = None
    covariate: bool = False
    infer_param: bool = True
    responses: int = 1
    max_responses: int | None = None
    renormalize: bool = False
    covariate_ids: bool = True


@dataclass(frozen=True)
class PointLayout:
    """One way a file may write a point: the columns the reader knows (``slots``, in the
    reader's order) and how the page names them.

    Attributes
    ----------
    key : str
        A layout of :data:`dpcore.data.LAYOUTS` (``"landmarks"`` also covers preshapes).
    label : str
        The layout as the page offers it.
    slots : tuple of str
        Column names of :func:`dpcore.data.read_manifold_csv` for this layout (for a free
        layout, those of the default dimension).
    slot_labels : tuple of str
        What each slot holds, as shown above its column choice.
    free : bool
        Any number of columns (Euclidean coordinates: d is the number chosen).
    """

    key: str
    label: str
    slots: tuple
    slot_labels: tuple
    free: bool = False


def point_layouts(manifold):
    """The layouts an uploaded file may use for ``manifold``, in the order offered.

    S²: coordinates ``y1, y2, y3`` or latitude and longitude in degrees; SPD(k): the upper
    triangle or the full matrix, row by row; Kendall shapes: landmark coordinates (raw or
    preshapes); any other manifold: its coordinates
    (:meth:`~dpcore.manifolds.Manifold.csv_columns`).

    Returns
    -------
    dict
        Layout key -> :class:`PointLayout`.
    """
    from dpcore.manifolds import SPD, KendallShape, Sphere

    own = tuple(manifold.csv_columns())
    if isinstance(manifold, Sphere) and manifold.dim == 2:
        return {"coordinates": PointLayout("coordinates", "Coordinates y1, y2, y3 (unit "
                                           "vectors)", own, own),
                "latlon": PointLayout("latlon", "Latitude and longitude in degrees",
                                      ("lat", "lon"), ("latitude (°)", "longitude (°)"))}
    if isinstance(manifold, SPD) and manifold.k >= 2:
        k = manifold.k
        sep = "_" if k >= 10 else ""
        full = tuple(f"s{i}{sep}{j}" for i in range(1, k + 1) for j in range(1, k + 1))
        return {"spd_upper": PointLayout("spd_upper", f"Upper triangle, row by row "
                                         f"({len(own)} entries)", own, own),
                "spd_full": PointLayout("spd_full", f"Full matrix, row by row ({k * k} "
                                        "entries)", full, full)}
    if isinstance(manifold, KendallShape):
        k = manifold.k_landmarks
        return {"landmarks": PointLayout("landmarks", f"Landmark coordinates lx1, ly1, … ({k} "
                                         "landmarks, raw or preshapes)", own, own)}
    return {"coordinates": PointLayout("coordinates", f"Coordinates {own[0]}…{own[-1]}", own,
                                       own)}


def layouts_for(target, manifold):
    """:func:`point_layouts` of a page's target: Euclidean coordinates are free (any number of
    columns, d the number chosen)."""
    layouts = point_layouts(manifold)
    if target.kind == "euclidean":
        lay = layouts["coordinates"]
        return {"coordinates": replace(lay, label="Coordinates y1, …, yd (one column per "
                                                  "dimension)", free=True)}
    return layouts


def mapping_param(target, layout_key, n_columns):
    """The manifold parameter a mapping's columns imply (Euclidean d = the columns chosen;
    Kendall k = half of them; SPD k from the entries); the target's otherwise."""
    if target.kind == "euclidean":
        return n_columns
    if target.kind == "kendall":
        return n_columns // 2
    if target.kind == "spd":
        sizes = {k * k if layout_key == "spd_full" else k * (k + 1) // 2: k for k in range(2, 11)}
        return sizes.get(n_columns, target.param)
    return target.param


def manifold_of(target, layout_key, n_columns):
    """The manifold a mapping reads: the target's, with the parameter its columns imply
    (:func:`mapping_param`)."""
    return _build(target.kind, mapping_param(target, layout_key, n_columns))


def _build(kind, param):
    """The manifold ``kind`` with ``param`` (None: the kind's default), beyond the range the
    pages offer when a file needs it (a header naming 7 coordinates)."""
    from ui import manifolds as M

    spec = M.spec(kind)
    return spec.build(spec.default_param if param is None else int(param))


@dataclass(frozen=True)
class PointMapping:
    """The roles of an uploaded file's columns.

    Attributes
    ----------
    layout : str
        Key of :func:`point_layouts`.
    columns : tuple of str
        The file's column for each slot of the layout, in slot order (the responses).
    person : str, optional
        A column naming who each row belongs to (group privacy).
    covariate : str, optional
        The covariate column (regression pages). Every other column is ignored.
    """

    layout: str
    columns: tuple
    person: str | None = None
    covariate: str | None = None

    @property
    def used(self):
        """The mapped columns: the covariate, the point's, then the person column."""
        return (*((self.covariate,) if self.covariate else ()), *self.columns,
                *((self.person,) if self.person else ()))


@dataclass(frozen=True, eq=False)
class UploadTable:
    """An uploaded file scanned once (:func:`scan_upload`), in this session's memory only:
    ``table`` (:class:`dpcore.data.TextTable`, cells as text), ``profiles`` (one
    :class:`ui.logic.regression_data.ColumnProfile` per column), ``preview`` (its first rows,
    a DataFrame), ``raw`` (the bytes, to read the mapped columns) and ``max_bytes`` (the
    upload limit it was scanned under)."""

    table: object
    profiles: list
    preview: object
    raw: bytes
    max_bytes: int

    n_rows = property(lambda self: len(self.table.cells))

    @property
    def digest(self):
        """The file's SHA-256 (hex): what names it in this session's stores."""
        return hashlib.sha256(self.raw).hexdigest()

    columns = property(lambda self: tuple(self.table.columns))


@dataclass(frozen=True, eq=False)
class MappedUpload(PersonRows):
    """Data read from an uploaded file through a :class:`PointMapping`.

    Attributes
    ----------
    y : ndarray, shape (n, *point_shape)
    rows : ndarray of int, shape (n,)
        Spreadsheet row numbers (header = row 1) of the points.
    layout : str
        How the points were read (:data:`dpcore.data.LAYOUTS`: ``"landmarks"`` becomes
        ``"preshapes"`` when every row already was one).
    mapping : PointMapping
    ignored, dropped, note
        The file's other columns (not read), the rows left out for an empty mapped cell, and
        how the file was read (for the user).
    groups : ndarray of str, optional
        Each point's person, when a person column is mapped.
    x : ndarray, shape (n,), optional
        The covariate, when one is mapped.
    manifold : dpcore.manifolds.Manifold
        The manifold read (its parameter from the columns: d, k).
    digest : str
        The file's SHA-256 (hex).
    """

    y: np.ndarray
    rows: np.ndarray
    layout: str
    mapping: PointMapping
    ignored: tuple
    dropped: int
    note: str
    groups: np.ndarray | None = None
    x: np.ndarray | None = None
    manifold: object = field(default=None, repr=False)
    digest: str = ""

    @property
    def n(self):
        return int(self.y.shape[0])


#: The Fréchet mean page's name of a mapped upload (no covariate).
MeanUpload = MappedUpload


def scan_upload(raw, *, max_bytes, max_columns=None):
    """Scan an uploaded file once: structure, cells as text, column profiles (identifiers
    flagged) and a preview (:func:`dpcore.data.scan_table`,
    :func:`ui.logic.regression_data.profile_columns`). In memory only.

    Raises
    ------
    DataValidationError
        For a file that is not a table (encoding, header, ragged rows, limits), by row and
        column.
    """
    from dpcore.data import scan_table
    from ui.logic.regression_data import preview_frame, profile_columns

    raw = bytes(raw)
    table = scan_table(raw, max_bytes=max_bytes, max_rows=upload_max_rows(),
                       max_columns=max_columns)
    return UploadTable(table, profile_columns(table), preview_frame(table), raw, max_bytes)


# ------------------------------------------------------------------ names in the header
def _slot_names(layout, slot, zero_based):
    """The header names (lower case) that hold ``slot`` of ``layout``."""
    if layout.key in ("spd_upper", "spd_full"):
        m = _SPD_SLOT.fullmatch(slot)
        i, j = (int(g) for g in (m.groups()[:2] if m.group(1) else m.groups()[2:]))
        if zero_based:
            i, j = i - 1, j - 1
        return (f"s{i}{j}", f"s{i}_{j}")
    if layout.key == "landmarks":
        return (slot, slot[1:])  # lx3 or x3
    return (slot.lower(),)


def _zero_based(keys):
    return "s00" in keys or "s0_0" in keys


def _named(layout, names):
    """The file's column named for each slot of ``layout`` (by name, any case), or None."""
    if layout.key == "latlon":
        from dpcore.data import latlon_columns

        pair = latlon_columns(list(names))
        return list(pair) if pair is not None else [None, None]
    keys = {}
    for n in names:
        keys.setdefault(n.strip().lower(), n)
    zero = _zero_based(keys)
    return [next((keys[a] for a in _slot_names(layout, s, zero) if a in keys), None)
            for s in layout.slots]


def header_param(kind, names):
    """The manifold parameter a header names, or None: Kendall, the landmarks ``lx1..lyk``
    (or ``x1..yk``) present in full; Euclidean, the coordinates ``y1..yd``; SPD, the largest
    k whose upper triangle (1- or 0-based) is named."""
    keys = {str(n).strip().lower() for n in names}

    def run(has):
        n = 0
        while has(n + 1):
            n += 1
        return n or None

    if kind == "kendall":
        return run(lambda i: {f"lx{i}", f"ly{i}"} <= keys or {f"x{i}", f"y{i}"} <= keys)
    if kind == "euclidean":
        return run(lambda i: f"y{i}" in keys)
    if kind == "spd":
        from dpcore.manifolds import SPD

        zero = _zero_based(keys)
        for k in (3, 2):
            lay = point_layouts(SPD(k))["spd_upper"]
            if all(any(a in keys for a in _slot_names(lay, s, zero)) for s in lay.slots):
                return k
    return None


def default_layout(manifold, profiles):
    """The layout the header names: the one with the most slots whose every column is named
    (latitude and longitude by their usual names), else the first of :func:`point_layouts`."""
    layouts = point_layouts(manifold)
    names = [p.name for p in profiles]
    named = [lay for lay in layouts.values() if all(_named(lay, names))]
    return max(named, key=lambda lay: len(lay.slots)).key if named else next(iter(layouts))


def slot_options(profiles, layout, exclude=()):
    """Columns offered for the point's slots: the numeric ones and any column named as a slot
    (so that its bad cells are reported rather than hidden), in file order; not ``exclude``
    (the covariate)."""
    names = {n for n in _named(layout, [p.name for p in profiles]) if n}
    return [p.name for p in profiles if (p.kind == "number" or p.name in names)
            and p.name not in exclude]


def covariate_options(profiles):
    """Columns offered as the covariate: every numeric one, in file order (identifiers too:
    the page marks them, and they are never the default)."""
    return [p.name for p in profiles if p.kind == "number"]


def covariate_choices(target, manifold, profiles):
    """The covariate's options for ``target`` (:func:`covariate_options`): with a fixed point
    layout (S², SPD, Kendall) never a column the header names as the point's (``lat``,
    ``y2``, ``s01``, ``lx3``, landmarks beyond k too); identifiers only with
    ``target.covariate_ids``. A free layout (Euclidean) offers every numeric column."""
    names = [p.name for p in profiles]
    layouts = layouts_for(target, manifold)
    shapes = [manifold]
    if target.kind == "kendall" and (header_param("kendall", names) or 0) >= 3:
        shapes.append(_build("kendall", header_param("kendall", names)))
    points = set() if any(lay.free for lay in layouts.values()) else {
        c for m in shapes for lay in point_layouts(m).values() for c in _named(lay, names) if c}
    ids = set() if target.covariate_ids else {p.name for p in profiles if p.id_like}
    return [c for c in covariate_options(profiles) if c not in points and c not in ids]


def default_covariate(manifold, profiles, taken=()):
    """The default covariate: a numeric, non-identifier column that no point layout of
    ``manifold`` names, no point-like name (``y2``, ``lx5``, ``lat``, ``s12``) and not in
    ``taken``; one named like a covariate (``t``, ``time``, ``x``, ``age``, …) first, else the
    first such column in file order; None when there is none."""
    from ui.logic.regression_data import candidate_columns

    names = [p.name for p in profiles]
    used = {c for lay in point_layouts(manifold).values() for c in _named(lay, names) if c}
    free = [c for c in candidate_columns(profiles) if c not in used and c not in taken
            and not _POINT_NAMES.fullmatch(c.strip())]
    for wanted in _COVARIATE_NAMES:
        hit = next((c for c in free if _key(c) == wanted), None)
        if hit is not None:
            return hit
    return free[0] if free else None


def default_point_columns(manifold, layout_key, profiles, exclude=(), responses=None):
    """The default column of each slot of a layout (None where the user must choose).

    A slot takes the column named for it (``y1``, ``lat``, ``s12``/``s01``, ``lx3``/``x3``)
    unless empty or in ``exclude`` (the covariate), whatever its cells (a bad one is reported
    by row and column). Slots left over take the remaining numeric columns in file order only
    when exactly as many remain as needed (nothing to guess); identifiers are never chosen.
    ``responses`` (a free layout): the columns the header names ``y1..yd``, else the first
    ``responses`` remaining ones.

    Returns
    -------
    tuple
    """
    from ui.logic.regression_data import candidate_columns

    layout = point_layouts(manifold)[layout_key]
    candidates = [c for c in candidate_columns(profiles) if c not in exclude]
    if responses is not None:
        keys = {c.strip().lower(): c for c in candidates}
        d = header_param("euclidean", keys) or 0
        named = [keys[f"y{i}"] for i in range(1, d + 1)]
        return tuple(named or candidates[:max(1, int(responses))])
    chosen = _named(layout, [p.name for p in profiles if p.kind != "empty"
                             and p.name not in exclude])
    rest = [c for c in candidates if c not in chosen]
    if chosen.count(None) == len(rest):
        fill = iter(rest)
        chosen = [c if c is not None else next(fill) for c in chosen]
    return tuple(chosen)


@dataclass(frozen=True)
class Roles:
    """Default roles of a file for a target (:func:`default_roles`): the manifold (parameter
    from the header when the target lets it), its layouts, the default layout and mapping
    (point columns may be None: for the user to choose), and why the parameter is what it is
    ('' when it is the page's)."""

    manifold: object
    layouts: dict
    mapping: PointMapping
    param_note: str = ""


def default_roles(target, profiles, layout=None, covariate=""):
    """The default roles of a scanned file's columns for ``target`` (:class:`Roles`).

    ``layout`` / ``covariate``: the user's choice when made (``""`` for the covariate: not
    made), the defaults of the other roles following it."""
    from ui import manifolds as M

    names = [p.name for p in profiles]
    param, note = target.param, ""
    found = header_param(target.kind, names) if target.infer_param else None
    spec = M.spec(target.kind)
    if found is not None and spec.param_range and target.kind != "euclidean":
        lo, hi, _ = spec.param_range
        if lo <= found <= hi and found != (param or spec.default_param):
            param, note = found, param_note(target.kind, found)
    manifold = _build(target.kind, param)
    layouts = layouts_for(target, manifold)
    layout = layout if layout in layouts else (
        next(iter(layouts)) if target.kind == "euclidean" else default_layout(manifold, profiles))
    if covariate == "":
        covariate = default_covariate(manifold, profiles) if target.covariate else None
    exclude = (covariate,) if covariate else ()
    free = layouts[layout].free
    columns = default_point_columns(manifold, layout, profiles, exclude=exclude,
                                    responses=target.responses if free else None)
    if free and target.max_responses:
        columns = columns[:target.max_responses]
    return Roles(manifold, layouts, PointMapping(layout, columns, None, covariate), note)


def mapped_columns(manifold, mapping):
    """The ``columns`` argument of :func:`dpcore.data.read_manifold_csv` for ``mapping``: the
    reader's name of each slot -> the file's column."""
    layout = point_layouts(manifold)[mapping.layout]
    return dict(zip(layout.slots, mapping.columns, strict=True))


def read_mapped(upload, manifold, mapping, *, renormalize=False):
    """Read the mapped columns of a scanned upload: the library's reader and checks with the
    mapping, :func:`dpcore.data.read_manifold_csv` (``columns=``, ``covariate=`` when the
    mapping has one, ``group=``), in memory.

    Rows with an empty cell in a mapped column (the covariate, a point column or the person
    column) are left out and counted; every other cell of the covariate and point columns must
    be a finite number, and each point must lie on ``manifold`` (latitudes and longitudes in
    range, matrices symmetric positive definite, …). Unmapped columns are not read.

    Parameters
    ----------
    upload : UploadTable
    manifold : dpcore.manifolds.Manifold
        With as many coordinates as the mapping has columns (:func:`manifold_of`).
    mapping : PointMapping
    renormalize : bool
        S²: project points off the sphere onto it (else they are reported).

    Returns
    -------
    MappedUpload

    Raises
    ------
    DataValidationError
        Naming the row and the file's column of every problem; also for a column chosen
        twice, a column not in the file, a constant covariate, or no row left.
    """
    from dpcore.data import DataValidationError, read_manifold_csv

    layout = point_layouts(manifold)[mapping.layout]
    if len(mapping.columns) != len(layout.slots) or None in mapping.columns:
        raise DataValidationError(f"a point written as {layout.label} needs one column for "
                                  f"each of {', '.join(layout.slot_labels)}.", row=1)
    labels = (*(("covariate",) if mapping.covariate else ()), *layout.slot_labels, "person")
    used = [c.strip().lower() for c in mapping.used]
    for j, name in enumerate(used):
        if name in used[:j]:
            roles = [lab for lab, c in zip(labels, mapping.used, strict=False)
                     if c.strip().lower() == name]
            raise DataValidationError(f"the column is chosen for {' and '.join(roles)}; each "
                                      "column has one role.", row=1, column=mapping.used[j])
    task = "regression" if mapping.covariate else "mean"
    read = read_manifold_csv(upload.raw, manifold, task, blank="drop", renormalize=renormalize,
                             max_bytes=upload.max_bytes, max_rows=upload_max_rows(),
                             columns=mapped_columns(manifold, mapping),
                             covariate=mapping.covariate or "x", group=mapping.person)
    # The page lists the ignored columns next to the mapping; the note says how it read.
    return MappedUpload(y=read.y, rows=read.rows, layout=read.layout, mapping=mapping,
                        ignored=read.ignored, dropped=read.dropped,
                        note=replace(read, ignored=()).note, groups=read.groups, x=read.x,
                        manifold=manifold, digest=upload.digest)
