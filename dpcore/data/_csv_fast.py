"""The vectorised reader of manifold CSV files: the data rows of a clean file at the speed of a
columnar CSV parser (pyarrow, imported when first needed).

:func:`read_rows` answers only when it can vouch that its answer is exactly the row-by-row
reader's (:func:`dpcore.data._csv_cells._read_cells_slow`): the same rows, row numbers, floats
(bit for bit), group names and count of dropped rows. Whenever a file has a problem the row
reader would report, or something this reader does not model, it returns ``None`` and the row
reader reads the file again, finding and wording every problem. What it models:

* *Records.* Python's :mod:`csv` (delimiter, ``"`` quotes doubled inside quoted cells, lines
  ended by ``\\n``, ``\\r\\n`` or ``\\r``) and pyarrow split a record alike when every quote
  opens a cell (at its first character) or closes one (before a delimiter, a line break or the
  end) or is doubled inside one; this is checked on the bytes (by counts alone when every cell
  is quoted), and any other quote hands the file over (Python keeps a quote inside an unquoted
  cell as text; pyarrow would not). Each record must hold one line: with as many records as
  non-empty lines, the row numbers are the line numbers. Blank lines are skipped and counted;
  a record of empty cells (``,,,``) is skipped too. A file with a line as long as the csv
  module's field size limit is handed over (the row reader may reject a long cell).
* *Numbers.* A cell is read by pyarrow only if it is a plain decimal number (digits, one
  point, an exponent, a sign) once the white space that ``float`` strips is gone: pyarrow's
  parser (fast_float) and Python's are both correctly rounded, so they give the same float;
  everything else either fails in pyarrow too (``1_000``, non-ASCII digits: handed over) or
  is not finite (``nan``, ``inf``, ``1e400``: handed over). Decimal commas follow
  :mod:`dpcore.data.tables` (any column of a ``;``, tab or ``|`` file; in a comma-separated
  file a column of quoted decimal commas without decimal points, one of which at least cannot
  be a thousands separator), the patterns checked on ASCII text where RE2's and Python's
  classes agree, or by :func:`_plans` on the bytes.
* *Blank cells.* A cell is blank when it holds only characters :meth:`str.isspace` accepts
  (:data:`PY_SPACE`), as for the row reader; a number is stripped of those ``float`` ignores
  (:data:`FLOAT_SPACE`).

pyarrow parses on one thread: measured on two cores that is as fast as its thread pool, and
other work on the machine slows it less. ``benchmarks/bench_csv.py`` times each layout.
"""

from __future__ import annotations

import csv
import itertools
from dataclasses import dataclass

import numpy as np

from ._decoding import lines
from .tables import _DECIMAL_COMMA as _PY_DECIMAL_COMMA
from .tables import _THOUSANDS_OR_DECIMAL as _PY_THOUSANDS
from .tables import HUGE_VALUE

#: Every character that :meth:`str.isspace` (so :meth:`str.strip`) treats as white space; the
#: tests check it against all of Unicode.
PY_SPACE = ("\t\n\x0b\x0c\r\x1c\x1d\x1e\x1f \x85\xa0\u1680\u2000\u2001\u2002\u2003\u2004"
            "\u2005\u2006\u2007\u2008\u2009\u200a\u2028\u2029\u202f\u205f\u3000")


def _float_strips(c) -> bool:
    try:
        return float(f"{c}1{c}") == 1.0
    except ValueError:
        return False


#: The white space ``float`` strips from a number: not quite :data:`PY_SPACE` (CPython keeps
#: the separators ``\x1c``-``\x1f``, which :meth:`str.strip` removes).
FLOAT_SPACE = "".join(c for c in PY_SPACE if _float_strips(c))
#: A decimal-comma number, and one that may as well be a thousands separator, on a cell
#: stripped of white space (the patterns of :mod:`dpcore.data.tables`, ASCII only).
_DECIMAL_COMMA = r"^[+-]?[0-9]*,[0-9]+(?:[eE][+-]?[0-9]+)?$"
_THOUSANDS_OR_DECIMAL = r"^[+-]?[1-9][0-9]{0,2},[0-9]{3}$"
_QUOTE, _COMMA, _LF, _CR, _ZERO = 34, 44, 10, 13, 48
#: Records read with Python's csv module to find, per column, a decimal comma that cannot be
#: a thousands separator (comma-separated files with quoted decimal commas).
_PREFIX_RECORDS = 64


@dataclass(frozen=True)
class _Body:
    """The data rows of a file as UTF-8 bytes: ``buf[start:stop]`` (trailing line breaks
    left out), ``b`` the same bytes as a uint8 array, and whether they hold a quote and a
    ``\\r``."""

    buf: bytes
    start: int
    stop: int
    b: np.ndarray
    quoted: bool
    cr: bool

    def has(self, sub) -> bool:
        return self.buf.find(sub, self.start, self.stop) >= 0


def _body(text, end):
    """The :class:`_Body` after position ``end`` of ``text``; None for a lone surrogate (in
    a text source) or no data. ``text`` may be ASCII bytes (then they are the buffer)."""
    if isinstance(text, bytes):
        buf, start = text, end
    else:
        try:
            buf = text.encode("utf-8")  # in one go: slicing a long str first costs more
        except UnicodeEncodeError:
            return None
        start = end if len(buf) == len(text) else len(text[:end].encode("utf-8"))
    stop = len(buf)
    while stop > start and buf[stop - 1] in (_LF, _CR):
        stop -= 1
    if stop == start or buf.startswith(b"\xef\xbb\xbf", start):
        return None  # pyarrow would drop a byte-order mark there; Python keeps it
    b = np.frombuffer(buf, dtype=np.uint8, count=stop - start, offset=start)
    return _Body(buf, start, stop, b, buf.find(b'"', start, stop) >= 0,
                 buf.find(b"\r", start, stop) >= 0)


def read_rows(text, end, header_row, delimiter, header, max_rows, blank, need):
    """The data rows of ``text`` after its header, or ``None`` (see the module's docstring).

    Parameters
    ----------
    text : str or bytes
        The decoded file, or its bytes when they are ASCII (its text decoded as ASCII).
    end : int
        Where the header record ends in ``text`` (after its line break).
    header_row : int
        Spreadsheet row number of the header record.
    delimiter : str
    header : dpcore.data._csv_layouts._Header
        The checked header (columns read, their fields, the unnamed fields).
    max_rows : int
    blank : {"error", "drop"}
    need : int
        Fewest data rows the task takes (fewer are the row reader's to word).

    Returns
    -------
    (rows, values, groups, dropped) or None
        Spreadsheet row numbers (int array), the numbers of ``header.layout.columns`` (float
        array, shape (n, c)), the stripped group names (object array, or None without a
        group column) and the rows dropped for an empty cell.
    """
    try:  # shipped with Streamlit; the library reads without it, row by row
        import pyarrow.compute  # noqa: F401
        import pyarrow.csv  # noqa: F401
    except ImportError:
        return None
    body = _body(text, end)
    if body is None or not _short_lines(body):
        return None
    width = len(header.keys)
    numeric = header.index[:len(header.layout.columns)]
    n_lines, proven = None, []
    if body.quoted:
        if delimiter == ",":  # the columns that may read decimal commas
            proven = _unambiguous(text, end, numeric)
        quotes = _quotes(body, delimiter, bool(proven))
        if quotes is None:
            return None
        n_lines, risky = quotes
        proven = [] if risky else proven
    group = header.index[len(numeric)] if len(header.index) > len(numeric) else None
    unnamed = [j for j, k in enumerate(header.keys) if not k]
    texts = [*unnamed, *([] if group is None else [group])]
    got = None
    for decimal, floats in _plans(body, delimiter, numeric, proven):
        strings = [j for j in numeric if j not in floats]
        table = _parse(body, delimiter, width, floats, [*texts, *strings], decimal)
        if table is not None and table.num_rows <= max_rows:
            got = _typed(table, numeric, strings, group, unnamed, blank, delimiter)
            if got is not None:
                break
    if got is None:  # blank records, padding pyarrow keeps, mixed decimal marks, ...
        table = _parse(body, delimiter, width, [], range(width))
        if table is None or table.num_rows > max_rows:
            return None  # the row reader words the problem (or which limit)
        got = _texts(table, delimiter, numeric, group, unnamed, blank)
        if got is None:
            return None
    line = _line_numbers(body, table.num_rows, n_lines)
    if line is None:
        return None
    keep, dropped, values, groups = got
    line = line if keep is None else line[keep]
    if line.size < need:
        return None
    return header_row + 1 + line, values, groups, dropped


# ------------------------------------------------------------------------------ records
def _quotes(body, delimiter, commas):
    """``(lines, risky)`` of the data rows, or None unless every quote opens a cell (at its
    first character), closes one (before a delimiter, a line break or the end) or is doubled
    inside one, so that Python's csv module and pyarrow split the records alike. ``lines``
    counts the lines (None: not counted); ``risky`` (with ``commas`` only): a closing quote
    follows a comma, or a comma inside quotes comes before an exponent or white space
    (pyarrow would read ``"5,"``, ``"5,e3"`` and ``"5, "``, Python would not).

    Files whose every cell is quoted are shown so by counting (:func:`_all_quoted`), others
    by the positions of their quotes, which pair up in order: an opening one (even index)
    must start a cell or follow its predecessor (a doubled quote), a closing one end a cell
    or precede its successor.
    """
    b = body.b
    if b[0] == _QUOTE and b[-1] == _QUOTE:
        got = _all_quoted(body, delimiter, commas)
        if got is not None:
            return got
    q = np.flatnonzero(b == _QUOTE)
    if q.size % 2:
        return None
    opening, closing = q[0::2], q[1::2]
    first = opening[0] == 0  # a quote at the very start opens a cell
    last = closing[-1] == b.size - 1
    if not (_edges(b[opening[int(first):] - 1], delimiter)
            and _edges(b[closing[:closing.size - int(last)] + 1], delimiter)):
        return None
    if not commas or (b[closing - 1] == _COMMA).any():
        return None, commas
    risky = _risky_commas(body)
    k = np.searchsorted(opening, risky) - 1
    return None, bool(((k >= 0) & (risky < closing[np.maximum(k, 0)])).any())


def _all_quoted(body, delimiter, commas, step=1 << 17):
    """:func:`_quotes` of data rows that start and end with a quote, when their quotes are
    the first byte, the last one and the pairs ``"s"`` around each separator ``s`` (the
    delimiter, ``\\n``, ``\\r`` or ``\\r\\n``), each in one of them: else None. Then the
    quotes alternate (the first opens, the one before a separator closes, the one after it
    opens, the last closes), every cell is quoted and all but the separators is inside
    quotes. Counted in slices that stay in the processor's cache: no quote is in two of these
    (none has a separator on both sides, so none follows a comma; none at the ends beside
    one), so each is in one if the quotes are twice the pairs and two.
    """
    b, n, d = body.b, body.b.size, ord(delimiter)
    if n < 2 or b[1] in (_LF, _CR, d) or b[-2] in (_LF, _CR, d):
        return None
    quotes = pairs = breaks = 0
    for i in range(0, n, step):
        lo = max(i - 1, 0)  # one byte before the slice and three after it
        part = b[lo:i + step + 3]
        own = slice(i - lo, i - lo + min(step, n - i))  # the bytes of this slice
        q, lf = part == _QUOTE, part == _LF
        sep = (part == d) | lf
        if body.cr:
            cr = part == _CR
            sep |= cr
            crlf = cr[:-1] & lf[1:]
            breaks += int(np.count_nonzero(cr[own])) - int(np.count_nonzero(crlf[own]))
        breaks += int(np.count_nonzero(lf[own]))
        quotes += int(np.count_nonzero(q[own]))
        closes = q[:-1] & sep[1:]  # a quote before a separator
        if (sep[:-2] & closes[1:]).any():
            return None  # a quote between two separators
        pairs += int(np.count_nonzero((closes[:-1] & q[2:])[own]))  # "s" (one byte)
        if body.cr:
            pairs += int(np.count_nonzero((q[:-3] & crlf[1:-1] & q[3:])[own]))  # "\r\n"
    if quotes != 2 * pairs + 2:
        return None
    return breaks + 1, commas and _risky_commas(body).size > 0


def _edges(beside, delimiter) -> bool:
    """Whether every byte ``beside`` a quote is a delimiter, a line break or a quote."""
    return bool(((beside == ord(delimiter)) | (beside == _LF) | (beside == _CR)
                 | (beside == _QUOTE)).all())


def _short_lines(body) -> bool:
    """Whether every line is shorter than the csv module's field size limit: no stretch of
    half the limit without a line break, so no line of the limit's length."""
    step = max(csv.field_size_limit() // 2, 1)
    buf = body.buf
    for start in range(body.start, body.stop - step + 1, step):
        stop = start + step
        if buf.find(b"\n", start, stop) < 0 and buf.find(b"\r", start, stop) < 0:
            return False
    return True


def _line_numbers(body, n_rows, n_lines=None):
    """Index (from 0) of the line of each of the ``n_rows`` rows pyarrow parsed, or None when
    they do not pair up with the lines (a record over several lines; with quotes, any blank
    line). ``n_lines``: the count of lines, if known.

    Without quotes every line that is not empty is one record for both readers (pyarrow
    skips empty lines, Python's csv module yields empty records), so only empty lines shift
    the row numbers.
    """
    b = body.b
    if n_rows == (_count_lines(b, body.cr) if n_lines is None else n_lines):
        return np.arange(n_rows)
    if body.quoted:
        return None
    lf, cr = b == _LF, b == _CR
    brk = lf.copy()
    brk[:-1] |= cr[:-1] & ~lf[1:]  # a lone \r ends a line; in \r\n the \n does
    ends = np.flatnonzero(brk)
    crlf = np.zeros(ends.size, dtype=np.int64)
    crlf[ends > 0] = cr[ends[ends > 0] - 1] & lf[ends[ends > 0]]
    starts = np.concatenate([[0], ends + 1])
    stops = np.concatenate([ends - crlf, [b.size]])
    full = np.flatnonzero(stops > starts)
    return full if full.size == n_rows else None


def _count_lines(b, cr, step=1 << 18):
    """The lines of ``b``: one more than its line breaks (``\\n``; with ``cr``, ``\\r`` too,
    but for the one of ``\\r\\n``), counted in slices that stay in the processor's cache."""
    total = 1
    for i in range(0, b.size, step):
        part = b[i:i + step + 1]  # the slice and the byte after it
        own = part[:step]
        total += int(np.count_nonzero(own == _LF))
        if cr:
            ends = own == _CR
            total += int(np.count_nonzero(ends)) - int(np.count_nonzero(
                ends[:part.size - 1] & (part[1:] == _LF)))
    return total


def _risky_commas(body, limit=256, step=1 << 16):
    """Positions in the data rows of the commas before an ``e``, an ``E``, a space or a tab:
    looked for beside each of these while they are few (``limit``), else in slices that stay
    in the processor's cache (``x | 32`` is ``e`` for ``e`` and ``E`` alone)."""
    buf, start, seen, hits = body.buf, body.start, 0, []
    for c in b"eE \t":
        at = buf.find(c, start + 1, body.stop) if seen <= limit else -1
        while at >= 0 and seen <= limit:
            if buf[at - 1] == _COMMA:
                hits.append(at - 1 - start)
            seen, at = seen + 1, buf.find(c, at + 1, body.stop)
    if seen <= limit:
        return np.array(sorted(hits), dtype=np.intp)
    b, parts = body.b, []
    for i in range(0, b.size, step):
        part = b[i:i + step + 1]
        after = part[1:]
        hit = (part[:-1] == _COMMA) & (((after | 32) == ord("e")) | (after == ord(" "))
                                       | (after == ord("\t")))
        if hit.any():
            parts.append(np.flatnonzero(hit) + i)
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.intp)


def _comma_before_non_digit(b, step=1 << 16) -> bool:
    """Whether a comma of ``b`` comes before a byte that is not a digit, in slices that stay
    in the processor's cache."""
    for i in range(0, b.size - 1, step):
        part = b[i:i + step + 1]
        if ((part[:-1] == _COMMA) & ((part[1:] - _ZERO) > 9)).any():  # uint8: wraps below 0
            return True
    return False


def _plans(body, delimiter, numeric, proven):
    """How pyarrow tries to read the numbers: ``(decimal mark, the columns read as floats)``
    in turn (the other columns read are text, converted by :func:`_numbers`). A decimal
    comma is tried first where the file seems to have them and every number pyarrow would
    accept with it is read alike by the row reader.

    pyarrow (fast_float with ``,`` for the point) takes ``5,``, ``5,e3`` and ``5, `` too,
    which the row reader rejects. In a ``;``, tab or ``|`` file every comma must therefore
    come before a digit. In a comma-separated file, where a comma in a number is quoted, no
    quoted cell may end with one and no comma inside quotes come before an exponent or white
    space (:func:`_quotes`); and there a column reads decimal commas only if one of them at
    least cannot be a thousands separator, which is sought in the first records (``proven``,
    :func:`_unambiguous`; none if the quotes forbid): the columns that show none are read as
    text.
    """
    plain = [(".", numeric)]
    if (delimiter == "," and not body.quoted) or not body.has(b","):
        return plain
    b = body.b
    if delimiter != ",":
        if b[-1] == _COMMA or _comma_before_non_digit(b):
            return plain
        return [(",", numeric), *plain]
    if not proven:
        return plain
    return [(",", proven), *plain]


def _unambiguous(text, end, numeric) -> list:
    """The columns ``numeric`` (fields of a comma-separated file) that hold, in the first
    records after ``end``, a decimal comma that cannot be a thousands separator (as
    :mod:`dpcore.data.tables` decides)."""
    try:
        records = list(itertools.islice(csv.reader(lines(text, end), strict=True),
                                        _PREFIX_RECORDS))
    except csv.Error:
        return []
    return [j for j in numeric
            if any(len(rec) > j and _PY_DECIMAL_COMMA.fullmatch(rec[j])
                   and not _PY_THOUSANDS.fullmatch(rec[j]) for rec in records)]


def _parse(body, delimiter, width, numeric, texts, decimal="."):
    """pyarrow's table of the fields ``numeric`` (as float64, named ``f{j}``; an empty cell
    is null) and ``texts`` (as strings) of every record, or None when pyarrow fails (a
    record of another width, a cell that is not a plain number, ...)."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    quoted = body.quoted
    names = [f"f{j}" for j in range(width)]
    types = {f"f{j}": pa.string() for j in texts}
    types.update({f"f{j}": pa.float64() for j in numeric})
    try:
        return pacsv.read_csv(
            pa.py_buffer(memoryview(body.buf)[body.start:body.stop]),
            read_options=pacsv.ReadOptions(column_names=names, use_threads=False),
            parse_options=pacsv.ParseOptions(
                delimiter=delimiter, quote_char='"' if quoted else False, double_quote=True,
                escape_char=False, newlines_in_values=quoted, ignore_empty_lines=True),
            convert_options=pacsv.ConvertOptions(
                include_columns=list(types), column_types=types, null_values=[""],
                strings_can_be_null=False, quoted_strings_can_be_null=False,
                check_utf8=False, decimal_point=decimal),
        )
    except pa.ArrowException:
        return None


# ------------------------------------------------------------------------------ cells
def _trimmed(column, space=PY_SPACE):
    """The cells of a string column stripped of ``space`` at both ends (by default as
    :meth:`str.strip` strips them)."""
    import pyarrow.compute as pc

    return pc.utf8_trim(column, characters=space)


def _empty(trimmed):
    """Which stripped cells are empty (a boolean array)."""
    import pyarrow.compute as pc

    return pc.equal(pc.binary_length(trimmed), 0).to_numpy()


def _finite(values):
    """``values`` if every number is finite and at most :data:`HUGE_VALUE` in magnitude (the
    row reader reports the others), else None."""
    if values.size and not (values.min() >= -HUGE_VALUE and values.max() <= HUGE_VALUE):
        return None  # NaN fails both comparisons
    return values


def _typed(table, numeric, strings, group, unnamed, blank, delimiter):
    """``(keep, dropped, values, groups)`` from a table whose numeric fields pyarrow read as
    numbers (those in ``strings`` as text), or None. ``keep`` marks the rows kept (None: all),
    all but the ``dropped`` ones with an empty cell read."""
    import pyarrow as pa
    import pyarrow.compute as pc

    for j in unnamed:
        if not _empty(_trimmed(table.column(f"f{j}"))).all():
            return None  # a value under an unnamed column: the row reader reports it
    n = table.num_rows
    values = np.empty((n, len(numeric)))
    empty = np.zeros(n, dtype=int)
    floats = {}
    for i, j in enumerate(numeric):
        column = table.column(f"f{j}")
        if j in strings:
            got = _numbers(_trimmed(column, FLOAT_SPACE), delimiter)
            if got is None:
                return None
            values[:, i] = got
            continue
        if column.null_count:
            empty += pc.is_null(column).to_numpy()
        floats[f"f{j}"] = i
    _fill(values, table, floats)
    names = None
    if group is not None:
        names = _trimmed(table.column(f"f{group}"))
        empty += _empty(names)
    keep = None
    if empty.any():
        if blank != "drop" or (empty == len(numeric) + (group is not None)).any():
            return None  # maybe a record of blank cells: the text reader tells
        keep = empty == 0
        values = np.compress(keep, values, axis=0)  # faster than a mask on rows
        names = None if names is None else names.filter(pa.array(keep))
    values = _finite(values)
    if values is None:
        return None
    groups = None if names is None else _strings(names)
    return keep, 0 if keep is None else n - int(keep.sum()), values, groups


def _fill(values, table, columns):
    """Write the float fields ``columns`` (name -> column of ``values``) of ``table`` into
    ``values`` one record batch at a time, which stays in the processor's cache (a null
    gives NaN, as ``to_numpy`` of the whole column does)."""
    if not columns:
        return
    start = 0
    for batch in table.select(list(columns)).to_batches():
        block = values[start:start + batch.num_rows]
        for k, i in enumerate(columns.values()):
            block[:, i] = batch.column(k).to_numpy(zero_copy_only=False)
        start += batch.num_rows


def _texts(table, delimiter, numeric, group, unnamed, blank):
    """``(keep, dropped, values, groups)`` from a table of every field as text, or None:
    records of blank cells skipped, rows with a blank cell read dropped (``blank="drop"``),
    cells read as numbers as the row reader reads them."""
    import pyarrow as pa

    read = [*numeric, *([group] if group is not None else [])]
    trimmed = {j: _trimmed(table.column(f"f{j}")) for j in read}
    empty = {j: _empty(trimmed[j]) for j in read}
    some = np.logical_or.reduce([empty[j] for j in read])
    every = np.logical_and.reduce([empty[j] for j in read])
    filled = np.ones(table.num_rows, dtype=bool)
    if every.any():  # maybe records of blank cells, which are skipped
        rest = np.flatnonzero(every)
        others = [j for j in range(table.num_columns) if j not in read]
        for j in others:
            cells = _trimmed(table.column(f"f{j}").take(pa.array(rest)))
            rest = rest[_empty(cells)]
        filled[rest] = False
    for j in unnamed:
        if not (_empty(_trimmed(table.column(f"f{j}"))) | ~filled).all():
            return None  # a value under an unnamed column: the row reader reports it
    missing = some & filled
    if missing.any() and blank != "drop":
        return None
    keep = filled & ~missing
    if not keep.any():
        return None
    mask = pa.array(keep)
    values = np.empty((int(keep.sum()), len(numeric)))
    for i, j in enumerate(numeric):
        got = _numbers(_trimmed(table.column(f"f{j}").filter(mask), FLOAT_SPACE), delimiter)
        if got is None:
            return None
        values[:, i] = got
    groups = None
    if group is not None:
        groups = _strings(trimmed[group].filter(mask))
    values = _finite(values)
    if values is None:
        return None
    # Rows dropped for a blank cell count; skipped records of blank cells do not.
    return keep, int(missing.sum()), values, groups


def _strings(column):
    """A string column as an object array of str, as ``to_numpy`` gives it; a column that
    repeats its values (a group column: one name per person) through its distinct values,
    made once each."""
    import pyarrow.compute as pc

    head = column.slice(0, _SAMPLE)
    if len(column) < 2 * _SAMPLE or pc.count_distinct(head).as_py() > _SAMPLE // 2:
        return column.to_numpy()
    coded = pc.dictionary_encode(column)
    if hasattr(coded, "combine_chunks"):  # a ChunkedArray (a table's column)
        coded = coded.combine_chunks()
    return coded.dictionary.to_numpy(zero_copy_only=False)[coded.indices.to_numpy()]


#: Values of a string column :func:`_strings` looks at to tell whether it repeats them.
_SAMPLE = 1024


def _numbers(cells, delimiter):
    """Stripped cells (text) as floats read as the row reader reads them, or None."""
    import pyarrow as pa
    import pyarrow.compute as pc

    try:
        return pc.cast(cells, pa.float64()).to_numpy()
    except pa.ArrowException:
        pass
    commas = pc.match_substring(cells, ",")
    if not pc.any(commas).as_py():
        return None
    with_comma = cells.filter(commas)
    if not pc.all(pc.match_substring_regex(with_comma, _DECIMAL_COMMA)).as_py():
        return None  # e.g. 1,000.5 or 1,2,3: reported by the row reader
    if delimiter == ",":
        # A comma-separated file reads a column with decimal commas only if none of its
        # numbers has a decimal point and one comma at least is no thousands separator.
        if pc.any(pc.match_substring(cells, ".")).as_py():
            return None
        if pc.all(pc.match_substring_regex(with_comma, _THOUSANDS_OR_DECIMAL)).as_py():
            return None
    try:
        return pc.cast(pc.replace_substring(cells, ",", "."), pa.float64()).to_numpy()
    except pa.ArrowException:
        return None
