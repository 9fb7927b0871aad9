"""Reading and writing manifold-valued data as CSV, with validation that names rows and columns.

File format (one observation per row, header row required; see :func:`expected_columns`):

* regression: column ``x`` (the real covariate), then the response columns;
* Fréchet mean: the response columns only.

Response columns per manifold: ``Sphere(d)`` and ``Hyperbolic(d)`` ``y1..y{d+1}`` (for the
hyperboloid ``y1`` is the time-like coordinate); ``Euclidean(d)`` ``y1..yd``; ``SPD(k)`` the upper
triangle row-major ``s11, s12, ..., s1k, s22, ..., skk`` (``s{i}_{j}`` when ``k >= 10``);
``KendallShape(k)`` raw landmark coordinates ``lx1, ly1, ..., lxk, lyk``.

Row numbers in error messages count as a spreadsheet does: the header is row 1 and the first
data row is row 2, so "row N" is line N of the file (unless a quoted cell spans several lines).
Nothing is ever written to disk while loading. Encodings and delimiters accepted: see the Notes
of :func:`load_csv`; the row limit comes from :mod:`dpcore.settings`. Files written by
:func:`to_csv` are safe to open in a spreadsheet (see :func:`neutralize_cell`).
"""

from __future__ import annotations

import codecs
import csv
import io
import operator
import os
import re
from typing import NamedTuple

import numpy as np

from .._validation import as_float_array, check_int, check_positive
from ..manifolds import SPD, Euclidean, Hyperbolic, KendallShape, Manifold, Sphere
from ..manifolds.hyperbolic import minkowski
from ..settings import ENV_VARS, get_limits

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

#: At most this many problems are listed in one :class:`DataValidationError`.
MAX_PROBLEMS = 20
#: Cells with a larger magnitude are rejected (almost always a unit or typing mistake).
HUGE_VALUE = 1e12
#: Relative threshold below which an SPD matrix's smallest eigenvalue counts as non-positive.
PD_RTOL = 1e-12
#: Smallest eigenvalue an SPD matrix may have: below it (e.g. at subnormal 5e-324) the matrix
#: logarithm and the affine-invariant distance underflow.
PD_MIN_EIGENVALUE = 1e-100
TASKS = ("regression", "mean")
ROW_NOTE = (
    "Rows are numbered as in a spreadsheet: the header is row 1 and the first data row is "
    "row 2 (row N is line N of the file)."
)
_DECIMAL_COMMA = re.compile(r"\s*[+-]?\d*,\d+(?:[eE][+-]?\d+)?\s*")
_THOUSANDS = re.compile(r"[+-]?\d{1,3}(?:[,.' \u00a0\u202f]\d{3})+(?:[.,]\d+)?")
_NAN_OR_INF = re.compile(r"\s*[+-]?(?:nan|inf|infinity)\s*", re.IGNORECASE)
#: Delimiters recognised in the header line, in order of preference on ties.
DELIMITERS = (",", ";", "\t", "|")


# ------------------------------------------------------------------------------- errors
class Problem(NamedTuple):
    """One problem found in the data.

    Attributes
    ----------
    row : int or None
        Spreadsheet row number (header = 1, first data row = 2); None for file-level problems.
    column : str or None
        Column name as expected by the format; None when the problem is not about one column.
    message : str
        What is wrong and how to fix it.
    """

    row: int | None
    column: str | None
    message: str

    def __str__(self) -> str:
        parts = []
        if self.row is not None:
            parts.append("Header (row 1)" if self.row == 1 else f"Row {self.row}")
        if self.column is not None:
            parts.append(f"column '{self.column}'")
        if not parts:
            return self.message[:1].upper() + self.message[1:]
        loc = ", ".join(parts)
        return f"{loc[:1].upper()}{loc[1:]}: {self.message}"


class DataValidationError(ValueError):
    """The data could not be loaded; every problem found is listed with its row and column.

    Parameters
    ----------
    problems : str or sequence of (row, column, message)
        A single message (then ``row`` and ``column`` locate it) or a list of problems.
    row : int, optional
        Spreadsheet row number of a single problem (header = row 1, first data row = row 2).
    column : str, optional
        Column name of a single problem.
    n_problems : int, optional
        Total number of problems found when only the first ones are passed.

    Attributes
    ----------
    problems : list of Problem
        ``(row, column, message)`` tuples, at most :data:`MAX_PROBLEMS` of them, in file order.
    n_problems : int
        How many problems were found in total (may exceed ``len(problems)``).
    row, column : int or str or None
        Location of the first problem (either may be None for file-level problems).
    """

    def __init__(self, problems, *, row=None, column=None, n_problems=None):
        if isinstance(problems, str):
            problems = [(row, column, problems)]
        items = [Problem(*p) for p in problems]
        if not items:
            raise ValueError("DataValidationError needs at least one problem.")
        self.problems = items[:MAX_PROBLEMS]
        self.n_problems = max(int(n_problems or 0), len(items))
        self.row = items[0].row
        self.column = items[0].column
        super().__init__(self._format())

    def _format(self) -> str:
        with_rows = any(p.row is not None and p.row > 1 for p in self.problems)
        if self.n_problems == 1:
            text = str(self.problems[0])
        else:
            lines = [f"Found {self.n_problems} problems in the data:"]
            lines += [f"- {p}" for p in self.problems]
            hidden = self.n_problems - len(self.problems)
            if hidden > 0:
                lines.append(f"... and {hidden} more not shown.")
            text = "\n".join(lines)
        return f"{text}\n{ROW_NOTE}" if with_rows else text


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


# ------------------------------------------------------------------------------ columns
def _check_manifold(manifold) -> Manifold:
    if not isinstance(manifold, Manifold):
        raise TypeError(f"`manifold` must be a dpcore Manifold, got {type(manifold).__name__}.")
    return manifold


def _check_task(task) -> str:
    if task not in TASKS:
        raise ValueError(f"`task` must be 'regression' or 'mean', got {task!r}.")
    return task


def _response_columns(m: Manifold) -> list[str]:
    if isinstance(m, SPD):
        sep = "_" if m.k >= 10 else ""
        return [f"s{i}{sep}{j}" for i in range(1, m.k + 1) for j in range(i, m.k + 1)]
    if isinstance(m, KendallShape):
        return [f"l{c}{j}" for j in range(1, m.k_landmarks + 1) for c in ("x", "y")]
    size = int(np.prod(m.point_shape))
    return [f"y{j}" for j in range(1, size + 1)]


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
        ``SPD(2)`` with ``task="mean"``. Manifolds other than the five built-in ones use
        ``y1..yN``: the point array flattened in C order.
    """
    m = _check_manifold(manifold)
    cols = _response_columns(m)
    return ["x", *cols] if _check_task(task) == "regression" else cols


def _span(cols) -> str:
    return f"{cols[0]}..{cols[-1]}" if len(cols) > 1 else cols[0]


# ------------------------------------------------------------------------------ reading
_BOMS = (
    # UTF-32 first: its little-endian BOM starts with the UTF-16 one.
    (codecs.BOM_UTF32_LE, "utf-32-le", "UTF-32"),
    (codecs.BOM_UTF32_BE, "utf-32-be", "UTF-32"),
    (codecs.BOM_UTF8, "utf-8", "UTF-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le", "UTF-16"),
    (codecs.BOM_UTF16_BE, "utf-16-be", "UTF-16"),
)
_LINE_BREAK = re.compile(r"\r\n|\r|\n")


def _printable(text: str) -> str:
    """``text`` with invisible and unprintable characters (tabs, NULs, lone surrogates, ...)
    written as escapes, so that messages show them and can always be encoded."""
    if text.isprintable():
        return text
    return "".join(
        c if c.isprintable() else c.encode("unicode_escape").decode("ascii") for c in text
    )


def _short(cell: str, limit: int = 40) -> str:
    """A cell or header name for a message: stripped, shortened, unprintables escaped."""
    cell = cell.strip()
    return _printable(cell if len(cell) <= limit else cell[: limit - 3] + "...")


def _locate(prefix: str) -> tuple[int, str | None]:
    """Spreadsheet row and column name of the position just after ``prefix`` (decoded text).

    The row counts line breaks; the column is the header name of the field the position is
    in (None in the header itself, beyond the header, or when it cannot be told).
    """
    prefix = prefix.removeprefix("\ufeff")
    row = prefix.count("\n") + prefix.count("\r") - prefix.count("\r\n") + 1
    cut = max(prefix.rfind("\n"), prefix.rfind("\r"))
    complete, current = prefix[: cut + 1], prefix[cut + 1 :]
    header_line = next((s for s in _LINE_BREAK.split(complete[:65536]) if s.strip()), None)
    if header_line is None:
        return row, None
    delimiter = _sniff_delimiter(header_line)
    try:
        names = next(csv.reader([header_line], delimiter=delimiter))
        field = len(next(csv.reader([current], delimiter=delimiter), [])) - 1
    except csv.Error:
        return row, None
    field = max(field, 0)
    name = names[field].strip() if field < len(names) else ""
    return row, (_short(name) or None)


def _check_no_nul(text: str):
    idx = text.find("\x00")
    if idx >= 0:
        row, column = _locate(text[:idx])
        raise DataValidationError(
            "the file contains binary data (a NUL character), so it is not a text CSV file.",
            row=row, column=column,
        )


def _utf16_without_bom(data: bytes) -> str | None:
    """``"utf-16-le"`` or ``"utf-16-be"`` if ``data`` looks like UTF-16 text without a BOM.

    Mostly-ASCII text (as CSV files of numbers are) in UTF-16 has a zero high byte in almost
    every two-byte unit, at odd offsets (little-endian) or even ones (big-endian).
    """
    head = data[:4096]
    head = head[: len(head) - len(head) % 2]
    if len(head) < 4:
        return None
    even, odd = head[0::2], head[1::2]
    for zeros, other, codec in ((odd, even, "utf-16-le"), (even, odd, "utf-16-be")):
        if zeros.count(0) >= 0.9 * len(zeros) and other.count(0) <= 0.1 * len(other):
            return codec
    return None


def _decode_as(data: bytes, codec: str, label: str, skip: int = 0) -> str:
    """Decode ``data[skip:]`` (``skip`` = BOM length) strictly, or raise a located error."""
    try:
        return data[skip:].decode(codec)
    except UnicodeDecodeError as exc:
        prefix = data[skip : skip + exc.start].decode(codec, errors="replace")
        offset = skip + exc.start
        if label == "UTF-8":
            bad = data[offset : offset + 1].hex().upper()
            message = (
                f"byte 0x{bad} (at offset {offset} of the file) is not valid UTF-8 text; the "
                "file was probably saved in another encoding such as Windows-1252 or Latin-1. "
                "Save it as 'CSV UTF-8' and try again."
            )
        else:
            message = (
                f"the file looks like {label} text but is not valid {label} at offset {offset} "
                f"of the file ({exc.reason}). Save it as 'CSV UTF-8' and try again."
            )
        row, column = _locate(prefix)
        raise DataValidationError(message, row=row, column=column) from exc


def _decode(data: bytes) -> str:
    """Text of ``data``: UTF-8, or UTF-16/UTF-32 with a BOM, or UTF-16 without one."""
    if data.startswith(b"PK\x03\x04"):
        raise DataValidationError(
            "this is an Excel workbook (.xlsx) or another zip archive, not a CSV file. In Excel, "
            "use File > Save As and choose 'CSV UTF-8 (comma delimited)'."
        )
    if data.startswith(b"\xd0\xcf\x11\xe0"):
        raise DataValidationError(
            "this is an old Excel workbook (.xls), not a CSV file. In Excel, use File > Save As "
            "and choose 'CSV UTF-8 (comma delimited)'."
        )
    for bom, codec, label in _BOMS:
        if data.startswith(bom):
            text = _decode_as(data, codec, label, skip=len(bom))
            break
    else:
        codec = _utf16_without_bom(data)
        if codec is not None:
            text = _decode_as(data, codec, "UTF-16")
        else:
            idx = data.find(b"\x00")
            if idx >= 0:
                row, column = _locate(data[:idx].decode("utf-8", errors="replace"))
                raise DataValidationError(
                    "the file contains binary data (NUL bytes), so it is not a text CSV file.",
                    row=row, column=column,
                )
            text = _decode_as(data, "utf-8", "UTF-8")
    _check_no_nul(text)
    return text


def _read_text(source) -> str:
    """The text of ``source``: a path, bytes, or a binary or text file-like object."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        data = bytes(source)
    elif isinstance(source, (str, os.PathLike)):
        if isinstance(source, str) and ("\n" in source or "\r" in source):
            raise ValueError(
                "`source` is a str, which is read as a file path, but it contains a line break. "
                "To parse CSV text, pass io.StringIO(text) or text.encode()."
            )
        with open(source, "rb") as fh:
            data = fh.read()
    elif hasattr(source, "getvalue") or hasattr(source, "read"):
        # getvalue() (BytesIO, StringIO, Streamlit's UploadedFile) reads the whole buffer
        # whatever the current position, so a file read once already still loads.
        try:
            data = source.getvalue() if hasattr(source, "getvalue") else source.read()
        except UnicodeDecodeError as exc:
            raise DataValidationError(
                f"the file is not valid text in the encoding it was opened with ({exc.reason}); "
                "save it as 'CSV UTF-8' or pass the file opened in binary mode."
            ) from exc
    else:
        raise TypeError(
            "`source` must be a path, bytes, or a file-like object, got "
            f"{type(source).__name__}."
        )
    if isinstance(data, (bytes, bytearray, memoryview)):
        return _decode(bytes(data))
    if isinstance(data, str):
        text = data.removeprefix("\ufeff")
        _check_no_nul(text)
        return text
    raise TypeError(f"reading `source` returned {type(data).__name__}, not bytes or str.")


def _sniff_delimiter(text: str) -> str:
    """``,``, ``;``, tab or ``|``: whichever occurs most often in the first non-blank line
    (comma on ties and when there is none)."""
    for line in _LINE_BREAK.split(text[:65536]):  # the header is near the start
        if line.strip():
            counts = {d: line.count(d) for d in DELIMITERS}
            best = max(counts, key=lambda d: (counts[d], -DELIMITERS.index(d)))
            return best if counts[best] > 0 else ","
    return ","


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


def _parse_float(cell: str, decimal_comma: bool) -> float:
    try:
        return float(cell)
    except ValueError:
        if decimal_comma and _DECIMAL_COMMA.fullmatch(cell):
            return float(cell.replace(",", "."))
        raise


def _not_a_number(cell: str, delimiter: str) -> str:
    """Message for a cell that does not parse, with a hint for separators."""
    if not cell.strip():
        return "the cell is empty; every cell needs a number."
    msg = f"value '{_short(cell)}' is not a number"
    if delimiter == "," and _DECIMAL_COMMA.fullmatch(cell):
        return (f"{msg}: in a comma-separated file numbers need a decimal point (0.5, not 0,5) "
                "and no thousands separator (1000, not 1,000). Files separated by ';' or tabs "
                "may use decimal commas.")
    if _THOUSANDS.fullmatch(cell.strip()):
        return f"{msg}: write numbers without a thousands separator (1000.5, not 1,000.5)."
    return f"{msg}."


def _too_large(cell: str) -> str:
    return (f"value '{_short(cell)}' is too large in magnitude (the limit is {HUGE_VALUE:.0e}); "
            "check the units or look for a typo.")


def _to_numbers(cells, rows, columns, delimiter, problems, padded):
    """Parse an (n, c) list of strings; report bad cells; return (values, bad_mask).

    Cells in ``padded`` (positions missing from a short row, already reported) are marked bad
    without a second message.
    """
    n, c = len(cells), len(columns)
    decimal_comma = delimiter != ","
    try:
        values = np.array(cells, dtype=float).reshape(n, c)
        bad = np.zeros((n, c), dtype=bool)
    except ValueError:
        values = np.full((n, c), np.nan)
        bad = np.zeros((n, c), dtype=bool)
        shown = 0
        for i, rec in enumerate(cells):
            for j, cell in enumerate(rec):
                try:
                    values[i, j] = _parse_float(cell, decimal_comma)
                except ValueError:
                    bad[i, j] = True
                    if (i, j) in padded:
                        continue
                    if shown >= MAX_PROBLEMS:
                        problems.total += 1
                        continue
                    shown += 1
                    problems.add(int(rows[i]), columns[j], _not_a_number(cell, delimiter))
    nonfinite = ~bad & ~np.isfinite(values)
    huge = ~bad & np.isfinite(values) & (np.abs(values) > HUGE_VALUE)

    def nonfinite_message(i, j):
        cell = cells[i][j]
        if _NAN_OR_INF.fullmatch(cell):
            return (f"value '{_short(cell)}' is not a finite number (NaN and infinity are not "
                    "allowed).")
        return _too_large(cell)  # a literal such as 1e400 that overflows to infinity

    for mask, make in (
        (nonfinite, nonfinite_message),
        (huge, lambda i, j: _too_large(cells[i][j])),
    ):
        idx = np.argwhere(mask)
        for i, j in idx[:MAX_PROBLEMS]:
            problems.add(int(rows[i]), columns[j], make(i, j))
        problems.total += max(len(idx) - MAX_PROBLEMS, 0)
    return values, bad | nonfinite | huge


def _lower_triangle_hint(extra: list[str], columns: list[str]) -> str:
    """Hint for SPD files that list lower-triangle entries such as ``s21``."""
    for name in extra:
        match = re.fullmatch(r"s(\d)(\d)|s(\d+)_(\d+)", name.lower())
        if match:
            i, j = (int(g) for g in match.groups() if g is not None)
            sep = "" if match.group(1) else "_"
            if i > j and f"s{j}{sep}{i}" in columns:
                return (f" SPD files list only the upper triangle ({columns[0]}, {columns[1]}, "
                        f"..., {columns[-1]}): the matrix is symmetric, so '{name}' is the same "
                        f"entry as 's{j}{sep}{i}'. Drop the lower-triangle columns.")
    return ""


def _read_table(text, columns, max_rows, problems):
    """Header checks and cell extraction.

    Returns ``(rows, cells, padded, delimiter)``: spreadsheet row numbers of the data rows, their
    cells in the order of ``columns``, the ``(i, j)`` positions filled in for short rows, and the
    delimiter.
    """
    delimiter = _sniff_delimiter(text)
    records = _records(text, delimiter)
    header = None
    for _, rec in records:
        if not _is_blank(rec):
            header = rec
            break
    if header is None:
        raise DataValidationError(
            "the file is empty. It needs a header row naming the columns "
            f"({', '.join(columns)}) and one row per observation."
        )
    raw = [h.replace("\ufeff", "").strip() for h in header]
    keys = [h.lower() for h in raw]
    names = [_short(h) for h in raw]  # as shown in messages
    expect = ", ".join(columns)

    if all(_looks_numeric(h) for h in raw if h):
        raise DataValidationError(
            f"the first row contains only numbers, so it looks like data. The file must start "
            f"with a header row naming the columns: {expect}.",
            row=1,
        )
    positions: dict[str, list[int]] = {}
    for j, key in enumerate(keys):
        if key:
            positions.setdefault(key, []).append(j)
    for where in positions.values():
        if len(where) > 1:
            cols = " and ".join(str(j + 1) for j in where)
            problems.add(1, names[where[0]], f"the column name appears {len(where)} times "
                                             f"(columns {cols}); each name must be unique.")
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
        hint = _lower_triangle_hint(extra, columns)
        if extra[0].lower() == "x" and "x" not in columns:
            hint = " The Fréchet-mean task takes no covariate; use task='regression' or drop 'x'."
        listed = ", ".join(f"'{c}'" for c in extra)
        problems.add(1, extra[0], f"unexpected column(s) {listed}. Expected the columns: "
                                  f"{expect}.{hint}")
    problems.raise_if_any()

    index = [positions[c][0] for c in columns]
    unnamed = [j for j, k in enumerate(keys) if not k]
    width = len(raw)
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
                "load_csv(..., max_rows=...)."
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
    return np.asarray(rows, dtype=int), cells, padded, delimiter


def _values(count: int) -> str:
    return "1 value" if count == 1 else f"{count} values"


def _looks_numeric(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


# ------------------------------------------------------------------------------ geometry
def _norm(v):
    """Euclidean norms of the rows of ``v`` (n, c), without underflow or overflow."""
    big = np.max(np.abs(v), axis=-1)
    safe = np.where(big > 0, big, 1.0)
    return big * np.sqrt(np.sum((v / safe[:, None]) ** 2, axis=-1))


def _points(m, y, rows, ok, resp, *, renormalize, atol, problems):
    """Turn response values (n, c) into points, reporting off-manifold rows (only ``ok`` rows)."""
    n = y.shape[0]
    span = _span(resp)
    if isinstance(m, SPD):
        k = m.k
        iu = np.triu_indices(k)
        mats = np.zeros((n, k, k))
        mats[:, iu[0], iu[1]] = y
        mats = mats + np.triu(mats, 1).swapaxes(-1, -2)
        eig = np.zeros((n, k))
        if ok.any():
            eig[ok] = np.linalg.eigvalsh(mats[ok])
        scale = np.max(np.abs(eig), axis=-1)
        bad = ok & (eig[:, 0] <= np.maximum(PD_RTOL * scale, PD_MIN_EIGENVALUE))
        problems.add_rows(bad, rows, None, lambda i: (
            f"the matrix in columns {span} is not positive definite (smallest eigenvalue "
            f"{eig[i, 0]:.6g}, largest {eig[i, -1]:.6g}); SPD data need strictly positive "
            f"eigenvalues, at least {PD_RTOL:g} times the largest and above "
            f"{PD_MIN_EIGENVALUE:g}."))
        return mats

    if isinstance(m, KendallShape):
        k = m.k_landmarks
        land = y.reshape(n, k, 2)
        # Centred twice: landmarks far from the origin relative to their spread leave a
        # rounding-size mean after one pass, which scaling to unit size would magnify.
        centred = land - land.mean(axis=1, keepdims=True)
        centred -= centred.mean(axis=1, keepdims=True)
        size = _norm(centred.reshape(n, -1))
        scale = _norm(land.reshape(n, -1))
        degenerate = ok & (size <= 1e-12 * np.maximum(scale, 1.0))
        problems.add_rows(degenerate, rows, None, lambda i: (
            f"all {k} landmarks (columns {span}) are at the same place, so the configuration "
            "has no shape."))
        good = ok & ~degenerate
        out = np.zeros((n, k, 2))
        # The preshape, as KendallShape.from_landmarks computes it (centre, scale to norm 1).
        out[good] = centred[good] / size[good, None, None]
        return out

    if isinstance(m, Sphere):
        norms = _norm(y)
        zero = ok & (norms == 0)
        problems.add_rows(zero, rows, None, lambda i: (
            f"the point in columns {span} is the zero vector, which is not on the sphere and "
            "cannot be renormalised."))
        if renormalize:
            # Scaled first so that tiny coordinates (1e-160) do not underflow when squared.
            big = np.max(np.abs(y), axis=-1, keepdims=True)
            unit = y / np.where(big > 0, big, 1.0)
            return unit / np.where(norms > 0, _norm(unit), 1.0)[:, None]
        off = ok & ~zero & (np.abs(norms - 1.0) > atol)
        problems.add_rows(off, rows, None, lambda i: (
            f"the point in columns {span} has norm {norms[i]:.6g}, not 1 (tolerance "
            f"atol={atol:g}), so it is not on the unit sphere. Pass renormalize=True to project "
            "every point onto the sphere."))
        return y

    if isinstance(m, Hyperbolic):
        q = minkowski(y, y)
        past = ok & (y[:, 0] <= 0)
        problems.add_rows(past, rows, resp[0], lambda i: (
            f"the first (time-like) coordinate must be positive on the hyperboloid, got "
            f"{y[i, 0]:.6g}."))
        if renormalize:
            # Scaled first so that tiny coordinates do not underflow when squared.
            big = np.max(np.abs(y), axis=-1, keepdims=True)
            unit = y / np.where(big > 0, big, 1.0)
            q_unit = minkowski(unit, unit)
            spacelike = ok & ~past & (q_unit >= 0)
            problems.add_rows(spacelike, rows, None, lambda i: (
                f"the point in columns {span} has <y, y>_L = {q[i]:.6g} >= 0, so it cannot be "
                "rescaled onto the hyperboloid <y, y>_L = -1."))
            return unit / np.sqrt(np.where(q_unit < 0, -q_unit, 1.0))[:, None]
        off = ok & ~past & (np.abs(q + 1.0) > atol * (1.0 + y[:, 0] ** 2))
        problems.add_rows(off, rows, None, lambda i: (
            f"the point in columns {span} has Minkowski square <y, y>_L = {q[i]:.6g}, not -1 "
            f"(tolerance atol={atol:g}), so it is not on the hyperboloid. Pass renormalize=True "
            "to rescale every point onto it."))
        return y

    if isinstance(m, Euclidean):
        return y

    pts = y.reshape((n, *m.point_shape))
    on = np.ones(n, dtype=bool)
    if ok.any():
        on[ok] = np.asarray(m.belongs(pts[ok], atol=atol), dtype=bool)
    problems.add_rows(ok & ~on, rows, None, lambda i: (
        f"the point in columns {span} is not on {m!r} (tolerance atol={atol:g})."))
    return pts


def load_csv(source, manifold, task="regression", *, renormalize=False, max_rows=None,
             atol=1e-6, ball=None):
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
        too many rows, empty or non-numeric cells, NaN or infinity, magnitudes above 1e12, a
        constant covariate, points off the manifold (off the sphere or the hyperboloid,
        matrices that are not positive definite, degenerate landmark configurations) or
        outside ``ball``. All problems found (up to 20 listed) are reported together, each
        with its row (header = row 1, first data row = row 2) and column.
    TypeError, ValueError
        For invalid arguments (not for problems in the data), and ``ValueError`` if
        ``DPCORE_MAX_ROWS`` is set to anything but a positive integer.

    Notes
    -----
    *Encodings.* A byte-order mark decides: UTF-8, UTF-16 (LE/BE) and UTF-32 (LE/BE) with a
    BOM are decoded accordingly. Without a BOM, text whose every other byte is zero is
    UTF-16 (as Windows tools write it) and is decoded as such; anything else must be UTF-8.
    Other encodings (Latin-1, Windows-1252, ...) are not guessed -- a wrong guess would
    silently change data -- but rejected with the byte offset, row and column of the first
    byte that is not UTF-8 (CSV files of numbers are pure ASCII, so such a byte is usually in
    a header or a stray text cell). NUL characters mark binary data and are rejected.

    *Delimiters.* The delimiter is the one of ``,``, ``;``, tab and ``|`` that occurs most
    often in the header line (comma on ties). Files separated otherwise (e.g. by spaces) have
    a one-column header and are rejected with a message that comma-separated values were
    expected. In ``;``-, tab- and ``|``-separated files a decimal comma (``0,5``) is
    accepted (so ``1,000`` there reads as 1.0); in comma-separated files it is not (``"0,5"``
    quoted is reported with a hint, unquoted it splits the row, which is reported with the
    same hint). Thousands separators (``1.000,5``, ``1 000``, ``1,000.5``) are rejected with
    a hint; Python's ``1_000`` is accepted.

    *Cells.* Header names are matched case-insensitively after stripping spaces, so column
    order is free. Cells may be quoted and padded with spaces. Blank lines and all-empty rows
    are skipped (they still count in row numbers), as are columns with an empty header and
    no values (e.g. from a trailing delimiter).

    Accepted points satisfy ``manifold.belongs(y, atol=atol)``; points that would not after
    conversion (coordinates so tiny or so far from the origin that rounding dominates) are
    reported.
    """
    m = _check_manifold(manifold)
    task = _check_task(task)
    max_rows = get_limits().max_rows if max_rows is None else check_int(max_rows, "max_rows")
    atol = check_positive(atol, "atol")
    if not isinstance(renormalize, (bool, np.bool_)):
        raise TypeError(f"`renormalize` must be a bool, got {type(renormalize).__name__}.")
    if ball is not None:
        center, radius = _check_ball(m, ball)

    columns = expected_columns(m, task)
    problems = _Collector({c: i for i, c in enumerate(columns)})
    text = _read_text(source)
    rows, cells, padded, delimiter = _read_table(text, columns, max_rows, problems)

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
    points = _points(m, y, rows, ok, resp, renormalize=renormalize, atol=atol,
                     problems=problems)
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
    m = _check_manifold(manifold)
    y = as_float_array(y, "y")
    ps = tuple(m.point_shape)
    if y.ndim != len(ps) + 1 or y.shape[1:] != ps:
        raise ValueError(f"`y` must have shape (n, {', '.join(map(str, ps))}), got {y.shape}.")
    n = y.shape[0]
    if not np.all(np.isfinite(y)):
        raise ValueError("`y` contains NaN or infinite values.")
    if isinstance(m, SPD):
        iu = np.triu_indices(m.k)
        flat = (0.5 * (y + y.swapaxes(-1, -2)))[:, iu[0], iu[1]]
    elif isinstance(m, KendallShape):
        flat = m.to_landmarks(y).reshape(n, -1)
    else:
        flat = y.reshape(n, -1)
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
