"""Page logic of the linear-regression page: the upload parser, the example data, OLS and
the error table. Uploaded bytes are parsed in memory, never written to disk or logged."""

from __future__ import annotations

import csv
import io
import math
import re
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from dpcore.settings import get_limits

from .common import CAPS

__all__ = [
    "CsvParseError",
    "example_regression_frame",
    "linear_fit",
    "mse_table",
    "nice_bounds",
    "NumericTable",
    "parse_numeric_csv",
    "select_numeric",
]

class CsvParseError(ValueError):
    """An uploaded table could not be read; ``problems`` lists what is wrong, by row and column.

    Parameters
    ----------
    problems : list of str
        Messages, each naming its row (header = row 1) and column where that applies.
    """

    def __init__(self, problems):
        self.problems = list(problems)
        super().__init__("\n".join(self.problems))


@dataclass
class NumericTable:
    """A parsed CSV table, all cells as text, with the columns that look numeric.

    Attributes
    ----------
    frame : pandas.DataFrame
        The cells as stripped strings (no type conversion yet).
    numeric_columns : list of str
        Columns whose non-empty cells are mostly numbers (candidates for the covariate and
        the responses).
    other_columns : list of str
        The remaining (text) columns, ignored.
    """

    frame: pd.DataFrame
    numeric_columns: list = field(default_factory=list)
    other_columns: list = field(default_factory=list)


_LINE_RE = re.compile(r"line (\d+)")


_FIELDS_RE = re.compile(r"Expected (\d+) fields in line (\d+), saw (\d+)")


def _decode_upload(data):
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"`data` must be bytes, got {type(data).__name__}.")
    data = bytes(data)
    if len(data) > CAPS["upload_bytes"]:
        raise CsvParseError([f"The file has {len(data):,} bytes; this page reads at most "
                             f"{CAPS['upload_bytes']:,}."])
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        try:
            return data.decode("utf-16")
        except UnicodeDecodeError as exc:
            raise CsvParseError([f"The file starts like UTF-16 but byte {exc.start} cannot be "
                                 "decoded."]) from exc
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        row = data[: exc.start].count(b"\n") + 1
        raise CsvParseError([f"Row {row}: byte {exc.start} (0x{data[exc.start]:02x}) is not "
                             "UTF-8 text. Save the file as UTF-8 CSV."]) from exc
    if "\x00" in text:
        raise CsvParseError(["The file contains NUL characters: it looks binary, not CSV."])
    return text


def _to_float(cell):
    """A cell as a finite float, or None."""
    try:
        value = float(cell)
    except (TypeError, ValueError):
        return None
    return value if math.isfinite(value) else None


def parse_numeric_csv(data, *, max_rows=None):
    """Parse an uploaded CSV (bytes) in memory into text cells and find its numeric columns.

    The first row is the header. The delimiter is the most frequent of ``,``, ``;``, tab and
    ``|`` in the header line. Nothing is written to disk.

    Parameters
    ----------
    data : bytes
        The file's content (UTF-8, with or without a byte-order mark, or UTF-16 with a BOM).
    max_rows : int, optional
        Most data rows accepted (default: :func:`dpcore.settings.get_limits().max_rows`).

    Returns
    -------
    NumericTable

    Raises
    ------
    CsvParseError
        For an empty, binary or malformed file, a missing or duplicated header name, ragged
        rows, too many rows or columns, or no numeric column. Messages name the row
        (header = row 1, first data row = row 2) and the column.
    """
    max_rows = get_limits().max_rows if max_rows is None else int(max_rows)
    text = _decode_upload(data)
    if not text.strip():
        raise CsvParseError(["The file is empty."])
    first = text.splitlines()[0] if text.splitlines() else ""
    delimiter = max([",", ";", "\t", "|"], key=lambda d: (first.count(d), d == ","))
    try:
        raw = pd.read_csv(io.StringIO(text), sep=delimiter, header=None, dtype=str,
                          keep_default_na=False, skip_blank_lines=True, engine="c",
                          nrows=max_rows + 2, quoting=csv.QUOTE_MINIMAL)
    except pd.errors.ParserError as exc:
        msg = str(exc)
        m = _FIELDS_RE.search(msg)
        if m:
            expected, line, saw = (int(g) for g in m.groups())
            raise CsvParseError([f"Row {line}: {saw} fields, but the header row has "
                                 f"{expected} columns."]) from exc
        m = _LINE_RE.search(msg)
        where = f"Row {m.group(1)}: " if m else ""
        raise CsvParseError([f"{where}the file is not valid CSV ({msg.splitlines()[0]})."]) \
            from exc
    except pd.errors.EmptyDataError as exc:
        raise CsvParseError(["The file is empty."]) from exc
    if raw.shape[1] > CAPS["upload_columns"]:
        raise CsvParseError([f"The file has {raw.shape[1]} columns; at most "
                             f"{CAPS['upload_columns']} are read."])
    header = [str(h).strip() for h in raw.iloc[0].tolist()]
    problems = []
    for j, h in enumerate(header):
        if not h:
            problems.append(f"Header (row 1), column {j + 1}: the column has no name.")
    seen = {}
    for j, h in enumerate(header):
        if h and h.lower() in seen:
            problems.append(f"Header (row 1): column name '{h}' appears twice (columns "
                            f"{seen[h.lower()] + 1} and {j + 1}).")
        seen.setdefault(h.lower(), j)
    if problems:
        raise CsvParseError(problems)
    body = raw.iloc[1:].reset_index(drop=True)
    body.columns = header
    # pandas skips blank lines; keep the spreadsheet row numbers anyway (header = 1).
    lines = [i + 1 for i, line in enumerate(text.splitlines()) if line.strip()]
    body.index = pd.Index(lines[1: 1 + len(body)] if len(lines) > len(body) else
                          range(2, 2 + len(body)), name="row")
    if len(body) == 0:
        raise CsvParseError(["The file has a header row but no data rows."])
    if len(body) > max_rows:
        raise CsvParseError([f"The file has more than {max_rows:,} data rows; this page reads "
                             f"at most {max_rows:,}."])
    body = body.apply(lambda col: col.str.strip())
    numeric, other = [], []
    for name in header:
        cells = body[name]
        filled = cells[cells != ""]
        ok = filled.map(lambda c: _to_float(c) is not None)
        if len(filled) and ok.mean() >= 0.5:
            numeric.append(name)
        else:
            other.append(name)
    if not numeric:
        raise CsvParseError(["No column holds numbers: every column is text or empty."])
    return NumericTable(frame=body, numeric_columns=numeric, other_columns=other)


def select_numeric(table, columns):
    """The chosen columns as floats, checking every cell.

    Parameters
    ----------
    table : NumericTable
    columns : sequence of str
        Column names, in the order wanted.

    Returns
    -------
    ndarray, shape (n_rows, len(columns))

    Raises
    ------
    CsvParseError
        Listing (up to 20) empty, non-numeric, NaN or infinite cells by row and column.
    """
    problems, total = [], 0
    out = np.empty((len(table.frame), len(columns)))
    rows = table.frame.index.to_numpy()
    for j, name in enumerate(columns):
        if name not in table.frame.columns:
            raise CsvParseError([f"Column '{name}' is not in the file."])
        for i, cell in enumerate(table.frame[name].tolist()):
            value = _to_float(cell)
            if value is None:
                total += 1
                if len(problems) < 20:
                    what = "is empty" if cell == "" else f"'{cell[:30]}' is not a finite number"
                    problems.append(f"Row {rows[i]}, column '{name}': {what}.")
                out[i, j] = np.nan
            else:
                out[i, j] = value
    if total:
        if total > len(problems):
            problems.append(f"... and {total - len(problems)} more cells.")
        raise CsvParseError(problems)
    return out


def example_regression_frame(n=100, *, seed=0):
    """A generated example for the linear-regression page (made in memory, never read from disk).

    Three responses depend linearly on a covariate ``dose`` in [0, 10] with Gaussian noise;
    a text column ``site`` shows that non-numeric columns are ignored.

    Parameters
    ----------
    n : int
        Rows (capped by ``CAPS["example_rows"]``).
    seed : int

    Returns
    -------
    pandas.DataFrame
        Columns ``site``, ``dose``, ``response_a``, ``response_b``, ``response_c``.
    """
    n = int(min(max(int(n), 3), CAPS["example_rows"]))
    rng = np.random.default_rng(seed)
    dose = rng.uniform(0.0, 10.0, n)
    frame = pd.DataFrame({
        "site": rng.choice(["north", "south", "east"], n),
        "dose": np.round(dose, 3),
        "response_a": np.round(2.0 + 0.8 * dose + rng.normal(0.0, 1.0, n), 3),
        "response_b": np.round(10.0 - 0.5 * dose + rng.normal(0.0, 0.7, n), 3),
        "response_c": np.round(5.0 + 0.1 * dose + rng.normal(0.0, 1.5, n), 3),
    })
    return frame


def linear_fit(x, y):
    """Ordinary least squares, one line per response column.

    Parameters
    ----------
    x : array-like, shape (n,)
    y : array-like, shape (n, d)

    Returns
    -------
    (intercept, slope) : tuple of ndarray, each shape (d,)
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    xc = x - x.mean()
    denom = float(np.sum(xc**2))
    if denom == 0:
        raise ValueError("The covariate is constant: no line can be fitted.")
    slope = xc @ (y - y.mean(axis=0)) / denom
    return y.mean(axis=0) - slope * x.mean(), slope


def nice_bounds(values, *, pad=0.05):
    """An interval holding ``values``, widened by ``pad`` of its width and rounded outward.

    Parameters
    ----------
    values : array-like
    pad : float

    Returns
    -------
    (low, high) : tuple of float
    """
    v = np.asarray(values, dtype=float)
    lo, hi = float(np.min(v)), float(np.max(v))
    width = hi - lo if hi > lo else max(abs(hi), 1.0)
    lo, hi = lo - pad * width, hi + pad * width
    step = 10.0 ** math.floor(math.log10(width)) / 10.0
    return math.floor(lo / step) * step, math.ceil(hi / step) * step


def mse_table(y, names, predictions):
    """Mean squared error per response and over all responses.

    Parameters
    ----------
    y : array-like, shape (n, d)
    names : sequence of str
        Response names.
    predictions : mapping of str to array-like, shape (n, d)
        Fitted values per method (e.g. non-private, dpcore, diffprivlib).

    Returns
    -------
    pandas.DataFrame
        One row per response plus a row ``"all responses"``; one column per method.
    """
    y = np.asarray(y, dtype=float)
    data = {}
    for method, pred in predictions.items():
        err = (y - np.asarray(pred, dtype=float)) ** 2
        data[method] = list(err.mean(axis=0)) + [float(err.mean())]
    return pd.DataFrame(data, index=pd.Index([*names, "all responses"], name="response"))
