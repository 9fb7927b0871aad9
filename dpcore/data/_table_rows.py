"""The structure of a CSV table: records, header and data rows, with their problems.

:class:`_Collector` gathers the problems of a file (the first few of each kind, all counted)
and raises them together; :func:`_records` splits the decoded text into records with their
spreadsheet row numbers; :func:`_first_record`, :func:`_header_names` and :func:`_positions`
read and check the header; :func:`_collect_rows` reads the data rows, reporting short and long
rows, values under unnamed columns and files over ``max_rows``. The pieces of
:func:`dpcore.data.tables.scan_table` and of the manifold CSV reader (:mod:`dpcore.data.csvio`).
"""

from __future__ import annotations

import csv
import io
import operator

import numpy as np

from ..exceptions import MAX_PROBLEMS, DataValidationError, Problem
from ..settings import ENV_VARS
from ._decoding import _short
from ._table_numbers import _looks_numeric


# ------------------------------------------------------------------------------- problems
class _Collector:
    """Accumulates problems, keeping only the first few of each kind but counting all."""

    def __init__(self, order):
        self.items: list[tuple[tuple, Problem]] = []
        self.total = 0
        self._order = order

    def add(self, row, column, message):
        self.total += 1
        key = (0 if row is None else row, self._order.get(column, len(self._order)))
        self.items.append((key, Problem(row, column, message)))

    def add_rows(self, mask, rows, column, make_message):
        """Add one problem per True entry of ``mask`` (rows given by ``rows``)."""
        idx = np.flatnonzero(mask)
        for i in idx[:MAX_PROBLEMS]:
            self.add(int(rows[i]), column, make_message(i))
        self.total += max(idx.size - MAX_PROBLEMS, 0)

    def __bool__(self):
        return self.total > 0

    def raise_if_any(self):
        if self.total:
            ordered = [p for _, p in sorted(self.items, key=lambda kp: kp[0])]
            raise DataValidationError(ordered[:MAX_PROBLEMS], n_problems=self.total)


# ---------------------------------------------------------------------------------- records
def _records(text: str, delimiter: str):
    """Yield ``(row_number, cells)``; row numbers count every record, blank ones included."""
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter, strict=True)
    row = 0
    try:
        for row, rec in enumerate(reader, start=1):
            yield row, rec
    except csv.Error as exc:
        if "field larger than field limit" in str(exc):
            reason = (f"a cell is longer than {csv.field_size_limit():,} characters, probably "
                      "because a quote (\") is opened and never closed")
        else:
            reason = f"{exc}"
        raise DataValidationError(
            f"the file could not be read as CSV ({reason}); check the quotes in this row.",
            row=row + 1,
        ) from exc


def _is_blank(rec) -> bool:
    return all(not c.strip() for c in rec)


def _values(count: int) -> str:
    return "1 value" if count == 1 else f"{count} values"


# --------------------------------------------------------------------- header and rows
def _first_record(records, expect: str = "") -> list[str]:
    """The header: the first record that is not blank. ``expect`` lists the columns wanted
    (e.g. ``" (x, y1)"``) for the message about an empty file."""
    for _, rec in records:
        if not _is_blank(rec):
            return rec
    raise DataValidationError(
        f"the file is empty. It needs a header row naming the columns{expect} and one row "
        "per observation."
    )


def _header_names(header: list[str], expect: str = ""):
    """``(raw, keys, names)`` of a header record: stripped names, their lower-case keys and
    the names as shown in messages. Raise if the record looks like data."""
    raw = [h.replace("\ufeff", "").strip() for h in header]
    if all(_looks_numeric(h) for h in raw if h):
        raise DataValidationError(
            f"the first row contains only numbers, so it looks like data. The file must start "
            f"with a header row naming the columns{expect}.",
            row=1,
        )
    return raw, [h.lower() for h in raw], [_short(h) for h in raw]


def _positions(keys, names, problems) -> dict[str, list[int]]:
    """Field indices of each (non-empty) header key; duplicated names are reported."""
    positions: dict[str, list[int]] = {}
    for j, key in enumerate(keys):
        if key:
            positions.setdefault(key, []).append(j)
    for where in positions.values():
        if len(where) > 1:
            cols = " and ".join(str(j + 1) for j in where)
            problems.add(1, names[where[0]], f"the column name appears {len(where)} times "
                                             f"(columns {cols}); each name must be unique.")
    return positions


def _collect_rows(records, index, columns, keys, max_rows, problems, delimiter, caller):
    """The data rows: their spreadsheet row numbers, their cells at the fields ``index``
    (named ``columns`` in messages) and the ``(i, j)`` positions filled in for short rows.

    Short and long rows and values under unnamed header fields (``keys`` empty) are reported;
    more than ``max_rows`` data rows raise at once, without reading the rest.
    """
    unnamed = [j for j, k in enumerate(keys) if not k]
    width = len(keys)
    split_hint = (" In a comma-separated file a thousands separator or a decimal comma (1,000 "
                  "or 0,5) splits a number into two cells." if delimiter == "," else "")
    # itemgetter: the loop runs once per row, up to max_rows (100 000 by default) times.
    pick = operator.itemgetter(*index) if len(index) > 1 else lambda r: (r[index[0]],)
    rows, cells, padded = [], [], set()
    unnamed_count = ragged_count = 0
    for row, rec in records:
        if not (rec and rec[0].strip()) and _is_blank(rec):
            continue
        if len(rows) >= max_rows:
            var = ENV_VARS["max_rows"][0]
            raise DataValidationError(
                f"the file has more than {max_rows:,} data rows, the limit (max_rows={max_rows}). "
                f"Use fewer rows, or raise the limit: set the environment variable {var} (e.g. "
                f"{var}={2 * max_rows}) before starting the app, or pass "
                f"{caller}(..., max_rows=...)."
            )
        if len(rec) < width:
            # Cells missing only under unnamed (empty) columns are fine: those columns are
            # ignored anyway.
            absent = [columns[i] for i, j in enumerate(index) if j >= len(rec)]
            if absent:
                ragged_count += 1
                if ragged_count <= MAX_PROBLEMS:
                    problems.add(row, absent[0], f"the row has {_values(len(rec))} but the "
                                                 f"header has {width} columns (no value for "
                                                 f"{', '.join(absent)}).")
                else:
                    problems.total += 1
                padded.update((len(rows), i) for i, j in enumerate(index) if j >= len(rec))
            rec = rec + [""] * (width - len(rec))
        elif len(rec) > width and not _is_blank(rec[width:]):
            ragged_count += 1
            if ragged_count <= MAX_PROBLEMS:
                problems.add(row, None, f"the row has {_values(len(rec))} but the header has "
                                        f"{width} columns.{split_hint}")
            else:
                problems.total += 1
        for j in unnamed:
            if rec[j].strip():
                unnamed_count += 1
                if unnamed_count <= MAX_PROBLEMS:
                    problems.add(row, None, f"column {j + 1} has no name in the header but holds "
                                            f"the value '{_short(rec[j])}'.")
                else:
                    problems.total += 1
        rows.append(row)
        cells.append(pick(rec))
    return np.asarray(rows, dtype=int), cells, padded
