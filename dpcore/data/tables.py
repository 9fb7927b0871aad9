"""Numeric tables from CSV: the one reader under every CSV input of dpcore and the dashboard.

:func:`read_table` reads any CSV file whose first (non-blank) row names the columns into a
header and a float table (:class:`Table`), reporting every problem with its row and column in
one :class:`~dpcore.exceptions.DataValidationError`. It is :func:`scan_table` (decoding, the
delimiter, the header and the rows, as text: :class:`TextTable`) followed by
:meth:`TextTable.to_numbers` (cells to floats); the dashboard's linear-regression page calls
the two halves separately so that only the columns a user picks are checked.
:func:`dpcore.data.load_csv` builds the manifold formats on the same pieces. The pieces live in
:mod:`dpcore.data._table_rows` (records, header, data rows, the problems collector) and
:mod:`dpcore.data._table_numbers` (cells to floats); this module holds the tables and readers.

Row numbers in messages count as a spreadsheet does: the header is row 1 and the first data
row is row 2, so "row N" is line N of the file (unless a quoted cell spans several lines).
Nothing is ever written to disk or logged while reading.

*Encodings.* A byte-order mark decides: UTF-8, UTF-16 (LE/BE) and UTF-32 (LE/BE) with a BOM
are decoded accordingly. Without a BOM, text whose every other byte is zero is UTF-16 (as
Windows tools write it) and is decoded as such; anything else must be UTF-8. Other encodings
(Latin-1, Windows-1252, ...) are not guessed -- a wrong guess would silently change data --
but rejected with the byte offset, row and column of the first byte that is not UTF-8. NUL
characters mark binary data and are rejected, as are Excel workbooks (with a hint).

*Delimiters and numbers.* The delimiter is the one of ``,``, ``;``, tab and ``|`` that occurs
most often in the header line (comma on ties). In ``;``-, tab- and ``|``-separated files a
decimal comma (``0,5``) is accepted (so ``1,000`` there reads as 1.0). In comma-separated
files a cell holding a comma was quoted (``"0,5"``, as spreadsheets in decimal-comma locales
export numbers); such a column is read with decimal commas when none of its numbers has a
decimal point and at least one of its commas cannot be a thousands separator (its digit group
is not 3 digits long, or the number starts with 0: ``"48,85"``, ``"0,500"``). A column whose
only commas could be thousands separators (``"1,000"``: one thousand, or 1.0?) or that mixes
them with decimal points is reported with a hint, never guessed; an unquoted decimal comma
splits the row, which is reported with the same hint. Thousands separators (``1.000,5``,
``1 000``, ``1,000.5``) are rejected with a hint; Python's ``1_000`` is accepted. NaN,
infinity and magnitudes above :data:`HUGE_VALUE` are rejected.

*Cells.* Header names are matched case-insensitively after stripping spaces, so column order
is free; a name may appear only once. Cells may be quoted and padded with spaces. Blank lines
and all-empty rows are skipped (they still count in row numbers), as are columns with an empty
header and no values (e.g. from a trailing delimiter); a value under an empty header is
reported.

*Limits.* Data rows: ``max_rows``, by default :attr:`dpcore.settings.Limits.max_rows`
(``DPCORE_MAX_ROWS``, 100 000). Size: ``max_bytes``, by default the library's limit
:attr:`dpcore.settings.Limits.max_upload_mb` MiB (``DPCORE_MAX_UPLOAD_MB``, 200); an
application with a smaller cap of its own (the dashboard's upload limit) passes ``max_bytes``.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from functools import cached_property

import numpy as np

from .._validation import check_choice, check_int
from ..exceptions import MAX_PROBLEMS, DataValidationError, Problem
from ..settings import get_limits
from ._decoding import DELIMITERS, _read_text, _short, _sniff_delimiter
from ._table_numbers import (  # noqa: F401  (re-exported: the CSV readers use them)
    _DECIMAL_COMMA,
    _THOUSANDS_OR_DECIMAL,
    HUGE_VALUE,
    _comma_decimals,
    _is_number,
    _to_numbers,
)
from ._table_rows import (  # noqa: F401  (re-exported: the CSV readers use them)
    _collect_rows,
    _Collector,
    _first_record,
    _header_names,
    _is_blank,
    _positions,
    _records,
)

__all__ = [
    "BLANK",
    "DELIMITERS",
    "HUGE_VALUE",
    "MAX_PROBLEMS",
    "DataValidationError",
    "Problem",
    "Table",
    "TEXT",
    "TextTable",
    "read_table",
    "scan_table",
]

#: Values of ``read_table``'s ``blank`` option: report empty cells, or drop their rows.
BLANK = ("error", "drop")
#: Values of ``read_table``'s ``text`` option: report text cells, or leave text columns out.
TEXT = ("error", "skip")


# ------------------------------------------------------------------------------ the tables
@dataclass(frozen=True, eq=False)
class Table:
    """A numeric table read from CSV (see :func:`read_table`).

    Attributes
    ----------
    header : tuple of str
        Every named column of the file, as written (stripped), in file order.
    columns : tuple of str
        The columns of ``values``, as written in the header, in the order asked for (file
        order by default).
    values : ndarray, shape (n_rows, len(columns))
        The cells as finite floats.
    rows : ndarray of int, shape (n_rows,)
        Spreadsheet row number of each row of ``values`` (header = row 1).
    text_columns : tuple of str
        Columns left out because they hold text or nothing (``text="skip"``), file order.
    dropped : int
        Data rows left out because a cell of ``columns`` was empty (``blank="drop"``).
    delimiter : str
        The delimiter the file was read with.
    """

    header: tuple[str, ...]
    columns: tuple[str, ...]
    values: np.ndarray
    rows: np.ndarray
    text_columns: tuple[str, ...] = ()
    dropped: int = 0
    delimiter: str = ","

    def column(self, name: str) -> np.ndarray:
        """The values of column ``name`` (matched case-insensitively), shape (n_rows,)."""
        keys = [c.lower() for c in self.columns]
        key = str(name).strip().lower()
        if key not in keys:
            raise KeyError(f"no column {name!r} in the table; its columns are "
                           f"{', '.join(self.columns)}.")
        return self.values[:, keys.index(key)]


@dataclass(frozen=True, eq=False)
class TextTable:
    """A CSV file checked for structure, its cells still text (see :func:`scan_table`).

    Attributes
    ----------
    columns : tuple of str
        The named columns, as written in the header (stripped), in file order.
    rows : ndarray of int, shape (n_rows,)
        Spreadsheet row number of each data row (header = row 1; blank lines are skipped but
        counted).
    cells : list of tuple of str
        The cells of each data row, in the order of ``columns``.
    delimiter : str
        The delimiter found in the header line.
    """

    columns: tuple[str, ...]
    rows: np.ndarray
    cells: list
    delimiter: str

    @cached_property
    def numeric_columns(self) -> tuple[str, ...]:
        """Columns at least half of whose non-empty cells are finite numbers (decimal commas
        counted as the delimiter allows, see :mod:`dpcore.data.tables`), in file order. Their
        other cells are problems that :meth:`to_numbers` reports."""
        if not self.cells:
            return ()
        numeric = []
        for name, col in zip(self.columns, zip(*self.cells, strict=True), strict=True):
            try:  # fast path: every cell a number
                good = int(np.isfinite(np.array(col, dtype=float)).sum())
                filled = len(col)
            except ValueError:
                decimal_comma = self.delimiter != "," or _comma_decimals(col)
                filled_cells = [c for c in col if c.strip()]
                filled = len(filled_cells)
                good = sum(_is_number(c, decimal_comma) for c in filled_cells)
            if filled and 2 * good >= filled:
                numeric.append(name)
        return tuple(numeric)

    @cached_property
    def text_columns(self) -> tuple[str, ...]:
        """The other columns (text, or empty), in file order."""
        numeric = set(self.numeric_columns)
        return tuple(c for c in self.columns if c not in numeric)

    def _indices(self, columns) -> list[int]:
        """Positions of ``columns`` (matched case-insensitively); a missing name is reported."""
        if isinstance(columns, str):
            raise TypeError("`columns` must be a sequence of column names, not a str.")
        keys = {c.lower(): j for j, c in enumerate(self.columns)}
        wanted = [str(c).strip() for c in columns]
        missing = [c for c in wanted if c.lower() not in keys]
        if missing:
            listed = ", ".join(f"'{_short(c)}'" for c in missing)
            raise DataValidationError(
                f"no column named {listed} in the header; its columns are: "
                f"{', '.join(_short(c) for c in self.columns)}.",
                row=1, column=_short(missing[0]))
        return [keys[c.lower()] for c in wanted]

    def keep_filled(self, columns) -> tuple[TextTable, int]:
        """The rows whose cells in ``columns`` are all non-empty, and how many were left out.

        Use it before :meth:`to_numbers` and :meth:`text` when some of the columns read are
        text (e.g. a person identifier), so that one row set serves both.

        Parameters
        ----------
        columns : sequence of str
            Column names (matched case-insensitively).

        Returns
        -------
        (TextTable, int)
            Every column of the kept rows (row numbers unchanged), and the rows dropped.

        Raises
        ------
        DataValidationError
            For a column not in the header, or when no row is left.
        """
        index = self._indices(columns)
        keep = [i for i, rec in enumerate(self.cells) if all(rec[j].strip() for j in index)]
        dropped = len(self.cells) - len(keep)
        if not keep:
            raise DataValidationError(
                f"every one of the {dropped:,} data rows has an empty cell in the columns "
                f"{', '.join(_short(self.columns[j]) for j in index)}, so none is left.")
        if not dropped:
            return self, 0
        return TextTable(columns=self.columns, rows=self.rows[keep],
                         cells=[self.cells[i] for i in keep], delimiter=self.delimiter), dropped

    def text(self, column) -> np.ndarray:
        """The cells of ``column`` as stripped strings (matched case-insensitively), shape
        (n_rows,)."""
        (j,) = self._indices([column])
        return np.array([rec[j].strip() for rec in self.cells], dtype=object)

    def to_numbers(self, columns=None, *, text="error", blank="error") -> Table:
        """The cells of some columns as floats; see :func:`read_table` for the arguments.

        Raises
        ------
        DataValidationError
            For a column not in the header, and for every empty (unless ``blank="drop"``),
            non-numeric, NaN, infinite or huge cell of the columns read, by row and column.
        """
        check_choice(text, "text", TEXT)
        check_choice(blank, "blank", BLANK)
        keys = {c.lower(): j for j, c in enumerate(self.columns)}
        skipped: tuple[str, ...] = ()
        if columns is None:
            names = self.numeric_columns if text == "skip" else self.columns
            skipped = self.text_columns if text == "skip" else ()
            if not names:
                raise DataValidationError(
                    "no column holds numbers: every column is text or empty.")
        else:
            found = self._indices(columns)
            if not found:
                raise ValueError("`columns` must name at least one column.")
            names = tuple(self.columns[j] for j in found)
        index = [keys[c.lower()] for c in names]
        pick = operator.itemgetter(*index) if len(index) > 1 else lambda r: (r[index[0]],)
        cells = [pick(rec) for rec in self.cells]
        rows = self.rows
        dropped = 0
        if blank == "drop":
            keep = [i for i, rec in enumerate(cells) if all(c.strip() for c in rec)]
            dropped = len(cells) - len(keep)
            if dropped:
                cells = [cells[i] for i in keep]
                rows = rows[keep]
            if not cells:
                raise DataValidationError(
                    f"every one of the {dropped:,} data rows has an empty cell in the columns "
                    f"read ({', '.join(_short(c) for c in names)}), so none is left.")
        shown = [_short(c) for c in names]
        problems = _Collector({c: j for j, c in enumerate(shown)})
        values, _ = _to_numbers(cells, rows, shown, self.delimiter, problems, set())
        problems.raise_if_any()
        return Table(header=self.columns, columns=tuple(names), values=values,
                     rows=np.array(rows, dtype=int), text_columns=tuple(skipped),
                     dropped=dropped, delimiter=self.delimiter)


def _scan(source, max_rows, max_bytes, max_columns, caller) -> TextTable:
    max_rows = get_limits().max_rows if max_rows is None else check_int(max_rows, "max_rows")
    if max_columns is not None:
        max_columns = check_int(max_columns, "max_columns")
    text = _read_text(source, max_bytes, caller)
    delimiter = _sniff_delimiter(text)
    records = _records(text, delimiter)
    raw, keys, names = _header_names(_first_record(records))
    named = [j for j, k in enumerate(keys) if k]
    if max_columns is not None and len(named) > max_columns:
        raise DataValidationError(
            f"the header names {len(named)} columns; at most {max_columns} are read.", row=1)
    problems = _Collector({names[j]: i for i, j in enumerate(named)})
    _positions(keys, names, problems)
    problems.raise_if_any()
    rows, cells, _ = _collect_rows(records, named, [names[j] for j in named], keys, max_rows,
                                   problems, delimiter, caller)
    problems.raise_if_any()
    if not cells:
        raise DataValidationError("the file has a header row but no data rows.")
    return TextTable(columns=tuple(raw[j] for j in named), rows=rows, cells=cells,
                     delimiter=delimiter)


def scan_table(source, *, max_rows=None, max_bytes=None, max_columns=None) -> TextTable:
    """Read a CSV file's structure: decoding, delimiter, header and rows, cells as text.

    The first half of :func:`read_table` (same arguments and limits); call
    :meth:`TextTable.to_numbers` for the numbers. Use it to look at the columns before
    choosing which to read (:attr:`TextTable.numeric_columns`), reading the file once.

    Returns
    -------
    TextTable

    Raises
    ------
    DataValidationError
        For an empty, undecodable, binary or malformed file, a missing header, duplicated
        names, short or long rows, values under an unnamed column, no data rows, or more
        rows, bytes or columns than the limits; each problem with its row and column.
    """
    return _scan(source, max_rows, max_bytes, max_columns, "scan_table")


def read_table(source, *, columns=None, text="error", blank="error", max_rows=None,
               max_bytes=None, max_columns=None) -> Table:
    """Read a numeric table from CSV: a header row naming the columns, then one row per
    observation.

    Parameters
    ----------
    source : path (str or os.PathLike), bytes, or file-like object
        A ``str`` is always a file path. File-like objects may be binary or text (e.g.
        ``io.BytesIO``, ``io.StringIO`` or Streamlit's ``UploadedFile``); objects with a
        ``getvalue()`` method are read in full regardless of their current position.
        Nothing is written to disk or logged.
    columns : sequence of str, optional
        The columns to read (matched case-insensitively, in this order); the others are not
        checked. By default every named column (see ``text``).
    text : {"error", "skip"}
        With ``columns=None``: ``"error"`` reads every column and reports each cell that is
        not a number; ``"skip"`` leaves out the columns that hold text (fewer than half of
        their non-empty cells are numbers, e.g. an ``id`` of names, or an empty column) and
        lists them in :attr:`Table.text_columns`. The numeric columns are still checked cell
        by cell. Columns named in ``columns`` are always read.
    blank : {"error", "drop"}
        An empty cell in a column read is reported (``"error"``), or its row is left out
        and counted in :attr:`Table.dropped` (``"drop"``).
    max_rows : int, optional
        Most data rows; by default :attr:`dpcore.settings.Limits.max_rows` (100 000, or the
        environment variable ``DPCORE_MAX_ROWS``). A longer file is rejected as soon as the
        row after the limit is read.
    max_bytes : int, optional
        Largest file in bytes (characters for text sources); by default the library's
        limit, :attr:`dpcore.settings.Limits.max_upload_mb` MiB (200, or the environment
        variable ``DPCORE_MAX_UPLOAD_MB``). A path is checked before it is read.
    max_columns : int, optional
        Most named columns in the header (no limit by default).

    Returns
    -------
    Table
        ``header``, ``columns``, ``values`` (float, shape (n_rows, len(columns))), ``rows``
        (spreadsheet row numbers), ``text_columns``, ``dropped`` and ``delimiter``.

    Raises
    ------
    DataValidationError
        Everything wrong with the file (see :func:`scan_table`) or the cells read: empty
        cells (``blank="error"``), cells that are not numbers, NaN, infinity, magnitudes
        above 1e12, a column not in the header, no numeric column. All problems found (up
        to 20 listed) come together, each with its row (header = row 1, first data row =
        row 2) and column.
    TypeError, ValueError
        For invalid arguments (not for problems in the data).

    Notes
    -----
    Encodings, delimiters, decimal commas, cells and limits: see :mod:`dpcore.data.tables`.

    Examples
    --------
    >>> import io
    >>> t = read_table(io.StringIO("id;dose;yield\\na;0,5;3\\nb;1,5;\\n"), text="skip",
    ...                blank="drop")
    >>> t.columns, t.values.tolist(), t.text_columns, t.dropped
    (('dose', 'yield'), [[0.5, 3.0]], ('id',), 1)
    """
    check_choice(text, "text", TEXT)
    check_choice(blank, "blank", BLANK)
    table = _scan(source, max_rows, max_bytes, max_columns, "read_table")
    return table.to_numbers(columns, text=text, blank=blank)
