"""Real-file layouts of manifold CSVs (issue 14, point 3): SPD matrices in full or as their
upper triangle, Kendall landmarks raw or as preshapes, places as latitude and longitude on S²,
blank cells dropped with a count, decimal commas."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from dpcore.data import (
    LAYOUTS,
    DataValidationError,
    load_csv,
    read_manifold_csv,
)
from dpcore.manifolds import SPD, KendallShape, Sphere

from .test_csvio import assert_locates

S2 = Sphere(2)
RAT_SKULLS = Path(__file__).resolve().parents[3] / "shared" / "data" / "rat_skulls.npy"


def read_error(text, manifold, task="mean", **kwargs) -> DataValidationError:
    with pytest.raises(DataValidationError) as info:
        read_manifold_csv(text.encode(), manifold, task, **kwargs)
    return info.value


def csv_text(header, rows, sep=","):
    """A CSV file written here, independently of dpcore's writer."""
    lines = [sep.join(header)] + [sep.join(repr(float(v)) for v in row) for row in rows]
    return "\n".join(lines) + "\n"


def full_names(k):
    return [f"s{i}{j}" for i in range(1, k + 1) for j in range(1, k + 1)]


def upper_names(k):
    return [f"s{i}{j}" for i in range(1, k + 1) for j in range(i, k + 1)]


# ------------------------------------------------------------------------------------ SPD
@pytest.mark.parametrize("k", [2, 3, 4])
def test_spd_full_and_upper_read_the_same_matrices(k):
    """Matrices from geomstats' SPD sampler, written here in both layouts, read back exactly."""
    from geomstats.geometry.spd_matrices import SPDMatrices

    mats = np.asarray(SPDMatrices(k, equip=False).random_point(12))
    mats = 0.5 * (mats + np.swapaxes(mats, -1, -2))  # exactly symmetric for the full layout
    iu = np.triu_indices(k)
    full = read_manifold_csv(csv_text(full_names(k), mats.reshape(12, -1)).encode(), SPD(k),
                             "mean")
    upper = read_manifold_csv(csv_text(upper_names(k), mats[:, iu[0], iu[1]]).encode(), SPD(k),
                              "mean")
    assert full.layout == "spd_full" and upper.layout == "spd_upper"
    np.testing.assert_array_equal(full.y, mats)
    np.testing.assert_array_equal(upper.y, mats)
    assert np.all(SPDMatrices(k, equip=False).belongs(full.y))
    assert "in full" in full.note and "upper triangle" in upper.note


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(k=st.integers(2, 4), n=st.integers(1, 5), data=st.data())
def test_spd_full_layout_round_trip_property(k, n, data):
    """Any A Aᵀ + I, in any column order, with an x column: the full layout gives the matrix."""
    a = data.draw(arrays(np.float64, (n, k, k), elements=st.floats(-10, 10, width=32)))
    mats = a @ np.swapaxes(a, -1, -2) + np.eye(k)
    x = np.arange(n, dtype=float)
    order = data.draw(st.permutations(range(k * k)))
    names = full_names(k)
    header = ["x"] + [names[j] for j in order]
    rows = np.column_stack([x, mats.reshape(n, -1)[:, order]])
    task = "regression" if n >= 2 else "mean"
    if task == "mean":
        header, rows = header[1:], rows[:, 1:]
    got = read_manifold_csv(csv_text(header, rows).encode(), SPD(k), task)
    assert got.layout == "spd_full"
    np.testing.assert_allclose(got.y, mats, rtol=0, atol=1e-12 * np.abs(mats).max())
    if task == "regression":
        np.testing.assert_array_equal(got.x, x)


def test_spd_full_matrix_not_symmetric_names_row_and_column():
    text = "x,s11,s12,s21,s22\n0,2,1,1,2\n1,2,0.5,0.3,2\n"
    err = read_error(text, SPD(2), "regression")
    assert_locates(err, 3, "s21")
    assert "not symmetric" in str(err) and "0.3" in str(err) and "0.5" in str(err)


def test_spd_full_matrix_within_tolerance_uses_its_symmetric_part():
    got = read_manifold_csv(b"s11,s12,s21,s22\n2,1,1.0000000001,3\n", SPD(2), "mean")
    np.testing.assert_allclose(got.y[0], [[2, 1.00000000005], [1.00000000005, 3]], rtol=1e-15)
    assert np.array_equal(got.y[0], got.y[0].T)


def test_spd_full_matrix_not_positive_definite_names_row_and_column():
    err = read_error("s11,s12,s21,s22\n2,0,0,1\n1,3,3,1\n4,0,0,-1\n", SPD(2))
    assert_locates(err, 3, "s12")
    assert_locates(err, 4, "s22")
    assert "not positive definite" in str(err)


def test_spd_missing_columns_mention_the_full_layout():
    err = read_error("s11,s12\n1,0\n", SPD(2))
    assert "full matrix" in str(err) and "s21" in str(err)


def test_spd_extra_column_beside_the_full_matrix_is_reported():
    err = read_error("s11,s12,s21,s22,s33\n1,0,0,1,1\n", SPD(2))
    assert_locates(err, 1, "s33")
    err = read_error("s11,s12,s13,s21,s22,s23,s31,s33\n1,0,0,0,1,0,0,1\n", SPD(3))
    assert_locates(err, 1, "s21")  # not all nine entries: the lower ones are explained
    assert "upper triangle" in str(err)
    err = read_error("s11\n1\n", SPD(3))
    assert "s11, ..., s13, s21, ..., s33" in str(err)


# -------------------------------------------------------------------------------- Kendall
def _preshape_oracle(landmarks):
    """geomstats' projection onto the pre-shape space (centre, then unit Frobenius norm)."""
    from geomstats.geometry.pre_shape import PreShapeSpace

    k = landmarks.shape[-2]
    return np.asarray(PreShapeSpace(k, 2).projection(landmarks))


def kendall_header(k):
    return [f"l{c}{j}" for j in range(1, k + 1) for c in ("x", "y")]


@settings(max_examples=60, deadline=None)
@given(k=st.integers(3, 8), n=st.integers(1, 4), data=st.data())
def test_raw_landmarks_are_centred_and_scaled_like_geomstats(k, n, data):
    """Raw landmarks anywhere and at any scale read as geomstats' preshapes of them."""
    base = data.draw(arrays(np.float64, (n, k, 2), elements=st.floats(-1, 1, width=32)))
    base = base + np.linspace(0, 1, k)[:, None] * np.array([1.0, 0.5])  # never degenerate
    scale = data.draw(st.floats(1e-3, 1e4))
    shift = data.draw(arrays(np.float64, 2, elements=st.floats(-1e3, 1e3)))
    raw = scale * base + shift
    got = read_manifold_csv(csv_text(kendall_header(k), raw.reshape(n, -1)).encode(),
                            KendallShape(k), "mean")
    np.testing.assert_allclose(got.y, _preshape_oracle(base), atol=1e-9)
    assert got.layout in ("landmarks", "preshapes")


def test_raw_landmarks_and_preshapes_are_told_apart():
    rng = np.random.default_rng(3)
    raw = 50 + 20 * rng.normal(size=(6, 5, 2))  # e.g. pixel coordinates
    pre = _preshape_oracle(raw)
    header = kendall_header(5)
    from_raw = read_manifold_csv(csv_text(header, raw.reshape(6, -1)).encode(), KendallShape(5),
                                 "mean")
    from_pre = read_manifold_csv(csv_text(header, pre.reshape(6, -1)).encode(), KendallShape(5),
                                 "mean")
    assert from_raw.layout == "landmarks" and "centred and scaled" in from_raw.note
    assert from_pre.layout == "preshapes" and "already" in from_pre.note
    np.testing.assert_allclose(from_raw.y, pre, atol=1e-12)
    np.testing.assert_allclose(from_pre.y, pre, atol=1e-12)


@pytest.mark.skipif(not RAT_SKULLS.exists(), reason="../shared/data/rat_skulls.npy not present")
def test_rat_skulls_read_as_raw_landmarks():
    """The real rat skull landmarks (raw coordinates) read as raw landmarks."""
    skulls = np.load(RAT_SKULLS)
    got = read_manifold_csv(csv_text(kendall_header(8), skulls.reshape(len(skulls), -1))
                            .encode(), KendallShape(8), "mean")
    assert got.layout == "landmarks" and got.y.shape == skulls.shape
    np.testing.assert_allclose(got.y, _preshape_oracle(skulls), atol=1e-12)


def test_coincident_landmarks_name_their_row():
    header = ",".join(kendall_header(3))
    err = read_error(f"{header}\n0,0,1,0,0,1\n7,7,7,7,7,7\n", KendallShape(3))
    assert_locates(err, 3, None)
    assert "same place" in str(err)


# --------------------------------------------------------------------- latitude/longitude
PLACES = [  # (lat, lon) -> closed-form point of S²
    ((0.0, 0.0), (1.0, 0.0, 0.0)),
    ((0.0, 90.0), (0.0, 1.0, 0.0)),
    ((0.0, 180.0), (-1.0, 0.0, 0.0)),
    ((0.0, -90.0), (0.0, -1.0, 0.0)),
    ((90.0, 37.0), (0.0, 0.0, 1.0)),
    ((-90.0, -120.0), (0.0, 0.0, -1.0)),
    ((45.0, 0.0), (np.sqrt(0.5), 0.0, np.sqrt(0.5))),
    ((30.0, 270.0), (0.0, -np.sqrt(0.75), 0.5)),  # 0..360 longitudes
]


@pytest.mark.parametrize("names", [("lat", "lon"), ("Latitude", "Longitude"), ("LAT", "lng"),
                                   ("latitude", "Long")])
def test_latlon_regression_file_reads_closed_forms(names):
    header = ["city", "x", names[0], names[1], "population"]
    lines = [",".join(header)] + [f"P{i},{i},{lat!r},{lon!r},{1000 + i}"
                                  for i, ((lat, lon), _) in enumerate(PLACES)]
    got = read_manifold_csv(("\n".join(lines) + "\n").encode(), S2, "regression")
    assert got.layout == "latlon"
    np.testing.assert_allclose(got.y, [p for _, p in PLACES], atol=1e-15)
    np.testing.assert_array_equal(got.x, np.arange(len(PLACES)))
    assert got.ignored == ("city", "population")
    assert "latitude" in got.note and "city, population" in got.note
    # load_csv reads the same file the same way (pages calling it need no change).
    x, y = load_csv(("\n".join(lines) + "\n").encode(), S2)
    np.testing.assert_array_equal(y, got.y)


@settings(max_examples=60, deadline=None)
@given(points=arrays(np.float64, (6, 3), elements=st.floats(-1, 1)).filter(
    lambda a: np.all(np.linalg.norm(a, axis=1) > 0.1)))
def test_latlon_of_any_points_reads_back_the_points(points):
    """Points of S², written as latitude and longitude by the textbook formulas
    (lat = atan2(z, sqrt(x² + y²)), lon = atan2(y, x)), read back as the same points."""
    points = points / np.linalg.norm(points, axis=1, keepdims=True)
    lat = np.degrees(np.arctan2(points[:, 2], np.sqrt(points[:, 0] ** 2 + points[:, 1] ** 2)))
    lon = np.degrees(np.arctan2(points[:, 1], points[:, 0]))
    got = read_manifold_csv(csv_text(["latitude", "longitude"], np.column_stack([lat, lon]))
                            .encode(), S2, "mean")
    np.testing.assert_allclose(got.y, points, atol=1e-12)


def test_latlon_mean_file_and_decimal_commas():
    got = read_manifold_csv(b"name;lat;lon\nA;0,0;90,0\nB;90;12,5\n", S2, "mean")
    np.testing.assert_allclose(got.y, [[0, 1, 0], [0, 0, 1]], atol=1e-15)


@pytest.mark.parametrize("task", ["mean", "regression"])
def test_latlon_out_of_range_names_row_and_column(task):
    lead, val = ("x,", ("0,", "1,", "2,")) if task == "regression" else ("", ("", "", ""))
    text = (f"{lead}Lat,Lon\n{val[0]}10,20\n{val[1]}90.5,0\n{val[2]}0,-181\n")
    err = read_error(text, S2, task)
    # The columns are named as written in the header.
    assert {(p.row, p.column) for p in err.problems} == {(3, "Lat"), (4, "Lon")}
    assert "Row 3, column 'Lat'" in str(err) and "Row 4, column 'Lon'" in str(err)
    assert "90.5 is not in [-90, 90]" in str(err) and "-181" in str(err)


def test_coordinates_win_over_latlon_and_other_spheres_ignore_it():
    with pytest.raises(DataValidationError, match="unexpected column"):
        read_manifold_csv(b"y1,y2,y3,lat,lon\n1,0,0,0,0\n", S2, "mean")
    with pytest.raises(DataValidationError, match="missing column"):
        read_manifold_csv(b"lat,lon\n0,0\n", Sphere(3), "mean")
    err = read_error("a,b\n0,0\n", S2)
    assert "latitude" in str(err)


# ------------------------------------------------------------------------- blank cells
BLANK_CASES = [
    (S2, "x,y1,y2,y3\n0,1,0,0\n1,,1,0\n2,0,0,1\n3,0,1,0\n", 3, "y1", "coordinates"),
    (S2, "x,lat,lon,city\n0,10,20,A\n1,,5,B\n2,30,,C\n3,40,60,\n", 3, "lat", "latlon"),
    (SPD(2), "x,s11,s12,s21,s22\n0,1,0,0,1\n1,2,,0,2\n2,3,1,1,3\n", 3, "s12", "spd_full"),
    (SPD(2), "x,s11,s12,s22\n0,1,0,1\n1,2,0,\n2,3,1,3\n", 3, "s22", "spd_upper"),
    (KendallShape(3), "x,lx1,ly1,lx2,ly2,lx3,ly3\n0,0,0,1,0,0,1\n,1,1,2,1,1,2\n"
                      "2,0,0,2,0,0,3\n", 3, "x", "landmarks"),
]


@pytest.mark.parametrize(("m", "text", "row", "column", "layout"), BLANK_CASES)
def test_blank_cells_are_reported_or_dropped_with_a_count(m, text, row, column, layout):
    err = read_error(text, m, "regression")
    assert_locates(err, row, column)
    assert "empty" in str(err)
    got = read_manifold_csv(text.encode(), m, "regression", blank="drop")
    n_rows = text.count("\n") - 1
    assert got.layout == layout
    assert got.dropped == n_rows - got.y.shape[0] >= 1
    assert row not in got.rows
    assert "left out" in got.note


def test_blank_drop_keeps_the_other_problems_and_their_rows():
    text = "x,y1,y2,y3\n0,1,0,0\n1,,1,0\n2,abc,0,1\n3,0,0,1\n"
    err = read_error(text, S2, "regression", blank="drop")
    assert_locates(err, 4, "y1")
    assert len(err.problems) == 1


def test_blank_drop_reports_too_few_rows_left():
    err = read_error("x,y1,y2,y3\n0,1,0,0\n1,,1,0\n", S2, "regression", blank="drop")
    assert "1 data row left after dropping 1" in str(err)
    err = read_error("x,y1,y2,y3\n0,,0,0\n1,,1,0\n", S2, "regression", blank="drop")
    assert "none is left" in str(err)


def test_short_rows_are_still_reported_with_blank_drop():
    err = read_error("x,y1,y2,y3\n0,1,0,0\n1,0,1\n2,0,0,1\n", S2, "regression", blank="drop")
    assert_locates(err, 3, "y3")


# -------------------------------------------------------------------- decimal commas
def test_decimal_commas_in_semicolon_files_for_every_layout():
    spd = read_manifold_csv(b"x;s11;s12;s21;s22\n0;1,5;0,25;0,25;2\n1;2;0;0;2\n",
                            SPD(2))
    np.testing.assert_array_equal(spd.y[0], [[1.5, 0.25], [0.25, 2.0]])
    ken = read_manifold_csv(b"lx1;ly1;lx2;ly2;lx3;ly3\n0;0;1,5;0;0;1,5\n",
                            KendallShape(3), "mean")
    np.testing.assert_allclose(ken.y[0], _preshape_oracle(np.array([[0, 0], [1.5, 0],
                                                                    [0, 1.5]])), atol=1e-15)


def test_layout_names_are_the_documented_ones():
    assert set(LAYOUTS) == {"coordinates", "latlon", "spd_upper", "spd_full", "landmarks",
                            "preshapes"}
    with pytest.raises(ValueError):
        read_manifold_csv(b"x,y1,y2,y3\n0,1,0,0\n", S2, blank="skip")


def test_note_of_a_one_column_regression_file():
    """Regression on R^1 reads one value column: the note must not format other layouts."""
    from dpcore.manifolds import Euclidean

    d = read_manifold_csv(b"x,y1\n0.1,2.0\n0.5,2.5\n0.9,3.1\n", Euclidean(1), "regression")
    assert d.layout == "coordinates"
    assert d.note == "Read 3 points from the columns y1."


def test_covariate_column_and_ignored_columns_by_choice():
    """A column mapping: the covariate read from a named column, the identifier and person
    columns ignored and listed; without ``others="ignore"`` they stay errors at the header."""
    text = (b"id,age,y1,y2,y3,person\n1,0.1,0,0,1,a\n2,0.5,0,1,0,a\n3,0.9,1,0,0,b\n")
    d = read_manifold_csv(text, Sphere(2), "regression", covariate="age", others="ignore")
    np.testing.assert_array_equal(d.x, [0.1, 0.5, 0.9])
    np.testing.assert_array_equal(d.y, [[0, 0, 1], [0, 1, 0], [1, 0, 0]])
    assert d.ignored == ("id", "person") and "Columns not used: id, person." in d.note
    np.testing.assert_array_equal(d.rows, [2, 3, 4])
    with pytest.raises(DataValidationError) as err:
        read_manifold_csv(text, Sphere(2), "regression", covariate="age")
    assert_locates(err.value, 1, "id")
    with pytest.raises(DataValidationError, match="missing column"):
        read_manifold_csv(text, Sphere(2), "regression", covariate="height", others="ignore")
    with pytest.raises(ValueError, match="others"):
        read_manifold_csv(text, Sphere(2), "regression", others="drop")


# ------------------------------------------------ issue "The first hour": roles of columns
def test_response_columns_are_the_ones_the_reader_reads():
    """What read_manifold_csv takes as the points of a file (no column mapping), as spelled in
    its header: a page offers every other numeric column as the covariate."""
    from dpcore.data import response_columns

    assert response_columns(S2, ["city", "Latitude", "Longitude", "pop"]) == (
        "Latitude", "Longitude")
    assert response_columns(S2, ["X", "Y1", "y2", "y3", "lat", "lng"]) == ("Y1", "y2", "y3")
    assert response_columns(S2, ["x", "y1"]) == ("y1",)  # the ones present
    assert response_columns(SPD(2), ["s11", "s12", "s21", "s22", "t"]) == (
        "s11", "s12", "s21", "s22")
    assert response_columns(SPD(2), ["s11", "s12", "s22"]) == ("s11", "s12", "s22")
    assert response_columns(KendallShape(3), ["age", *[f"l{c}{i}" for i in range(1, 5)
                                                       for c in "xy"]]) == (
        "lx1", "ly1", "lx2", "ly2", "lx3", "ly3")


def test_a_response_column_given_as_the_covariate_is_a_data_error_naming_it():
    """The reader's response columns depend on the file's header: a covariate that is one of
    them is reported like any problem of the file (a DataValidationError, still a ValueError),
    naming the column, never a bare argument error."""
    err = read_error("city,lat,lng\nParis,48.85,2.35\nRome,41.9,12.5\n", S2, "regression",
                     covariate="lat")
    assert_locates(err, 1, "lat")
    assert "'lat' is chosen for both the covariate and a response column" in str(err)
    assert isinstance(err, ValueError)
