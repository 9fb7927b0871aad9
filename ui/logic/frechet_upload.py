"""Uploads on the Fréchet mean page: how a file writes a point (its layouts), which columns
hold it, an optional person column for group privacy, and the mapped columns read by the
library's reader (:func:`dpcore.data.read_manifold_csv`), in memory only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

import numpy as np

from ui.caps import upload_max_rows

from .regression_data import PersonRows

__all__ = ["MeanUpload", "PointLayout", "PointMapping", "UploadTable", "default_layout",
           "default_point_columns", "incomplete_mapping_text", "mapped_columns",
           "mapping_legend", "person_hint", "person_rows_text", "point_layouts",
           "read_mapped", "recognised_text", "scan_upload", "slot_options"]


#: Names of columns that may say who a row belongs to (a hint on the page; never a default).
_PERSON_NAMES = re.compile(r"(?:[a-z0-9]+_)?(?:person|people|subject|subj|participant|patient|"
                           r"individual|user|respondent|customer|household|animal|rat|mouse|"
                           r"owner)s?(?:_?(?:id|no|nr|code|name))?")


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
        Column names of :func:`dpcore.data.read_manifold_csv` for this layout.
    slot_labels : tuple of str
        What each slot holds, as shown above its column choice.
    """

    key: str
    label: str
    slots: tuple
    slot_labels: tuple


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
        return {"landmarks": PointLayout("landmarks", "Landmark coordinates lx1, ly1, … (raw "
                                         "or preshapes)", own, own)}
    return {"coordinates": PointLayout("coordinates", f"Coordinates {own[0]}…{own[-1]}", own,
                                       own)}


@dataclass(frozen=True)
class PointMapping:
    """The roles of an uploaded file's columns on the Fréchet mean page.

    Attributes
    ----------
    layout : str
        Key of :func:`point_layouts`.
    columns : tuple of str
        The file's column for each slot of the layout, in slot order.
    person : str, optional
        A column naming who each row belongs to (group privacy); every other column is
        ignored.
    """

    layout: str
    columns: tuple
    person: str | None = None

    @property
    def used(self):
        """The mapped columns: the point's, then the person column."""
        return (*self.columns, *((self.person,) if self.person else ()))


@dataclass(frozen=True, eq=False)
class UploadTable:
    """An uploaded file scanned once (:func:`scan_upload`): its cells as text, the column
    profiles and the preview of its first rows, and its bytes for reading the mapped columns
    (all in this session's memory only).

    Attributes
    ----------
    table : dpcore.data.TextTable
    profiles : list of ui.logic.regression_data.ColumnProfile
    preview : pandas.DataFrame
    raw : bytes
        The file's contents.
    max_bytes : int
        The upload limit the file was scanned under.
    """

    table: object
    profiles: list
    preview: object
    raw: bytes
    max_bytes: int

    @property
    def n_rows(self):
        return len(self.table.cells)

    @property
    def columns(self):
        return tuple(self.table.columns)


@dataclass(frozen=True, eq=False)
class MeanUpload(PersonRows):
    """Points read from an uploaded file through a :class:`PointMapping`.

    Attributes
    ----------
    y : ndarray, shape (n, *point_shape)
    rows : ndarray of int, shape (n,)
        Spreadsheet row numbers (header = row 1) of the points.
    layout : str
        How the points were read (:data:`dpcore.data.LAYOUTS`: ``"landmarks"`` becomes
        ``"preshapes"`` when every row already was one).
    mapping : PointMapping
    ignored : tuple of str
        The file's other columns, not read.
    dropped : int
        Rows left out because a mapped cell was empty.
    note : str
        How the file was read, for the user.
    groups : ndarray of str, optional
        Each point's person, when a person column is mapped.
    """

    y: np.ndarray
    rows: np.ndarray
    layout: str
    mapping: PointMapping
    ignored: tuple
    dropped: int
    note: str
    groups: np.ndarray | None = None

    @property
    def n(self):
        return int(self.y.shape[0])


def scan_upload(raw, *, max_bytes):
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
    table = scan_table(raw, max_bytes=max_bytes, max_rows=upload_max_rows())
    return UploadTable(table, profile_columns(table), preview_frame(table), raw, max_bytes)


def _named(layout, names):
    """The file's column named for each slot of ``layout`` (by name, any case), or None."""
    if layout.key == "latlon":
        from dpcore.data import latlon_columns

        pair = latlon_columns(list(names))
        return list(pair) if pair is not None else [None, None]
    keys = {n.strip().lower(): n for n in names}
    return [keys.get(s.lower()) for s in layout.slots]


def default_layout(manifold, profiles):
    """The layout the header names: the one with the most slots whose every column is named
    (latitude and longitude by their usual names), else the first of :func:`point_layouts`."""
    layouts = point_layouts(manifold)
    names = [p.name for p in profiles]
    named = [lay for lay in layouts.values() if all(_named(lay, names))]
    return max(named, key=lambda lay: len(lay.slots)).key if named else next(iter(layouts))


def slot_options(profiles, layout):
    """Columns offered for the point's slots: the numeric ones and any column named as a slot
    (so that its bad cells are reported rather than hidden), in file order."""
    names = {n for n in _named(layout, [p.name for p in profiles]) if n}
    return [p.name for p in profiles if p.kind == "number" or p.name in names]


def default_point_columns(manifold, layout_key, profiles):
    """The default column of each slot of a layout (None where the user must choose).

    A slot takes the column named for it (``y1``; ``lat``/``latitude``; ``s12``) unless that
    column looks like an identifier. Slots left over take the remaining numeric columns in file
    order only when exactly as many remain as are needed (nothing to guess); identifiers are
    never chosen.

    Returns
    -------
    tuple
    """
    from ui.logic.regression_data import candidate_columns

    layout = point_layouts(manifold)[layout_key]
    candidates = candidate_columns(profiles)
    chosen = [c if c in candidates else None for c in _named(layout, candidates)]
    rest = [c for c in candidates if c not in chosen]
    if chosen.count(None) == len(rest):
        fill = iter(rest)
        chosen = [c if c is not None else next(fill) for c in chosen]
    return tuple(chosen)


def person_hint(profiles, exclude=()):
    """Columns whose name suggests a person (``person``, ``subject``, ``patient_id``, …), as a
    hint to choose the person column; never chosen by default."""
    return [p.name for p in profiles if p.name not in exclude
            and _PERSON_NAMES.fullmatch(re.sub(r"[\s.\-]+", "_", p.name.strip().lower()))]


def incomplete_mapping_text(manifold, layout_key, columns, profiles):
    """Why a mapping with unchosen slots cannot be read yet: ``("error", text)`` when the file
    has too few columns for the layout (a missing column), else ``("info", text)`` asking the
    user to choose."""
    layout = point_layouts(manifold)[layout_key]
    missing = [lab for lab, c in zip(layout.slot_labels, columns, strict=True) if c is None]
    options = slot_options(profiles, layout)
    if len(options) < len(layout.slots):
        found = ", ".join(f"'{c}'" for c in options) or "none"
        others = [lay for lay in point_layouts(manifold).values()
                  if lay.key != layout_key and len(lay.slots) <= len(options)]
        hint = "".join(f" Choose *{lay.label}* if the file holds that." for lay in others)
        return "error", (f"Header (row 1): a point written as *{layout.label}* needs "
                         f"{len(layout.slots)} numeric columns ({', '.join(layout.slot_labels)})"
                         f", but the file has {len(options)}: {found}.{hint}")
    return "info", (f"Choose the column of {', '.join(missing)} above: no column is named so, "
                    "and identifier-like columns are never chosen by default.")


def mapping_legend(manifold, mapping):
    """The mapped columns as a sentence (``y1 ← 'east'``), or '' when every column has the
    reader's own name."""
    layout = point_layouts(manifold)[mapping.layout]
    pairs = list(zip(layout.slot_labels, layout.slots, mapping.columns, strict=True))
    if all(c.strip().lower() == s.lower() for _, s, c in pairs):
        return ""
    return "Point columns: " + ", ".join(f"{lab} ← '{c}'" for lab, _, c in pairs) + "."


def mapped_columns(manifold, mapping):
    """The ``columns`` argument of :func:`dpcore.data.read_manifold_csv` for ``mapping``: the
    reader's name of each slot -> the file's column."""
    layout = point_layouts(manifold)[mapping.layout]
    return dict(zip(layout.slots, mapping.columns, strict=True))


def read_mapped(upload, manifold, mapping):
    """Read the mapped columns of a scanned upload as points: the library's reader and checks
    with the mapping, :func:`dpcore.data.read_manifold_csv` (``columns=``, ``group=``), in
    memory.

    Rows with an empty cell in a mapped column (a point column or the person column) are left
    out and counted; every other cell of the point columns must be a finite number, and each
    point must lie on ``manifold`` (latitudes and longitudes in range, matrices symmetric
    positive definite, …). Unmapped columns are not read.

    Parameters
    ----------
    upload : UploadTable
    manifold : dpcore.manifolds.Manifold
    mapping : PointMapping

    Returns
    -------
    MeanUpload

    Raises
    ------
    DataValidationError
        Naming the row and the file's column of every problem; also for a column chosen
        twice, a column not in the file, or no row left.
    """
    from dpcore.data import DataValidationError, read_manifold_csv

    layout = point_layouts(manifold)[mapping.layout]
    if len(mapping.columns) != len(layout.slots) or None in mapping.columns:
        raise DataValidationError(f"a point written as {layout.label} needs one column for "
                                  f"each of {', '.join(layout.slot_labels)}.", row=1)
    used = [c.strip().lower() for c in mapping.used]
    for j, name in enumerate(used):
        if name in used[:j]:
            roles = [lab for lab, c in zip((*layout.slot_labels, "person"), mapping.used,
                                           strict=False) if c.strip().lower() == name]
            raise DataValidationError(f"the column is chosen for {' and '.join(roles)}; each "
                                      "column has one role.", row=1, column=mapping.used[j])
    read = read_manifold_csv(upload.raw, manifold, "mean", blank="drop",
                             max_bytes=upload.max_bytes, max_rows=upload_max_rows(),
                             columns=mapped_columns(manifold, mapping), group=mapping.person)
    # The page lists the ignored columns next to the mapping; the note says how it read.
    return MeanUpload(y=read.y, rows=read.rows, layout=read.layout, mapping=mapping,
                      ignored=read.ignored, dropped=read.dropped,
                      note=replace(read, ignored=()).note, groups=read.groups)


def person_rows_text(k, person, sizes):
    """What a person column does to the guarantee, for the page (Markdown)."""
    return (f"**Rows per person: {k}**, the largest group of column '{person}' "
            f"({sizes.size:,} people; median {np.median(sizes):g} rows). The guarantee per "
            f"person is {k} × ε (group privacy); the cost, the ledger entry and the sidebar "
            "count per person on this page.")


def recognised_text(manifold, layout_key, columns, profiles):
    """How the header was recognised for ``layout_key`` (the default ``columns`` of its
    slots), in one sentence for the page."""
    layout = point_layouts(manifold)[layout_key]
    named = _named(layout, [p.name for p in profiles])
    found = ", ".join(f"'{c}'" for c in columns if c is not None)
    if None not in columns and list(columns) == named:
        return (f"Recognised from the header: {layout.label.lower()}, in the columns "
                f"{found}.")
    if None not in columns:
        return (f"No column is named {', '.join(layout.slots)}: the numeric columns {found} "
                "(all the file has besides identifiers) are taken in file order. Check them.")
    return (f"The header does not name the columns of {', '.join(layout.slot_labels)}: choose "
            "them below.")
