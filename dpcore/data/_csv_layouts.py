"""The columns of the manifold CSV formats: which layout a header has, column mappings, and the
checks of a header (missing, unexpected, duplicated columns; one column in two roles).

Part of :mod:`dpcore.data.csvio` (see there for the formats); the header checks are shared by
its row-by-row reader and its vectorised one (:mod:`dpcore.data._csv_fast`), so both word a
header's problems alike.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from .._validation import check_manifold
from ..exceptions import DataValidationError
from ._csv_formats import file_format
from .tables import _Collector, _header_names, _positions

# ------------------------------------------------------------------------------ columns
TASKS = ("regression", "mean")


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


def _layout(m, task, raw, keys, covariate="x", mapped=None) -> _Layout:
    """The layout of a file with header names ``raw`` (as written) and ``keys`` (lower case).

    With a column mapping (``mapped``: ``(kind, {slot: file column})`` from
    :func:`_check_columns`), the layout it names, its columns as spelled in the header. Else
    the layout the manifold's file format recognises (:mod:`dpcore.data._csv_formats`: e.g.
    on Sphere(2) a latitude and a longitude column, and none of ``y1..y3``, mean places in
    degrees; on SPD(k) all ``k * k`` entries named mean full matrices), by default the
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
    present = {k for k in keys if k}
    kind, values, ignore = file_format(m).detect(m, raw, present)
    return _Layout(kind, (*lead, *values), len(lead), ignore_others=ignore)


def _slot_layouts(m) -> dict:
    """The layouts a column mapping may name for ``m``: kind -> the reader's column names, in
    the order read (:func:`read_manifold_csv`, ``columns``; :mod:`dpcore.data._csv_formats`)."""
    return file_format(m).layouts(m)


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
    return file_format(m).alternatives(m)


# ------------------------------------------------------------------------------ the header
def _expect(m, task, covariate="x", mapped=None) -> str:
    """The columns a file should have, for messages: ``"x, y1, y2, y3"``."""
    if mapped is None:
        return ", ".join(expected_columns(m, task))
    lead = [covariate] if task == "regression" else []
    return ", ".join([*lead, *mapped[1].values()])


@dataclass(frozen=True)
class _Header:
    """A header checked against a layout: the :class:`_Layout`, the problems collector
    (empty; ordered by the columns read), the columns read (``layout.columns``, then the group
    column when there is one), the field of each in a record (``index``), the lower-case name
    of every field (``keys``; empty for unnamed ones) and the columns ignored."""

    layout: _Layout
    problems: _Collector
    read_columns: list
    index: list
    keys: list
    ignored: tuple


def _scan_header(m, header, task, covariate="x", unread="error", mapped=None,
                 group=None) -> _Header:
    """Check the header record ``header`` (a list of str) for ``m`` and ``task``; raise a
    :class:`DataValidationError` for every problem it has (row 1, the column)."""
    expect = _expect(m, task, covariate, mapped)
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
    ignored = tuple(others) if ignore else ()
    return _Header(layout, problems, read_columns, index, keys, ignored)
