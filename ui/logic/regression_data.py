"""Data sets of the regression pages (Geodesic regression, Budget split, Linear regression): the
manifold choices, synthetic and example data, uploads (bytes read in memory, never written to
disk, by the shared reader :mod:`ui.logic.upload`), and the column profiles of uploaded tables
(preview, identifier detection, blank rows dropped with a count, rows per person from a group
column)."""

from __future__ import annotations

import re
from dataclasses import dataclass

import numpy as np

from dpcore.data import (
    DEFAULT_NOISE,
    DataValidationError,
    make_regression_data,
    read_manifold_csv,
    to_csv,
)
from dpcore.data.synthetic import GENERIC_NOISE
from ui import manifolds as M
from ui.caps import upload_max_bytes, upload_max_rows
from ui.manifolds import make_manifold

__all__ = [
    "PersonRows",
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
    "group_sizes",
    "MANIFOLD_KINDS",
    "MANIFOLD_LABELS",
    "needs_ball",
    "PARAM_KINDS",
    "PARAM_RANGE",
    "parse_upload",
    "upload_dataset",
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


def upload_dataset(read):
    """The :class:`Dataset` of a file read through the shared upload widget
    (:class:`ui.logic.upload.MappedUpload`, with its covariate): its rows per person from the
    person column, when one is mapped."""
    person = read.mapping.person
    who = (f"; {read.rows_per_person} rows per person (column '{person}')" if person else "")
    return Dataset(read.x, read.y, "upload", f"Uploaded CSV: n = {read.n} rows, covariate "
                   f"'{read.mapping.covariate}'{who}.", rows_per_person=read.rows_per_person)


def parse_upload(data, kind, param, renormalize=False, *, max_bytes=None, covariate="x",
                 person=None):
    """Read an uploaded CSV's bytes into a :class:`Dataset` (validated, in memory only) by the
    shared upload logic's rules (:mod:`ui.logic.upload`: the point's columns by their header
    names) and the library's reader with that column mapping
    (:func:`dpcore.data.read_manifold_csv`: ``columns=``, ``covariate=``, ``group=``); every
    other column is ignored (listed in the description). The pages map the columns with the
    widget (:func:`ui.upload.map_file`); this is the same reading without it.

    Parameters
    ----------
    data : bytes
        File contents. Nothing is written to disk or logged.
    kind, param : manifold setting, see :func:`ui.manifolds.make_manifold`
    renormalize : bool
        Sphere: project every point onto the sphere instead of rejecting points off it.
    max_bytes : int, optional
        Largest file in bytes; by default the dashboard's upload limit
        (:func:`ui.caps.upload_max_bytes`).

    Raises
    ------
    dpcore.data.DataValidationError
        Naming the row and column of every problem (a point column given as the covariate
        too).
    """
    from . import upload as U

    max_bytes = max_bytes or upload_max_bytes()
    table = U.scan_upload(data, max_bytes=max_bytes)
    target = U.UploadTarget(kind, param, covariate=True, infer_param=False, responses=param or 1)
    roles = U.default_roles(target, table.profiles, covariate=covariate)
    layout = roles.layouts[roles.mapping.layout]
    named = U._named(layout, [p.name for p in table.profiles])  # by name, identifiers too
    columns = (roles.mapping.columns if layout.free else tuple(named) if all(named) else
               U.default_point_columns(roles.manifold, layout.key, table.profiles))
    if covariate in columns:
        raise DataValidationError(f"the column holds the point ({layout.label}) and cannot be "
                                  "the covariate too.", row=1, column=covariate)
    manifold = U.manifold_of(target, layout.key, len(columns))
    if None in columns:
        raise DataValidationError(f"a point written as {layout.label} needs one column for "
                                  f"each of {', '.join(layout.slot_labels)}.", row=1)
    read = read_manifold_csv(bytes(data), manifold, "regression", blank="drop",
                             renormalize=bool(renormalize), max_bytes=max_bytes,
                             max_rows=upload_max_rows(), covariate=covariate, group=person,
                             columns=U.mapped_columns(manifold, U.PointMapping(layout.key,
                                                                               columns)))
    rows = 1 if person is None else int(group_sizes(read.groups)[0])
    who = f"; {rows} rows per person (column '{person}')" if person else ""
    return Dataset(read.x, read.y, "upload", f"Uploaded CSV: n = {read.x.shape[0]} rows, "
                   f"covariate '{covariate}'{who}. {read.note}", rows_per_person=rows)


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
