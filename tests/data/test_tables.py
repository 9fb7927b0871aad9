"""The generic numeric CSV reader (dpcore.data.tables): read_table and its two halves."""

from __future__ import annotations

import builtins
import codecs
import doctest
import io

import numpy as np
import pytest

import dpcore.data as data_pkg
import dpcore.exceptions as exceptions
from dpcore.data import DataValidationError, Table, csvio, read_table, scan_table, tables
from dpcore.manifolds import Sphere

GOOD = "x,y\n0,1.5\n1,2.5\n2,3.5\n"


def read_error(content, **kwargs) -> DataValidationError:
    """``read_table`` on ``content`` (str or bytes) expecting a DataValidationError."""
    data = content.encode() if isinstance(content, str) else content
    with pytest.raises(DataValidationError) as info:
        read_table(data, **kwargs)
    return info.value


def assert_locates(err, row, column):
    """The message and the attributes name ``row`` and ``column``."""
    text = str(err)
    if row is not None:
        assert f"Row {row}" in text or (row == 1 and "Header (row 1)" in text), text
    if column is not None:
        assert f"column '{column}'" in text, text
    assert any((p.row, p.column) == (row, column) for p in err.problems), err.problems


# --------------------------------------------------------------------------- basics
def test_reads_header_values_and_rows():
    t = read_table(GOOD.encode())
    assert isinstance(t, Table)
    assert t.header == ("x", "y") and t.columns == ("x", "y")
    np.testing.assert_array_equal(t.values, [[0, 1.5], [1, 2.5], [2, 3.5]])
    assert t.values.dtype == float
    np.testing.assert_array_equal(t.rows, [2, 3, 4])
    assert (t.text_columns, t.dropped, t.delimiter) == ((), 0, ",")
    np.testing.assert_array_equal(t.column("Y"), [1.5, 2.5, 3.5])
    with pytest.raises(KeyError):
        t.column("z")


def test_columns_are_chosen_case_insensitively_in_the_order_asked():
    t = read_table(b" Dose ,Name,Yield\n1,a,2\n3,b,4\n", columns=["yield", "DOSE"])
    assert t.columns == ("Yield", "Dose") and t.header == ("Dose", "Name", "Yield")
    np.testing.assert_array_equal(t.values, [[2, 1], [4, 3]])


def test_unknown_column_is_named():
    err = read_error(GOOD, columns=["x", "z"])
    assert_locates(err, 1, "z")
    assert "x, y" in str(err)


# --------------------------------------------------------------- delimiters and numbers
@pytest.mark.parametrize("sep", [";", "\t", "|"])
def test_decimal_comma_in_non_comma_files(sep):
    text = sep.join(["x", "y"]) + "\n" + sep.join(["0,5", "1,25e2"]) + "\n"
    text += sep.join(["-1,5", "3"]) + "\n"
    t = read_table(text.encode())
    assert t.delimiter == sep
    np.testing.assert_array_equal(t.values, [[0.5, 125.0], [-1.5, 3.0]])


def test_semicolon_delimiter_with_decimal_points():
    t = read_table(b"a;b;c\n1.5;2;3\n4;5.25;6\n")
    assert t.delimiter == ";" and t.columns == ("a", "b", "c")
    np.testing.assert_array_equal(t.values, [[1.5, 2, 3], [4, 5.25, 6]])


def test_decimal_comma_in_a_comma_file_is_reported_with_a_hint():
    # A quoted "1,000" could be one thousand or 1.0: a column with nothing else to tell is
    # reported (never guessed).
    err = read_error('x,y\n"1,000",1\n1,2\n')
    assert_locates(err, 2, "x")
    assert "decimal point" in str(err) and "thousands separator" in str(err)
    err = read_error("x,y\n0,5,1\n1,2\n")  # unquoted: the row splits
    assert_locates(err, 2, None)
    assert "decimal comma" in str(err)


def test_quoted_decimal_commas_in_a_comma_file_are_read():
    """A comma-separated export in a decimal-comma locale quotes its numbers ("0,5"): a column
    whose commas can only be decimal commas (a digit group that is not 3 digits long, so no
    thousands separator) is read as such, as the ';'-separated file would be. Its 3-digit
    cells then read the same way (as "1,000" does in a ';' file)."""
    t = read_table(b'"x","lat","lng"\n"0,5","48,85","2,35"\n"1,5","52,52","-13,405"\n'
                   b'"2","1,000","3"\n')
    assert t.delimiter == ","
    np.testing.assert_array_equal(t.values, [[0.5, 48.85, 2.35], [1.5, 52.52, -13.405],
                                             [2.0, 1.0, 3.0]])
    assert scan_table(b'x,y\n"0,5",1\n"1,25",2\n').numeric_columns == ("x", "y")


def test_a_comma_column_mixing_decimal_points_and_commas_is_reported():
    err = read_error('x,y\n"0,5",1\n1.5,2\n')
    assert_locates(err, 2, "x")
    assert "decimal point" in str(err)


@pytest.mark.parametrize("value", ["nan", "inf", "-Infinity", "1e13", "abc", "1.000,5"])
def test_bad_numbers_are_located(value):
    err = read_error(f"x;y\n0;1\n1;{value}\n")
    assert_locates(err, 3, "y")
    assert err.n_problems == 1


# --------------------------------------------------------------------------- encodings
def test_utf8_bom():
    t = read_table(codecs.BOM_UTF8 + b"x,y\n1,2\n")
    assert t.header == ("x", "y")
    np.testing.assert_array_equal(t.values, [[1, 2]])


@pytest.mark.parametrize("codec", ["utf-16", "utf-16-le", "utf-16-be", "utf-32"])
def test_utf16_and_utf32(codec):
    t = read_table("x;y\n0,5;2\n".encode(codec))
    assert t.header == ("x", "y")
    np.testing.assert_array_equal(t.values, [[0.5, 2]])


def test_non_utf8_byte_is_located():
    err = read_error("name,x\ncaf\u00e9,1\n".encode("latin-1"))
    assert_locates(err, 2, "name")
    assert "UTF-8" in str(err)


def test_binary_data_is_rejected():
    assert "binary" in str(read_error(b"x,y\n1,\x002\n"))
    assert "Excel" in str(read_error(b"PK\x03\x04rest"))


# ------------------------------------------------------------------------ blank cells
BLANKS = "x,y,z\n1,2,3\n4,,6\n\n7,8,\n9,10,11\n"


def test_blank_cells_are_errors_by_default():
    err = read_error(BLANKS)
    assert err.n_problems == 2
    assert_locates(err, 3, "y")
    assert_locates(err, 5, "z")
    assert "empty" in str(err)


def test_blank_cells_drop_their_rows_and_are_counted():
    t = read_table(BLANKS.encode(), blank="drop")
    np.testing.assert_array_equal(t.values, [[1, 2, 3], [9, 10, 11]])
    np.testing.assert_array_equal(t.rows, [2, 6])
    assert t.dropped == 2
    # Only the columns read count: 'z' is not read, so only row 3 goes.
    t = read_table(BLANKS.encode(), columns=["x", "y"], blank="drop")
    np.testing.assert_array_equal(t.rows, [2, 5, 6])
    assert t.dropped == 1
    assert read_table(GOOD.encode(), blank="drop").dropped == 0


def test_dropping_every_row_is_an_error():
    err = read_error("x,y\n1,\n,2\n", blank="drop")
    assert "none is left" in str(err)


def test_drop_still_reports_text_cells():
    err = read_error("x,y\n1,\n2,abc\n", blank="drop")
    assert_locates(err, 3, "y")


# ------------------------------------------------------------------------ text columns
TEXT = "id,name,dose,response,empty\np1,ann,1.5,2,\np2,bob,2.5,x,\np3,cy,3.5,4,\n"


def test_text_columns_are_reported_by_default():
    err = read_error(TEXT)
    assert_locates(err, 2, "id")
    assert_locates(err, 2, "name")


def test_text_columns_are_kept_out_of_the_numeric_ones():
    table = scan_table(TEXT.encode())
    assert table.numeric_columns == ("dose", "response")
    assert table.text_columns == ("id", "name", "empty")
    # A numeric column's stray text cell is still a problem, named by row and column.
    err = read_error(TEXT, text="skip")
    assert_locates(err, 3, "response")
    t = read_table(TEXT.replace(",x,", ",3,").encode(), text="skip")
    assert t.columns == ("dose", "response")
    assert t.text_columns == ("id", "name", "empty")
    np.testing.assert_array_equal(t.values, [[1.5, 2], [2.5, 3], [3.5, 4]])


def test_no_numeric_column():
    err = read_error("name,city\nann,rome\n", text="skip")
    assert "No column holds numbers" in str(err)


def test_scan_then_choose_columns_reads_the_file_once():
    table = scan_table(TEXT.encode())
    t = table.to_numbers(["dose"])
    np.testing.assert_array_equal(t.values, [[1.5], [2.5], [3.5]])
    with pytest.raises(DataValidationError, match=r"Row 3, column 'response'"):
        table.to_numbers(["dose", "response"])


# ----------------------------------------------------------------- structure and limits
def test_row_and_column_named_in_messages():
    text = "x,y,z\n1,2,3\n4,5\n6,7,8,9\n10,zz,12\n"
    err = read_error(text)
    assert err.n_problems == 2  # structural problems first: short and long rows
    assert_locates(err, 3, "z")
    assert_locates(err, 4, None)
    assert "header is row 1" in str(err)
    err = read_error("x,y,z\n1,2,3\n\n10,zz,12\n")
    assert_locates(err, 4, "y")
    assert str(err).startswith("Row 4, column 'y': value 'zz' is not a number.")


def test_header_problems():
    assert_locates(read_error("x,X\n1,2\n"), 1, "x")
    assert "looks like data" in str(read_error("1,2\n3,4\n"))
    assert "empty" in str(read_error(b""))
    assert "no data rows" in str(read_error("x,y\n\n"))
    assert "no name" in str(read_error("x,,y\n1,2,3\n"))
    t = read_table(b"x,y,\n1,2,\n3,4\n")  # trailing delimiter: unnamed empty column
    assert t.header == ("x", "y")


def test_max_rows_cap():
    err = read_error(GOOD, max_rows=2)
    assert "more than 2 data rows" in str(err) and "read_table(..., max_rows=...)" in str(err)
    assert read_table(GOOD.encode(), max_rows=3).values.shape == (3, 2)


def test_max_rows_default_from_settings(monkeypatch):
    monkeypatch.setenv("DPCORE_MAX_ROWS", "2")
    assert "DPCORE_MAX_ROWS" in str(read_error(GOOD))


def test_max_bytes_cap(monkeypatch, tmp_path):
    data = GOOD.encode()
    assert "more than the limit" in str(read_error(data, max_bytes=len(data) - 1))
    assert read_table(data, max_bytes=len(data)).values.shape == (3, 2)
    path = tmp_path / "t.csv"
    path.write_bytes(data)
    real_open = builtins.open
    opened = []
    monkeypatch.setattr(builtins, "open", lambda *a, **k: opened.append(a) or real_open(*a, **k))
    with pytest.raises(DataValidationError, match="max_bytes"):
        read_table(path, max_bytes=10)
    assert opened == []  # a path over the limit is not even opened
    # The default is the library's limit (DPCORE_MAX_UPLOAD_MB MiB), for load_csv too.
    monkeypatch.setenv("DPCORE_MAX_UPLOAD_MB", "1")
    big = b"x\n" + b"1\n" * 2**19
    with pytest.raises(DataValidationError, match="1,048,576 bytes") as info:
        read_table(big)
    assert "set the environment variable DPCORE_MAX_UPLOAD_MB" in str(info.value)
    # A caller's own max_bytes is the limit; the variable would not change it, so it is not
    # suggested.
    explicit = str(read_error(big, max_bytes=2**20))
    assert "read_table(..., max_bytes=...)" in explicit and "DPCORE" not in explicit
    with pytest.raises(DataValidationError, match="load_csv"):
        csvio.load_csv(b"y1,y2,y3\n" + b"1,0,0\n" * 2**18, Sphere(2), "mean")


def test_max_columns_cap():
    assert "at most 2" in str(read_error("a,b,c\n1,2,3\n", max_columns=2))
    assert read_table(b"a,b,c\n1,2,3\n", max_columns=3).values.shape == (1, 3)


def test_sources(tmp_path):
    path = tmp_path / "t.csv"
    path.write_bytes(GOOD.encode())
    for source in (GOOD.encode(), bytearray(GOOD.encode()), io.BytesIO(GOOD.encode()),
                   io.StringIO(GOOD), path, str(path)):
        assert read_table(source).values.shape == (3, 2)


def test_argument_errors():
    with pytest.raises(ValueError, match="`blank`"):
        read_table(GOOD.encode(), blank="keep")
    with pytest.raises(ValueError, match="`text`"):
        read_table(GOOD.encode(), text="drop")
    with pytest.raises(TypeError, match="`columns`"):
        read_table(GOOD.encode(), columns="x")
    with pytest.raises(ValueError, match="max_rows"):
        read_table(GOOD.encode(), max_rows=0)
    with pytest.raises(TypeError, match="max_bytes"):
        read_table(GOOD.encode(), max_bytes=1.5)
    with pytest.raises(ValueError, match="io.StringIO"):
        read_table(GOOD)
    with pytest.raises(TypeError, match="`source`"):
        read_table(12)


# ------------------------------------------------------------------------ one reader
def test_one_error_class_and_one_reader():
    assert data_pkg.DataValidationError is exceptions.DataValidationError
    assert csvio.DataValidationError is tables.DataValidationError is exceptions.DataValidationError
    assert issubclass(exceptions.DataValidationError, ValueError)
    assert data_pkg.read_table is tables.read_table
    # load_csv reads with the same pieces: the same message for the same bad cell.
    err = read_error("y1;y2;y3\n1;0;0\n0;zz;0\n")
    with pytest.raises(DataValidationError) as info:
        csvio.load_csv(b"y1;y2;y3\n1;0;0\n0;zz;0\n", Sphere(2), "mean")
    assert str(info.value) == str(err)


def test_docstring_example():
    result = doctest.testmod(tables, verbose=False)
    assert result.attempted >= 1 and result.failed == 0
