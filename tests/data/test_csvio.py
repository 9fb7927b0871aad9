"""CSV loading and writing: round trips, every validation problem, encodings and inputs."""

from __future__ import annotations

import builtins
import codecs
import io
import os
import tempfile
from pathlib import Path

import numpy as np
import pytest

from dpcore.data import (
    DataValidationError,
    expected_columns,
    load_csv,
    make_mean_data,
    make_regression_data,
    to_csv,
)
from dpcore.data.csvio import MAX_PROBLEMS
from dpcore.manifolds import SPD, Euclidean, Hyperbolic, KendallShape, RowProblems, Sphere

from .manifold_cases import IDS, MANIFOLDS

S2 = Sphere(2)
GOOD = "x,y1,y2,y3\n0.0,1,0,0\n0.5,0,1,0\n1.0,0,0,1\n"


def load_error(text, manifold=S2, task="regression", **kwargs) -> DataValidationError:
    """Load ``text`` (str or bytes) expecting a DataValidationError, and return it."""
    data = text.encode() if isinstance(text, str) else text
    with pytest.raises(DataValidationError) as info:
        load_csv(data, manifold, task, **kwargs)
    return info.value


def assert_locates(err, row, column):
    """The message and the attributes name ``row`` and ``column``."""
    text = str(err).lower()
    if row is not None:
        assert f"row {row}," in text or f"row {row}:" in text or f"row {row})" in text, text
    if column is not None:
        assert f"column '{column}'" in text, text
    assert any((p.row, p.column) == (row, column) for p in err.problems), err.problems


# --------------------------------------------------------------------------- round trips
@pytest.mark.parametrize("m", MANIFOLDS, ids=IDS)
def test_round_trip_regression(m):
    x, y = make_regression_data(m, 30, rng=0)
    x2, y2 = load_csv(to_csv(m, y, x).encode(), m, "regression")
    np.testing.assert_array_equal(x2, x)
    if isinstance(m, KendallShape):
        np.testing.assert_allclose(y2, y, atol=1e-12)
    else:
        np.testing.assert_array_equal(y2, y)


@pytest.mark.parametrize("m", MANIFOLDS, ids=IDS)
def test_round_trip_mean(m):
    radius = 0.4 if isinstance(m, (Sphere, KendallShape)) else 1.5
    y = make_mean_data(m, 25, radius=radius, rng=1)
    text = to_csv(m, y)
    assert text.splitlines()[0].split(",") == expected_columns(m, "mean")
    y2 = load_csv(io.StringIO(text), m, "mean")
    if isinstance(m, KendallShape):
        np.testing.assert_allclose(y2, y, atol=1e-12)
    else:
        np.testing.assert_array_equal(y2, y)


def test_to_csv_targets(tmp_path):
    x, y = make_regression_data(S2, 5, rng=2)
    text = to_csv(S2, y, x)
    path = tmp_path / "out.csv"
    assert to_csv(S2, y, x, path) is None
    assert path.read_text(encoding="utf-8") == text
    sbuf, bbuf = io.StringIO(), io.BytesIO()
    to_csv(S2, y, x, sbuf)
    to_csv(S2, y, x, bbuf)
    assert sbuf.getvalue() == text and bbuf.getvalue() == text.encode()
    x2, y2 = load_csv(path, S2)
    np.testing.assert_array_equal(y2, y)


def test_to_csv_argument_errors():
    with pytest.raises(ValueError, match="shape"):
        to_csv(S2, np.ones((3, 4)))
    with pytest.raises(ValueError, match="`x` must have shape"):
        to_csv(S2, np.eye(3), x=[1.0, 2.0])
    with pytest.raises(ValueError, match="NaN"):
        to_csv(S2, np.full((2, 3), np.nan))


def test_expected_columns():
    assert expected_columns(S2, "regression") == ["x", "y1", "y2", "y3"]
    assert expected_columns(Euclidean(2), "mean") == ["y1", "y2"]
    assert expected_columns(Hyperbolic(2), "mean") == ["y1", "y2", "y3"]
    assert expected_columns(SPD(3), "mean") == ["s11", "s12", "s13", "s22", "s23", "s33"]
    assert expected_columns(KendallShape(3), "regression") == [
        "x", "lx1", "ly1", "lx2", "ly2", "lx3", "ly3"
    ]
    assert expected_columns(SPD(10), "mean")[:3] == ["s1_1", "s1_2", "s1_3"]
    with pytest.raises(ValueError, match="task"):
        expected_columns(S2, "classification")


def test_spd_and_kendall_values_are_read_correctly():
    y = load_csv(b"s11,s12,s22\n2,1,3\n", SPD(2), "mean")
    np.testing.assert_array_equal(y, [[[2.0, 1.0], [1.0, 3.0]]])
    m = KendallShape(3)
    y = load_csv(b"lx1,ly1,lx2,ly2,lx3,ly3\n0,0,2,0,0,2\n", m, "mean")
    np.testing.assert_allclose(y, m.from_landmarks([[[0, 0], [2, 0], [0, 2]]]))


# ------------------------------------------------------------------- header problems
def test_missing_columns_are_named():
    err = load_error("x,y1\n0,1\n1,0\n")
    assert_locates(err, 1, "y2")
    assert "'y2', 'y3'" in str(err) and "x, y1, y2, y3" in str(err)


def test_missing_x_hints_at_mean_task():
    err = load_error("y1,y2,y3\n1,0,0\n0,1,0\n")
    assert_locates(err, 1, "x")
    assert "task='mean'" in str(err)


def test_unexpected_columns_are_named():
    err = load_error("x,y1,y2,y3,weight\n0,1,0,0,1\n1,0,1,0,2\n")
    assert_locates(err, 1, "weight")
    assert "unexpected" in str(err)


def test_x_in_mean_task_is_unexpected():
    err = load_error(GOOD, task="mean")
    assert_locates(err, 1, "x")
    assert "task='regression'" in str(err)


def test_duplicated_header_names():
    err = load_error("x,y1,y2,y2,y3\n0,1,0,0,0\n")
    assert_locates(err, 1, "y2")
    assert "2 times (columns 3 and 4)" in str(err)


def test_header_row_required():
    err = load_error("0,1,0,0\n1,0,1,0\n")
    assert_locates(err, 1, None)
    assert "header row" in str(err) and "x, y1, y2, y3" in str(err)


def test_empty_file():
    err = load_error(b"")
    assert err.row is None and "empty" in str(err)
    err = load_error(b"\n  \n")
    assert "empty" in str(err)


def test_header_without_data_rows():
    err = load_error("x,y1,y2,y3\n\n")
    assert "no data rows" in str(err)


def test_too_few_rows():
    err = load_error("x,y1,y2,y3\n0,1,0,0\n")
    assert "1 data row" in str(err) and "at least 2" in str(err)
    np.testing.assert_array_equal(load_csv(b"y1,y2,y3\n1,0,0\n", S2, "mean"), [[1, 0, 0]])


def test_too_many_rows_names_limit():
    err = load_error(GOOD, max_rows=2)
    assert "more than 2 data rows" in str(err) and "max_rows" in str(err)
    assert load_csv(GOOD.encode(), S2, max_rows=3)[0].shape == (3,)


# --------------------------------------------------------------------- cell problems
def test_non_numeric_cell():
    err = load_error("x,y1,y2,y3\n0,1,0,0\n0.5,0,1,0\n1,0,abc,1\n")
    assert_locates(err, 4, "y2")
    assert "Row 4, column 'y2': value 'abc' is not a number." in str(err)
    assert err.problems[0] == (4, "y2", "value 'abc' is not a number.")


def test_empty_cell():
    err = load_error("x,y1,y2,y3\n0,1,0,0\n,0,1,0\n")
    assert_locates(err, 3, "x")
    assert "empty" in str(err)


@pytest.mark.parametrize("value", ["nan", "NaN", "inf", "-Infinity"])
def test_nan_and_inf(value):
    err = load_error(f"x,y1,y2,y3\n0,1,0,0\n1,0,{value},0\n")
    assert_locates(err, 3, "y2")
    assert "not a finite number" in str(err)


def test_huge_value():
    err = load_error("x,y1,y2,y3\n0,1,0,0\n1e13,0,1,0\n")
    assert_locates(err, 3, "x")
    assert "too large" in str(err)


def test_constant_covariate():
    err = load_error("x,y1,y2,y3\n2,1,0,0\n2,0,1,0\n2,0,0,1\n")
    assert_locates(err, None, "x")
    assert "two different covariate values" in str(err)


def test_short_and_long_rows():
    err = load_error("x,y1,y2,y3\n0,1,0\n1,0,1,0,7\n0.5,0,0,1\n")
    assert err.n_problems == 2
    assert_locates(err, 2, "y3")
    assert_locates(err, 3, None)
    assert "has 5 values but the header has 4 columns" in str(err)


def test_malformed_quotes():
    err = load_error('x,y1,y2,y3\n0,1,0,0\n1,"0,1,0\n')
    assert err.row == 3 and "could not be read as CSV" in str(err)


def test_all_problems_reported_together_in_file_order():
    text = "x,y1,y2,y3\n0,1,0,0\n1,zz,0,0\n0.5,0,0,2\n0.7,0,nan,1\n"
    err = load_error(text)
    assert err.n_problems == 3
    assert [(p.row, p.column) for p in err.problems] == [(3, "y1"), (4, None), (5, "y2")]
    assert "Found 3 problems" in str(err) and "header is row 1" in str(err)


def test_problem_list_is_capped():
    rows = "".join(f"{i},a,0,0\n" for i in range(50))
    err = load_error("x,y1,y2,y3\n" + rows)
    assert err.n_problems == 50 and len(err.problems) == MAX_PROBLEMS
    assert "30 more not shown" in str(err)


# ----------------------------------------------------------------- geometry problems
def test_off_sphere_row():
    err = load_error("x,y1,y2,y3\n0,1,0,0\n0.5,0,1,0\n1,0.6,0.6,0.6\n")
    assert_locates(err, 4, None)
    assert "y1..y3" in str(err) and "renormalize=True" in str(err)


def test_renormalize_projects_onto_sphere():
    x, y = load_csv(b"x,y1,y2,y3\n0,2,0,0\n1,0.6,0.6,0.6\n", S2, renormalize=True)
    assert np.all(S2.belongs(y, atol=1e-12))
    np.testing.assert_allclose(y[0], [1, 0, 0])


def test_within_tolerance_is_kept_as_written():
    _, y = load_csv(b"x,y1,y2,y3\n0,1.0000001,0,0\n1,0,1,0\n", S2)
    assert y[0, 0] == 1.0000001
    load_error("x,y1,y2,y3\n0,1.0000001,0,0\n1,0,1,0\n", atol=1e-8)


def test_zero_vector_cannot_be_renormalised():
    err = load_error("x,y1,y2,y3\n0,1,0,0\n1,0,0,0\n", renormalize=True)
    assert_locates(err, 3, None)
    assert "zero vector" in str(err)


def test_spd_not_positive_definite():
    """|s12| = 2 > sqrt(s11 s22) = 1: the entry that explains it is named."""
    err = load_error("s11,s12,s22\n2,0,1\n1,2,1\n", SPD(2), "mean")
    assert_locates(err, 3, "s12")
    assert "not positive definite" in str(err) and "s11..s22" in str(err)
    assert "correlation of 2" in str(err)


def test_spd_zero_matrix_not_positive_definite():
    err = load_error("x,s11,s12,s22\n0,1,0,1\n1,0,0,0\n", SPD(2))
    assert_locates(err, 3, "s11")
    assert "variance and must be positive" in str(err)


def test_spd_not_positive_definite_without_a_single_culprit():
    """Every diagonal entry and 2 x 2 minor is positive, yet the 3 x 3 determinant is
    negative (det = 1 - 3 (0.9)^2 + 2 (0.9)(0.9)(-0.9) < 0): the matrix as a whole is named."""
    header = "s11,s12,s13,s22,s23,s33"
    err = load_error(f"{header}\n1,0.9,0.9,1,-0.9,1\n", SPD(3), "mean")
    assert_locates(err, 2, None)
    assert "not positive definite" in str(err)


def test_degenerate_kendall_shape():
    m = KendallShape(3)
    err = load_error("x,lx1,ly1,lx2,ly2,lx3,ly3\n0,0,0,1,0,0,1\n1,5,5,5,5,5,5\n", m)
    assert_locates(err, 3, None)
    assert "same place" in str(err) and "lx1..ly3" in str(err)


def test_hyperboloid_wrong_sheet():
    m = Hyperbolic(2)
    err = load_error("y1,y2,y3\n1,0,0\n-1,0,0\n", m, "mean")
    assert_locates(err, 3, "y1")


def test_hyperboloid_off_surface_and_renormalize():
    m = Hyperbolic(2)
    err = load_error("y1,y2,y3\n1,0,0\n2,1,0\n", m, "mean")
    assert_locates(err, 3, None)
    assert "not on the hyperboloid" in str(err)
    y = load_csv(b"y1,y2,y3\n1,0,0\n2,1,0\n", m, "mean", renormalize=True)
    assert np.all(m.belongs(y, atol=1e-12))
    err = load_error("y1,y2,y3\n1,0,0\n1,2,0\n", m, "mean", renormalize=True)
    assert_locates(err, 3, None)


def test_points_outside_ball():
    north = np.array([0.0, 0.0, 1.0])
    text = "y1,y2,y3\n0,0,1\n1,0,0\n"
    err = load_error(text, task="mean", ball=(north, 0.5))
    assert_locates(err, 3, None)
    assert "outside the assumed ball" in str(err)
    assert load_csv(text.encode(), S2, "mean", ball=(north, 2.0)).shape == (2, 3)


# ----------------------------------------------------------------- formats, encodings
def test_bom_crlf_whitespace_and_case():
    text = "\ufeff X , Y1 ,y2, y3 \r\n0,1,0,0\r\n1,0,1,0\r\n"
    x, y = load_csv(text.encode("utf-8"), S2)
    np.testing.assert_array_equal(x, [0, 1])
    np.testing.assert_array_equal(y, [[1, 0, 0], [0, 1, 0]])


@pytest.mark.parametrize("sep", [";", "\t"])
def test_semicolon_and_tab_delimiters_with_decimal_comma(sep):
    text = sep.join(["x", "y1", "y2", "y3"]) + "\n"
    text += sep.join(["0,5", "1", "0", "0"]) + "\n" + sep.join(["1.5", "0", "1", "0"]) + "\n"
    x, y = load_csv(text.encode(), S2)
    np.testing.assert_array_equal(x, [0.5, 1.5])


def test_comma_file_reads_quoted_decimal_commas_only_where_unambiguous():
    x, _ = load_csv(b'x,y1,y2,y3\n"0,5",1,0,0\n1,0,1,0\n', S2)
    np.testing.assert_array_equal(x, [0.5, 1.0])
    err = load_error('x,y1,y2,y3\n"1,000",1,0,0\n1,0,1,0\n')  # one thousand, or 1.0?
    assert_locates(err, 2, "x")
    err = load_error('x,y1,y2,y3\n"0,5",1,0,0\n1.5,0,1,0\n')  # decimal points as well
    assert_locates(err, 2, "x")


def test_columns_in_any_order_and_trailing_delimiter():
    x, y = load_csv(b"y3,x,y2,y1,\n0,0,0,1,\n1,1,0,0,\n", S2)
    np.testing.assert_array_equal(x, [0, 1])
    np.testing.assert_array_equal(y, [[1, 0, 0], [0, 0, 1]])


def test_rows_may_omit_cells_of_unnamed_trailing_column():
    x, _ = load_csv(b"x,y1,y2,y3,\n0,1,0,0\n1,0,1,0,\n", S2)
    np.testing.assert_array_equal(x, [0, 1])


def test_value_in_unnamed_column_is_reported():
    err = load_error("x,y1,y2,y3,\n0,1,0,0,\n1,0,1,0,9\n")
    assert_locates(err, 3, None)
    assert "no name" in str(err)


def test_blank_lines_skipped_but_counted_in_row_numbers():
    err = load_error("x,y1,y2,y3\n\n0,1,0,0\n,,,\n1,0,bad,0\n")
    assert_locates(err, 5, "y2")


def test_non_utf8_bytes():
    data = "x,y1,y2,y3\n0,1,0,0\n1,0,1,0\n# caf\u00e9\n".encode("latin-1")
    err = load_error(data)
    assert err.row == 4 and "UTF-8" in str(err)


def test_utf16_with_bom_is_accepted():
    data = codecs.BOM_UTF16_LE + GOOD.encode("utf-16-le")
    x, _ = load_csv(data, S2)
    assert x.shape == (3,)


@pytest.mark.parametrize(
    ("data", "match"),
    [
        (b"PK\x03\x04\x14\x00\x06\x00", "Excel workbook"),
        (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "Excel workbook"),
        (b"x,y1\x00\x01\x02\xff", "binary"),
    ],
)
def test_binary_input(data, match):
    err = load_error(data)
    assert match in str(err)


# -------------------------------------------------------------------------- inputs
class UploadedFileLike(io.BytesIO):
    """Mimics Streamlit's UploadedFile: a BytesIO subclass with a name."""

    name = "data.csv"


@pytest.mark.parametrize(
    "make",
    [
        lambda: GOOD.encode(),
        lambda: bytearray(GOOD.encode()),
        lambda: io.BytesIO(GOOD.encode()),
        lambda: io.StringIO(GOOD),
        lambda: UploadedFileLike(GOOD.encode()),
    ],
    ids=["bytes", "bytearray", "BytesIO", "StringIO", "UploadedFile"],
)
def test_source_types(make):
    x, y = load_csv(make(), S2)
    assert x.shape == (3,) and y.shape == (3, 3)


def test_already_read_buffer_still_loads():
    buf = UploadedFileLike(GOOD.encode())
    buf.read()
    assert load_csv(buf, S2)[0].shape == (3,)


def test_reader_with_only_read_method():
    class Reader:
        def read(self):
            return GOOD.encode()

    assert load_csv(Reader(), S2)[0].shape == (3,)


def test_paths(tmp_path):
    path = tmp_path / "d.csv"
    path.write_bytes(GOOD.encode())
    assert load_csv(path, S2)[0].shape == (3,)
    assert load_csv(str(path), S2)[0].shape == (3,)
    with open(path, "rb") as fh:
        assert load_csv(fh, S2)[0].shape == (3,)
    with pytest.raises(FileNotFoundError):
        load_csv(tmp_path / "missing.csv", S2)


def test_argument_errors():
    with pytest.raises(ValueError, match="io.StringIO"):
        load_csv(GOOD, S2)
    with pytest.raises(TypeError, match="`source`"):
        load_csv(12, S2)
    with pytest.raises(TypeError, match="Manifold"):
        load_csv(GOOD.encode(), "sphere")
    with pytest.raises(ValueError, match="task"):
        load_csv(GOOD.encode(), S2, "classification")
    with pytest.raises(ValueError, match="max_rows"):
        load_csv(GOOD.encode(), S2, max_rows=0)


def test_error_is_a_value_error_with_attributes():
    err = DataValidationError("value 'q' is not a number.", row=3, column="y1")
    assert isinstance(err, ValueError)
    assert (err.row, err.column, err.n_problems) == (3, "y1", 1)
    assert str(err).startswith("Row 3, column 'y1': value 'q' is not a number.")


def test_load_writes_nothing(tmp_path, monkeypatch):
    """No file appears in the temp dir or the cwd, and open() is never called for writing."""
    tmpdir, workdir = tmp_path / "tmp", tmp_path / "cwd"
    tmpdir.mkdir()
    workdir.mkdir()
    source = tmp_path / "in.csv"
    source.write_bytes(GOOD.encode())
    monkeypatch.setattr(tempfile, "tempdir", str(tmpdir))
    monkeypatch.chdir(workdir)
    real_open = builtins.open
    modes = []

    def spy_open(file, mode="r", *args, **kwargs):
        modes.append(mode)
        return real_open(file, mode, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", spy_open)
    big = make_regression_data(S2, 2000, rng=0)
    text = to_csv(S2, big.y, big.x)
    for src in (text.encode(), io.BytesIO(text.encode()), UploadedFileLike(text.encode()),
                source, str(source)):
        load_csv(src, S2)
    with pytest.raises(DataValidationError):
        load_csv(b"x,y1,y2,y3\n0,1,0,0\n1,0,bad,0\n", S2)
    assert tempfile.gettempdir() == str(tmpdir)
    assert os.listdir(tmpdir) == [] and os.listdir(workdir) == []
    assert all(set(m) <= {"r", "b", "t"} for m in modes), modes
    assert sorted(p.name for p in Path(tmp_path).iterdir()) == ["cwd", "in.csv", "tmp"]


class _Polar(Euclidean):
    """R^2 written in polar columns: a manifold with a CSV format of its own."""

    def __init__(self):
        super().__init__(2)

    def csv_columns(self):
        return ["r", "theta"]

    def to_csv_rows(self, points):
        points = np.asarray(points, dtype=float)
        return np.stack([np.hypot(points[..., 0], points[..., 1]),
                         np.arctan2(points[..., 1], points[..., 0])], axis=-1)

    def from_csv_rows(self, values, *, renormalize=False):
        values = self._csv_values(values)
        r, theta = values[..., 0], values[..., 1]
        return np.stack([r * np.cos(theta), r * np.sin(theta)], axis=-1)

    def csv_problems(self, values, *, atol=1e-6, renormalize=False):
        values = self._csv_values(values)
        negative = values[:, 0] < 0
        return [RowProblems(negative, "r", lambda i: f"a radius is >= 0, got {values[i, 0]:g}.")]


def test_the_format_is_the_manifold_s():
    """load_csv / to_csv / expected_columns read the format off the class (no type switch)."""
    m = _Polar()
    assert expected_columns(m, "regression") == ["x", "r", "theta"]
    y = np.array([[1.0, 0.0], [0.0, 2.0], [-3.0, 0.0]])
    text = to_csv(m, y, np.arange(3.0))
    assert text.splitlines()[0] == "x,r,theta"
    x_back, y_back = load_csv(text.encode(), m)
    np.testing.assert_allclose(y_back, y, atol=1e-15)
    with pytest.raises(DataValidationError) as info:
        load_csv(b"r,theta\n1,0\n-2,0\n", m, "mean")
    (problem,) = info.value.problems
    assert (problem.row, problem.column) == (3, "r")
    assert "a radius is >= 0, got -2." in str(info.value)
