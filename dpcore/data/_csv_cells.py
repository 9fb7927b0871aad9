"""From the text of a manifold CSV file to its numbers: the header checked, the data rows read,
rows with an empty cell dropped, the group column read along and every cell parsed.

Two readers give one result. The row-by-row reader (:func:`_read_cells_slow`, Python's
:mod:`csv` module and one ``float`` per cell, on the pieces of :mod:`dpcore.data.tables`) finds
and words every problem of a file, each with its row and column. The vectorised reader
(:func:`dpcore.data._csv_fast.read_rows`, pyarrow) reads a clean file many times faster and
answers only when its result is the row reader's, bit for bit; on a file with a problem, or one
it cannot vouch for, the row reader reads the file again. Both check the header with the same
code (:func:`dpcore.data._csv_layouts._scan_header`).

Part of :mod:`dpcore.data.csvio` (see there for the formats).
"""

from __future__ import annotations

import csv
from dataclasses import dataclass

import numpy as np

from ..exceptions import DataValidationError
from . import _csv_fast
from ._csv_layouts import _expect, _Layout, _scan_header
from ._decoding import _sniff_delimiter, lines
from .tables import _collect_rows, _Collector, _first_record, _is_blank, _records, _to_numbers


@dataclass(frozen=True, eq=False)
class _Cells:
    """The numbers of a file: its layout, the problems found (a collector ordered by the
    columns read), spreadsheet row numbers, the values of ``layout.columns`` (n, c) with the
    cells that are not numbers marked in ``bad``, the group names (or None), the rows dropped
    for an empty cell and the columns ignored."""

    layout: _Layout
    problems: _Collector
    rows: np.ndarray
    values: np.ndarray
    bad: np.ndarray
    groups: np.ndarray | None
    dropped: int
    ignored: tuple


def _read_cells(m, text, task, max_rows, *, covariate="x", unread="error", mapped=None,
                group=None, blank="error") -> _Cells:
    """The numbers of the decoded file ``text``: the vectorised reader's when it vouches for
    them, else the row reader's (see the module's docstring). ``text`` may also be plain
    ASCII bytes (:func:`dpcore.data._decoding._read_source`), whose text is
    ``text.decode("ascii")``: the vectorised reader parses them without decoding the file,
    the row reader gets them decoded."""
    head = text
    if isinstance(text, bytes):
        head = text[:_HEAD].decode("ascii")
    delimiter = _sniff_delimiter(head)
    located = _header_record(head, delimiter)
    if located is not None and len(head) < len(text) and located[2] >= len(head) - 1:
        # The header record reaches the end of the head: it may go on after it.
        located = _header_record(text.decode("ascii"), delimiter)
    if located is not None:
        header_row, record, end = located
        header = _scan_header(m, record, task, covariate, unread, mapped, group)
        need = 2 if task == "regression" else 1
        got = _csv_fast.read_rows(text, end, header_row, delimiter, header, max_rows, blank,
                                  need)
        if got is not None:
            rows, values, groups, dropped = got
            return _Cells(header.layout, header.problems, rows, values,
                          np.zeros(values.shape, dtype=bool), groups, dropped, header.ignored)
    if isinstance(text, bytes):
        text = text.decode("ascii")
    return _read_cells_slow(m, text, task, max_rows, covariate=covariate, unread=unread,
                            mapped=mapped, group=group, blank=blank)


#: Characters of a file read to find its delimiter and header (as many as
#: :func:`dpcore.data._decoding._sniff_delimiter` looks at).
_HEAD = 65536


def _header_record(text, delimiter):
    """``(row, record, end)`` of the header: the first record that is not blank, its
    spreadsheet row number and the position in ``text`` just after it; None if the csv module
    fails first (or finds no header), which the row reader then reports."""
    end = 0

    def counted():
        nonlocal end
        for line in lines(text):
            end += len(line)
            yield line

    try:
        for row, record in enumerate(csv.reader(counted(), delimiter=delimiter, strict=True),
                                     start=1):
            if not _is_blank(record):
                return row, record, end
    except csv.Error:
        return None
    return None


def _read_cells_slow(m, text, task, max_rows, *, covariate="x", unread="error", mapped=None,
                     group=None, blank="error") -> _Cells:
    """The row-by-row reader: every record through Python's csv module, every cell through
    ``float``; each problem reported with its row and column."""
    delimiter = _sniff_delimiter(text)
    records = _records(text, delimiter)
    header = _first_record(records, f" ({_expect(m, task, covariate, mapped)})")
    h = _scan_header(m, header, task, covariate, unread, mapped, group)
    layout, problems, read_columns = h.layout, h.problems, h.read_columns
    rows, cells, padded = _collect_rows(records, h.index, read_columns, h.keys, max_rows,
                                        problems, delimiter, "load_csv")
    columns = list(layout.columns)
    dropped = 0
    if blank == "drop" and cells:
        rows, cells, padded, dropped = _drop_blank(rows, cells, padded, read_columns)
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
    return _Cells(layout, problems, rows, values, bad, groups, int(dropped), h.ignored)


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
