"""Data sets of the regression pages (Geodesic regression, Budget split, Linear regression): the
manifold choices, synthetic and example data, uploads (bytes parsed in memory, never written to
disk), and the column mapping of uploaded tables (preview, identifier detection, roles of the
columns, blank rows dropped with a count, rows per person from a group column)."""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from dpcore.data import (
    DEFAULT_NOISE,
    DataValidationError,
    make_regression_data,
    read_manifold_csv,
    response_columns,
    to_csv,
)
from dpcore.data.synthetic import GENERIC_NOISE
from ui import manifolds as M
from ui.caps import upload_max_bytes, upload_max_rows
from ui.manifolds import make_manifold

__all__ = [
    "header_landmarks",
    "landmarks_left_out",
    "landmarks_read_text",
    "PersonRows",
    "UploadRoles",
    "upload_roles",
    "apply_mapping",
    "candidate_columns",
    "ColumnMapping",
    "ColumnProfile",
    "data_csv",
    "default_mapping",
    "MappedData",
    "preview_frame",
    "profile_columns",
    "profile_frame",
    "Dataset",
    "default_noise",
    "EPS_GRID",
    "EXAMPLE_AGES",
    "example_dataset",
    "EXAMPLE_N",
    "EXAMPLE_SEED",
    "expected_header",
    "group_sizes",
    "MANIFOLD_KINDS",
    "MANIFOLD_LABELS",
    "needs_ball",
    "PARAM_KINDS",
    "PARAM_RANGE",
    "parse_upload",
    "SPHERE_NOISE_CHOICES",
    "synthetic_dataset",
]

#: The manifolds of the regression pages: every key of :mod:`ui.manifolds`, in its order.
MANIFOLD_KINDS = M.KEYS


#: Manifolds whose parameter these pages let the user choose. SPD stays SPD(2) here: its
#: figures draw 2 × 2 matrices as ellipses and in the cone.
PARAM_KINDS = ("kendall", "euclidean")


MANIFOLD_LABELS = {kind: M.label(kind) if kind in PARAM_KINDS else M.choice_label(kind)
                   for kind in MANIFOLD_KINDS}


#: Allowed range and default of the manifold parameter (landmarks k, dimension d).
PARAM_RANGE = {kind: M.spec(kind).param_range for kind in PARAM_KINDS}


#: Choices of the sphere's noise variance delta (paper 002 §4.1 and app. E; 0.003, a standard
#: deviation of about 3 degrees, is the dashboard's demonstration default).
SPHERE_NOISE_CHOICES = (0.001, 0.003, 0.01, 0.1)


#: The sphere demonstration's footpoint region (centre, radius in rad): its generator draws the
#: footpoint uniformly within 0.2 rad of the north pole, a fact of the demonstration's design
#: that a lecturer may state as a public bound (``footpoint_radius`` of the release).
SPHERE_DEMO_REGION = ((0.0, 0.0, 1.0), 0.2)


#: Log-scale grid of the budget sliders (1-1.5-2-3-5-7 per decade).
EPS_GRID = tuple(float(f"{m * 10.0**e:.3g}") for e in (-2, -1, 0, 1)
                 for m in (1, 1.5, 2, 3, 5, 7))[:-5]  # 0.01 ... 10


def needs_ball(kind):
    """Whether strict mode needs a public ball ``B_{tau_m}(center)`` (non-compact or κ_l < 0)."""
    return M.spec(kind).needs_ball


def default_noise(kind):
    """Default noise of the synthetic data (variance δ on the sphere, a standard deviation else)."""
    return float(DEFAULT_NOISE.get(type(make_manifold(kind)), GENERIC_NOISE))


@dataclass(frozen=True, eq=False)
class Dataset:
    """Regression data shown on the page.

    Attributes
    ----------
    x : ndarray, shape (n,)
    y : ndarray, shape (n, *point_shape)
    source : {"synthetic", "example", "upload"}
    description : str
    truth : tuple (footpoint, shooting_vector, (low, high)), optional
        The data-generating geodesic of generated data: the point at covariate ``low`` and the
        velocity per unit of ``(x - low) / (high - low)``.
    """

    x: np.ndarray
    y: np.ndarray
    source: str
    description: str
    truth: tuple | None = None
    rows_per_person: int = 1

    @property
    def generated(self):
        """True for synthetic and example data (which may be downloaded)."""
        return self.source != "upload"

    @property
    def n(self):
        return int(self.x.shape[0])

    def truth_points(self, manifold, x):
        """Points of the data-generating geodesic at covariates ``x`` (None if unknown)."""
        if self.truth is None:
            return None
        p, v, (low, high) = self.truth
        t = (np.asarray(x, dtype=float) - low) / (high - low)
        return manifold.geodesic(p, v, t)


def synthetic_dataset(kind, param, n, noise, seed):
    """Synthetic data following the papers' protocols (:func:`dpcore.data.make_regression_data`).

    Parameters
    ----------
    kind, param : manifold setting, see :func:`ui.manifolds.make_manifold`
    n : int
        Sample size.
    noise : float
        Noise level (variance δ on the sphere, a standard deviation elsewhere).
    seed : int

    Returns
    -------
    Dataset
    """
    m = make_manifold(kind, param)
    region = None
    if kind == "sphere":
        center, radius = SPHERE_DEMO_REGION
        region = (np.asarray(center), radius)
    d = make_regression_data(m, int(n), noise=float(noise), rng=int(seed),
                             footpoint_region=region)
    what = "variance δ" if kind == "sphere" else "standard deviation"
    where = (f" The footpoint lies within {region[1]:g} rad of the north pole (the "
             "demonstration's design, public)." if region is not None else "")
    return Dataset(d.x, d.y, "synthetic",
                   f"Synthetic data (paper protocol): n = {int(n)}, noise {what} {noise:g}, "
                   f"seed {int(seed)}; covariate x uniform on [0, 1].{where}",
                   truth=(d.footpoint, d.shooting_vector, (0.0, 1.0)))


#: The bundled example: a covariate in years, so that the covariate range matters.
EXAMPLE_N = 40


EXAMPLE_AGES = (20.0, 80.0)


EXAMPLE_SEED = 20240611


def example_dataset(kind, param):
    """A generated example with the covariate in original units (age 20 to 80 years).

    Made in memory from :func:`dpcore.data.make_regression_data` with a fixed seed; the covariate
    ``t`` on [0, 1] becomes ``age = 20 + 60 t``. Nothing is read from disk.

    Returns
    -------
    Dataset
    """
    m = make_manifold(kind, param)
    d = make_regression_data(m, EXAMPLE_N, rng=EXAMPLE_SEED)
    low, high = EXAMPLE_AGES
    return Dataset(low + (high - low) * d.x, d.y, "example",
                   f"Generated example: {EXAMPLE_N} subjects aged {low:g} to {high:g} years "
                   "(covariate in years), responses scattered about a geodesic.",
                   truth=(d.footpoint, d.shooting_vector, EXAMPLE_AGES))


def upload_columns(data, *, max_bytes=None):
    """The columns of an uploaded file for its column mapping: ``(profiles, covariates)``, the
    :class:`ColumnProfile` of every column and the names offered as the covariate (numeric,
    not identifier-like; ``x`` first when present)."""
    from dpcore.data import scan_table

    if max_bytes is None:
        max_bytes = upload_max_bytes()
    table = scan_table(bytes(data), max_bytes=max_bytes, max_rows=upload_max_rows())
    profiles = profile_columns(table)
    names = candidate_columns(profiles)
    names.sort(key=lambda c: c.strip().lower() != "x")
    return profiles, names


#: Header names of the response columns of any manifold of these pages (coordinates ``y1``…,
#: landmarks ``lx1``/``ly1``…, matrix entries ``s11``/``s1_10``…, latitude and longitude):
#: never a default covariate, whatever the manifold chosen.
_RESPONSE_NAMES = re.compile(r"(?:y\d+|l[xy]\d+|s\d+(?:_\d+)?|lat|latitude|lon|lng|long|"
                             r"longitude)", re.IGNORECASE)
_LANDMARK = re.compile(r"l([xy])(\d+)", re.IGNORECASE)


@dataclass(frozen=True)
class UploadRoles:
    """The roles an uploaded file's columns may take on the Geodesic regression page.

    Attributes
    ----------
    responses : tuple of str
        The columns the reader takes as the responses (:func:`dpcore.data.response_columns`).
    covariates : list of str
        The columns offered as the covariate: numeric, not identifier-like, not responses;
        ``x`` first when present.
    covariate : str or None
        The default covariate: ``x``, else the first offered column whose name is not that of
        a response on some manifold (``y2``, ``lx5``, ``lat``); None when there is none.
    persons : list of str
        The columns that may be the person column (every column but the responses).
    missing : str
        Why there is no default covariate ('' when there is one): which column to add.
    """

    responses: tuple
    covariates: list
    covariate: str | None
    persons: list
    missing: str = ""


def upload_roles(profiles, kind, param):
    """Default roles of an uploaded file's columns for a manifold: responses by the reader's
    rules, never the covariate by default (:class:`UploadRoles`)."""
    names = [p.name for p in profiles]
    responses = response_columns(make_manifold(kind, param), names)
    taken = {r.lower() for r in responses}
    covariates = [c for c in candidate_columns(profiles) if c.lower() not in taken]
    covariates.sort(key=lambda c: c.strip().lower() != "x")
    default = next((c for c in covariates if c.strip().lower() == "x"
                    or not _RESPONSE_NAMES.fullmatch(c.strip())), None)
    persons = [c for c in names if c.lower() not in taken]
    missing = "" if default is not None else _no_covariate_text(profiles, responses, covariates)
    return UploadRoles(tuple(responses), covariates, default, persons, missing)


def _no_covariate_text(profiles, responses, covariates):
    """Why a file has no default covariate, and which column to add (Markdown)."""
    read = (f"its columns {', '.join(responses)} are the responses" if len(responses) > 1 else
            f"its column {responses[0]} is a response" if responses else
            "it has no response column")
    others = [p for p in profiles if p.name not in responses and p.name not in covariates]
    ignored = ""
    if others:
        listed = ", ".join(f"'{p.name}'" for p in others)
        ignored = (f"; {listed} {'is' if len(others) == 1 else 'are'} ignored (text, empty or "
                   "an identifier)")
    text = (f"The file has no covariate column: {read}{ignored}. Add a numeric column holding "
            "the covariate the responses change with (time, age, dose, …), e.g. named 'x', "
            "and upload the file again.")
    if covariates:
        many = len(covariates) > 1
        text += (f" Or choose {', '.join(covariates)} under *Covariate column*: named like "
                 f"{'responses, they are' if many else 'a response, it is'} never the "
                 "default.")
    return text


def header_landmarks(names):
    """The number of landmarks a header names: the largest index ``i`` with both ``lx{i}`` and
    ``ly{i}`` (any case), or None without any such pair."""
    seen = {"x": set(), "y": set()}
    for name in names:
        match = _LANDMARK.fullmatch(str(name).strip())
        if match:
            seen[match.group(1).lower()].add(int(match.group(2)))
    pairs = seen["x"] & seen["y"]
    return max(pairs) if pairs else None


def landmarks_read_text(k):
    """What the page says when it set the number of landmarks from a file's header."""
    return (f"The header names **{k} landmarks** (lx1..ly{k}): *Landmarks k* is set to {k}. "
            "Change it to read fewer.")


def landmarks_left_out(found, k):
    """A warning when a header names ``found`` landmarks (:func:`header_landmarks`), more than
    the ``k`` read (else '')."""
    if found is None or found <= int(k):
        return ""
    return (f"The header names {found} landmarks (lx1..ly{found}) but *Landmarks k* is {k}: "
            f"the columns lx{int(k) + 1}..ly{found} are not read. Set k to {found} to read "
            "them all.")


def _largest_group(data, person, rows, max_bytes):
    """Rows of the largest group of column ``person`` among the spreadsheet rows ``rows``."""
    from dpcore.data import scan_table

    table = scan_table(bytes(data), max_bytes=max_bytes, max_rows=upload_max_rows())
    j = list(table.columns).index(person)
    by_row = dict(zip(table.rows.tolist(), (rec[j].strip() for rec in table.cells),
                      strict=True))
    values = [by_row[int(r)] for r in rows]
    if not values:
        return 1
    _, counts = np.unique(np.array(values, dtype=object).astype(str), return_counts=True)
    return int(counts.max())


def parse_upload(data, kind, param, renormalize=False, *, max_bytes=None, covariate="x",
                 person=None):
    """Parse the bytes of an uploaded CSV into a :class:`Dataset` (validated, in memory only).

    Parameters
    ----------
    data : bytes
        File contents (e.g. ``UploadedFile.getvalue()``). Nothing is written to disk or logged.
    kind, param : manifold setting, see :func:`ui.manifolds.make_manifold`
    renormalize : bool
        Sphere: project every point onto the sphere instead of rejecting points off it.
    max_bytes : int, optional
        Largest file in bytes; by default the dashboard's upload limit
        (:func:`ui.caps.upload_max_bytes`, Streamlit's ``server.maxUploadSize``).
    covariate : str
        The column read as the covariate (the column mapping; default ``x``). Columns that are
        neither it nor the manifold's response columns are ignored and listed.
    person : str, optional
        A person (group) column: the dataset's ``rows_per_person`` is its largest group among
        the rows read.

    Returns
    -------
    Dataset

    Raises
    ------
    dpcore.data.DataValidationError
        With a message naming the row and column of every problem.
    """
    m = make_manifold(kind, param)
    if max_bytes is None:
        max_bytes = upload_max_bytes()
    read = read_manifold_csv(bytes(data), m, "regression", blank="drop",
                             renormalize=bool(renormalize), max_bytes=max_bytes,
                             max_rows=upload_max_rows(), covariate=covariate, others="ignore")
    rows = 1 if person is None else _largest_group(data, person, read.rows, max_bytes)
    return Dataset(read.x, read.y, "upload",
                   f"Uploaded CSV: n = {read.x.shape[0]} rows, covariate '{covariate}'. "
                   f"{read.note}", rows_per_person=rows)


def expected_header(kind, param):
    """The header line an uploaded CSV must have (DESIGN §9)."""
    from dpcore.data import expected_columns

    return ",".join(expected_columns(make_manifold(kind, param), "regression"))


def data_csv(kind, param, dataset):
    """CSV text of a generated data set (the format :func:`parse_upload` reads)."""
    if not dataset.generated:
        raise ValueError("Only generated data can be downloaded.")
    return to_csv(make_manifold(kind, param), dataset.y, dataset.x)


# ------------------------------------------------------------------ column mapping of uploads
#: Header names that mark a row identifier (compared lower-case, spaces and dots as ``_``).
_ID_NAMES = re.compile(r"(?:id|ids|idx|index|row|rows|row_?(?:id|no|nr|num|number|index)|"
                       r"record(?:_?id)?|obs|#|no|nr|unnamed:_?0|key|[a-z0-9_]*_id)")

#: Rows shown in the preview of an uploaded table.
PREVIEW_ROWS = 5


@dataclass(frozen=True)
class ColumnProfile:
    """What the preview says about one column of an uploaded table.

    Attributes
    ----------
    name : str
    kind : {"number", "text", "empty"}
        ``"number"`` when at least half of the non-empty cells are numbers (as
        :attr:`dpcore.data.TextTable.numeric_columns` decides, decimal commas included).
    blanks : int
        Empty cells.
    id_like : str
        Why the column looks like a row identifier (empty if it does not): never offered as a
        default covariate or response.
    """

    name: str
    kind: str
    blanks: int
    id_like: str = ""


@dataclass(frozen=True)
class ColumnMapping:
    """The roles of an uploaded table's columns: one covariate, one or more responses, an
    optional group (person) column; every other column is ignored."""

    covariate: str
    responses: tuple
    group: str | None = None

    @property
    def used(self):
        """The mapped columns, covariate first, then responses, then the group column."""
        return (self.covariate, *self.responses, *((self.group,) if self.group else ()))


class PersonRows:
    """Rows per person of mapped data whose ``groups`` attribute holds each row's person (or
    is None without a person column): shared by the pages' mapped uploads."""

    @property
    def group_sizes(self):
        """Rows per group, largest first (None without a group column)."""
        return None if self.groups is None else group_sizes(self.groups)

    @property
    def rows_per_person(self):
        """The largest number of rows one group contributes (1 without a group column)."""
        sizes = self.group_sizes
        return 1 if sizes is None else int(sizes[0])


@dataclass(frozen=True, eq=False)
class MappedData(PersonRows):
    """Regression data read through a :class:`ColumnMapping`.

    Attributes
    ----------
    x : ndarray, shape (n,)
    y : ndarray, shape (n, d)
    rows : ndarray of int, shape (n,)
        Spreadsheet row numbers (header = row 1) of the rows used.
    dropped : int
        Rows left out because a mapped column was empty there.
    groups : ndarray of str, shape (n,), optional
        The group (person) of each row, when a group column is mapped.
    mapping : ColumnMapping
    """

    x: np.ndarray
    y: np.ndarray
    rows: np.ndarray
    dropped: int
    mapping: ColumnMapping
    groups: np.ndarray | None = None

    @property
    def n(self):
        return int(self.x.shape[0])



def group_sizes(groups):
    """Rows per group of a group (person) column's values, largest first.

    Parameters
    ----------
    groups : array-like of str, shape (n,)
        The group of each row read.

    Returns
    -------
    ndarray of int
        One count per distinct value; its first entry is the rows per person of group
        privacy.
    """
    _, counts = np.unique(np.asarray(groups, dtype=object).astype(str), return_counts=True)
    return np.sort(counts)[::-1]


def _id_reason(name, cells, numeric):
    """Why a column (its header name and non-empty cells, numeric or not) looks like a row
    identifier, or ''."""
    key = re.sub(r"[\s.\-]+", "_", name.strip().lower())
    if _ID_NAMES.fullmatch(key):
        return f"named '{name}'"
    if len(cells) < 2:
        return ""
    if not numeric:
        # Text: a different value in every row is an identifier, not a measurement.
        return "every value is different text" if len(set(cells)) == len(cells) else ""
    try:
        v = np.array(cells, dtype=float)
    except ValueError:  # decimal commas or a few bad cells: not a row counter
        return ""
    if v[0] in (0.0, 1.0) and np.array_equal(v, v[0] + np.arange(v.size)):
        return f"it counts rows ({v[0]:.0f}, {v[1]:.0f}, …, {v[-1]:.0f})"
    return ""


def profile_columns(table):
    """One :class:`ColumnProfile` per column of a :class:`dpcore.data.TextTable`, file order.

    A column looks like a row identifier when its name is one (``id``, ``ID``, ``index``,
    ``row``, ``*_id``, …), when its values count the rows in file order (``0 … n-1`` or
    ``1 … n``), or when it holds text with a different value in every row.
    """
    numeric = set(table.numeric_columns)
    out = []
    for j, name in enumerate(table.columns):
        cells = [rec[j].strip() for rec in table.cells]
        filled = [c for c in cells if c]
        kind = "empty" if not filled else ("number" if name in numeric else "text")
        out.append(ColumnProfile(name, kind, len(cells) - len(filled),
                                 _id_reason(name, filled, kind == "number") if filled
                                 else ""))
    return out


def candidate_columns(profiles):
    """Numeric columns that may be a covariate or a response (identifiers excluded)."""
    return [p.name for p in profiles if p.kind == "number" and not p.id_like]


def default_mapping(profiles, responses=1):
    """Default roles: the first numeric non-identifier column as the covariate and the next
    ``responses`` as responses; no group column. Identifiers are never chosen: with too few
    other numeric columns the covariate is None or the responses are empty, for the user to
    choose.

    Returns
    -------
    ColumnMapping
    """
    names = candidate_columns(profiles)
    return ColumnMapping(names[0] if names else None,
                         tuple(names[1:1 + max(1, int(responses))]))


def profile_frame(profiles):
    """The preview's table of columns: type, empty cells and a note for identifiers."""
    import pandas as pd

    return pd.DataFrame({
        "column": [p.name for p in profiles],
        "type": [p.kind for p in profiles],
        "empty cells": [p.blanks for p in profiles],
        "note": [f"looks like an identifier ({p.id_like}): not a default" if p.id_like else ""
                 for p in profiles],
    })


def preview_frame(table, rows=PREVIEW_ROWS):
    """The first ``rows`` data rows as written in the file (text), indexed by their row
    numbers."""
    import pandas as pd

    return pd.DataFrame(list(table.cells[:rows]), columns=list(table.columns),
                        index=pd.Index(table.rows[:rows], name="row"))


def apply_mapping(table, mapping):
    """Read the mapped columns of a :class:`dpcore.data.TextTable` as regression data.

    Rows with an empty cell in any mapped column are dropped and counted; every other cell of
    the covariate and responses must be a finite number (decimal commas as the file's delimiter
    allows). Unmapped columns are not read.

    Returns
    -------
    MappedData

    Raises
    ------
    DataValidationError
        Naming the row and column of every cell that is not a number, or a mapped column that
        is not in the file; also when no row is left or a column is mapped twice.
    """
    used = [c.lower() for c in mapping.used]
    if len(set(used)) != len(used):
        raise DataValidationError("a column is mapped to two roles; each column has one role "
                                  "(covariate, response or group).")
    kept, dropped = table.keep_filled(mapping.used)
    numbers = kept.to_numbers([mapping.covariate, *mapping.responses])
    groups = kept.text(mapping.group) if mapping.group else None
    return MappedData(x=numbers.values[:, 0], y=numbers.values[:, 1:], rows=numbers.rows,
                      dropped=dropped, mapping=mapping, groups=groups)
