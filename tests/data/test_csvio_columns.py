"""Column mappings of ``read_manifold_csv`` (``columns=``, ``group=``): files whose columns have
names of their own, in any order, with other columns beside them, read like the reader's own
format; every problem named by the user's row and the FILE's column."""

from __future__ import annotations

import io

import numpy as np
import pytest

from dpcore.data import (
    DataValidationError,
    make_mean_data,
    make_regression_data,
    read_manifold_csv,
    to_csv,
)
from dpcore.manifolds import SPD, Hyperbolic, KendallShape, Sphere

from .manifold_cases import IDS, MANIFOLDS
from .test_csvio import assert_locates

S2 = Sphere(2)
XYZ = {"y1": "px", "y2": "py", "y3": "pz"}


def read_error(text, manifold=S2, task="mean", **kwargs) -> DataValidationError:
    with pytest.raises(DataValidationError) as info:
        read_manifold_csv(text.encode(), manifold, task, **kwargs)
    return info.value


def renamed(text, names, extra=True, seed=0):
    """The CSV ``text`` (header + rows, written by ``to_csv``) with its columns renamed by
    ``names`` (reader's name -> file name), shuffled, and an id and a text column added."""
    header, *rows = text.strip().splitlines()
    cols = header.split(",")
    cells = [r.split(",") for r in rows]
    order = np.random.default_rng(seed).permutation(len(cols))
    head = [names.get(cols[j], cols[j]) for j in order]
    body = [[r[j] for j in order] for r in cells]
    if extra:
        head = ["id", *head, "comment"]
        body = [[str(i + 1), *r, f"note {i}"] for i, r in enumerate(body)]
    return "\n".join(",".join(r) for r in [head, *body]) + "\n"


# ------------------------------------------------------------------------- renamed columns
@pytest.mark.parametrize("m", MANIFOLDS, ids=IDS)
@pytest.mark.parametrize("task", ["mean", "regression"])
def test_renamed_shuffled_columns_read_as_the_readers_own_file(m, task):
    """Oracle: the same file under the reader's own names (``columns=None``)."""
    if task == "mean":
        y = make_mean_data(m, 7, radius=0.5, rng=1)
        own = to_csv(m, y)
    else:
        data = make_regression_data(m, 7, rng=1)
        own = to_csv(m, data.y, data.x)
    slots = m.csv_columns()
    names = {s: f"Col {s.upper()} (file)" for s in slots}
    if task == "regression":
        names["x"] = "Age"
    text = renamed(own, names, seed=len(slots))
    expect = read_manifold_csv(own.encode(), m, task)
    kwargs = {"covariate": "Age"} if task == "regression" else {}
    got = read_manifold_csv(text.encode(), m, task,
                            columns={s: names[s] for s in slots}, **kwargs)
    np.testing.assert_array_equal(got.y, expect.y)
    if task == "regression":
        np.testing.assert_array_equal(got.x, expect.x)
    np.testing.assert_array_equal(got.rows, expect.rows)
    assert got.layout == expect.layout
    assert got.columns == ((("Age",) if task == "regression" else ())
                           + tuple(names[s] for s in slots))
    assert got.slots == tuple(slots)
    assert got.ignored == ("id", "comment")
    assert "Columns not used: id, comment." in got.note
    # a mapped file names its columns in full, not as a span
    assert names[slots[-1]] in got.note


def test_mapping_to_the_readers_own_names_keeps_the_span_and_ignores_others():
    y = make_mean_data(S2, 5, radius=0.3, rng=2)
    text = renamed(to_csv(S2, y), {}, seed=3)
    with pytest.raises(DataValidationError, match="unexpected column"):
        read_manifold_csv(text.encode(), S2, "mean")
    got = read_manifold_csv(text.encode(), S2, "mean",
                            columns={"Y1": "Y1", "y2": " y2 ", "y3": "y3"})
    np.testing.assert_array_equal(got.y, y)
    assert got.note.startswith("Read 5 points from the columns y1..y3.")
    assert got.columns == ("y1", "y2", "y3")  # as spelled in the header


def test_header_names_matched_case_insensitively_and_reported_as_written():
    text = "ID,Px,PY,pz\n1,0,0,1\n2,0,1,0\n"
    got = read_manifold_csv(text.encode(), S2, "mean",
                            columns={"y1": "px", "y2": "py", "y3": "PZ"})
    assert got.columns == ("Px", "PY", "pz") and got.ignored == ("ID",)
    np.testing.assert_array_equal(got.y, [[0, 0, 1], [0, 1, 0]])


# ------------------------------------------------------------------------- missing column
def test_a_missing_mapped_column_is_named_with_its_role():
    err = read_error("id,px,py,z\n1,0,0,1\n", columns=XYZ)
    assert_locates(err, 1, "pz")
    assert "no column named 'pz' (chosen for y3)" in str(err)
    assert "its columns are: id, px, py, z" in str(err)
    assert len(err.problems) == 1
    # every missing column at once, the covariate and the group column included
    err = read_error("id,px,py,z\n1,0,0,1\n2,1,0,0\n", task="regression", covariate="age",
                     columns=XYZ, group="person")
    assert [(p.row, p.column) for p in err.problems] == [(1, "age"), (1, "pz"), (1, "person")]
    assert "chosen for the covariate" in err.problems[0].message
    assert "chosen for the group column" in err.problems[2].message


# ------------------------------------------------------------------------- bad cells
def test_a_bad_cell_is_named_by_the_users_row_and_the_files_column():
    # a blank line (row 4) still counts, as in the user's spreadsheet
    text = "id;px;py;pz\n1;0;0;1\n2;0,6;0;0,8\n\n4;0;abc;1\n5;nan;0;1\n6;0;0;\n"
    err = read_error(text, columns=XYZ)
    assert [(p.row, p.column) for p in err.problems] == [(5, "py"), (6, "px"), (7, "pz")]
    assert_locates(err, 5, "py")
    assert "'abc' is not a number" in str(err)
    got = read_manifold_csv(text.replace("abc", "0").replace("nan", "0").encode(), S2, "mean",
                            columns=XYZ, blank="drop")
    assert got.rows.tolist() == [2, 3, 5, 6] and got.dropped == 1
    np.testing.assert_array_equal(got.y[1], [0.6, 0.0, 0.8])  # decimal commas in a ';' file


def test_a_point_off_the_manifold_is_named_by_the_files_columns():
    err = read_error("a,px,py,pz\n1,0,0,1\n2,0,2,0\n", columns=XYZ)
    assert_locates(err, 3, None)
    assert "the point in columns px, py, pz has norm 2" in str(err)
    assert "y1" not in str(err)
    # a check at one column (the time-like coordinate of the hyperboloid): the file's name
    h = Hyperbolic(2)
    text = "t,u,v\n1,0,0\n-1,0,0\n"
    with pytest.raises(DataValidationError) as info:
        read_manifold_csv(text.encode(), h, "mean", columns={"y1": "t", "y2": "u", "y3": "v"})
    assert_locates(info.value, 3, "t")


# ------------------------------------------------------------------------- lat/lon
def test_latitude_longitude_under_other_names():
    lat = np.array([48.1374, -33.8688, 0.0, 89.0])
    lon = np.array([11.5755, 151.2093, 0.0, -120.0])
    body = "".join(f"S{i};{a};{b};{7 * i}\n".replace(".", ",")
                   for i, (a, b) in enumerate(zip(lat, lon, strict=True)))
    text = "Station;Breite;Länge;Höhe\n" + body
    got = read_manifold_csv(text.encode(), S2, "mean",
                            columns={"lat": "Breite", "lon": "Länge"})
    # oracle: the closed form (cos φ cos λ, cos φ sin λ, sin φ)
    phi, lam = np.radians(lat), np.radians(lon)
    expect = np.stack([np.cos(phi) * np.cos(lam), np.cos(phi) * np.sin(lam), np.sin(phi)], 1)
    np.testing.assert_allclose(got.y, expect, rtol=0, atol=1e-15)
    assert got.layout == "latlon" and got.slots == ("lat", "lon")
    assert got.ignored == ("Station", "Höhe")
    assert "Read 4 places from the columns Breite (latitude) and Länge (longitude)" in got.note
    # out of range: the file's columns
    err = read_error("Breite,Länge\n10,20\n95,20\n0,400\n",
                     columns={"lat": "Breite", "lon": "Länge"})
    assert [(p.row, p.column) for p in err.problems] == [(3, "Breite"), (4, "Länge")]


# ------------------------------------------------------------------------- SPD
def test_spd_full_matrix_under_other_names():
    m = SPD(3)
    y = make_mean_data(m, 6, radius=1.0, rng=5)
    y = 0.5 * (y + np.swapaxes(y, -1, -2))
    slots = [f"s{i}{j}" for i in range(1, 4) for j in range(1, 4)]
    names = {s: f"cov_{'abc'[int(s[1]) - 1]}{'abc'[int(s[2]) - 1]}" for s in slots}
    order = np.random.default_rng(6).permutation(9)
    header = ["subject", *(names[slots[j]] for j in order)]
    rows = [[f"p{i}", *(repr(float(a.ravel()[j])) for j in order)] for i, a in enumerate(y)]
    text = "\n".join(",".join(r) for r in [header, *rows]) + "\n"
    got = read_manifold_csv(text.encode(), m, "mean", columns=names)
    np.testing.assert_array_equal(got.y, y)
    assert got.layout == "spd_full" and got.ignored == ("subject",)
    assert "cov_aa, cov_ab, cov_ac, cov_ba" in got.note
    # not symmetric: the file's column of the lower entry, the message in the file's names
    bad = [r.copy() for r in rows[:2]]
    ba = 1 + list(order).index(slots.index("s21"))
    bad[1][ba] = repr(float(bad[1][ba]) + 0.5)
    text = "\n".join(",".join(r) for r in [header, *bad]) + "\n"
    with pytest.raises(DataValidationError) as info:
        read_manifold_csv(text.encode(), m, "mean", columns=names)
    assert_locates(info.value, 3, "cov_ba")
    assert "cov_ba = " in str(info.value) and "but cov_ab = " in str(info.value)
    assert "s21" not in str(info.value)


def test_spd_upper_triangle_under_other_names_names_the_culprit_entry():
    m = SPD(2)
    names = {"s11": "var_a", "s12": "cov", "s22": "var_b"}
    got = read_manifold_csv(b"var_b,cov,var_a\n1,0.5,2\n", m, "mean", columns=names)
    np.testing.assert_array_equal(got.y[0], [[2, 0.5], [0.5, 1]])
    assert got.layout == "spd_upper" and "(var_a, cov, var_b)" in got.note
    # |cov| >= sqrt(var_a var_b): a correlation above 1, reported at the file's 'cov'
    err = read_error("var_b,cov,var_a\n1,0.5,1\n1,3,2\n", m, columns=names)
    assert_locates(err, 3, "cov")
    assert "sqrt(var_a * var_b)" in str(err) and "in columns var_a, cov, var_b" in str(err)
    err = read_error("var_b,cov,var_a\n1,0,-1\n", m, columns=names)
    assert_locates(err, 2, "var_a")


def test_kendall_landmarks_under_other_names():
    m = KendallShape(3)
    y = make_mean_data(m, 4, radius=0.3, rng=4)
    names = {s: f"P{s[2]}{s[1]}" for s in m.csv_columns()}  # lx1 -> P1x
    text = renamed(to_csv(m, y), names)
    got = read_manifold_csv(text.encode(), m, "mean", columns=names)
    np.testing.assert_allclose(got.y, y, rtol=0, atol=1e-12)
    assert got.layout == "preshapes"


# ------------------------------------------------------------------------- group column
def test_group_column_read_as_text_blank_cells_dropped_or_reported():
    text = ("who,px,py,pz,note\n"
            "ann,0,0,1,\n"
            "bob,0,1,0,x\n"
            ",1,0,0,x\n"        # no person
            " ann ,0,0,1,x\n")
    got = read_manifold_csv(text.encode(), S2, "mean", columns=XYZ, group="who",
                            blank="drop")
    assert got.groups.tolist() == ["ann", "bob", "ann"] and got.rows.tolist() == [2, 3, 5]
    assert got.dropped == 1 and got.ignored == ("note",)
    err = read_error(text, columns=XYZ, group="who")
    assert_locates(err, 4, "who")
    assert "group column" in str(err)
    # without a mapping: the manifold's own columns, the group column is not 'unexpected'
    own = read_manifold_csv(b"y1,y2,y3,g\n0,0,1,a\n0,1,0,a\n", S2, "mean", group="g")
    assert own.groups.tolist() == ["a", "a"] and own.ignored == ()
    assert read_manifold_csv(b"y1,y2,y3\n0,0,1\n", S2, "mean").groups is None


def test_regression_with_a_mapping_names_the_covariate_as_in_the_file():
    text = "Age,px,py,pz\n3,0,0,1\n3,0,1,0\n"
    err = read_error(text, task="regression", covariate="Age", columns=XYZ)
    assert [(p.row, p.column) for p in err.problems] == [(None, "Age")]
    assert str(err).startswith("Column 'Age': every value is 3")


# ------------------------------------------------------------------------- arguments
def test_invalid_mappings_are_argument_errors():
    text = b"px,py,pz,lat\n0,0,1,5\n"
    with pytest.raises(ValueError, match="y1, y2, y3; or lat, lon; got y1, y2"):
        read_manifold_csv(text, S2, "mean", columns={"y1": "px", "y2": "py"})
    with pytest.raises(ValueError, match="chosen with `covariate`"):
        read_manifold_csv(text, S2, "regression", columns={"x": "t", **XYZ})
    with pytest.raises(ValueError, match="'px' is chosen for both column y1 and column y3"):
        read_manifold_csv(text, S2, "mean", columns={"y1": "px", "y2": "py", "y3": "PX"})
    with pytest.raises(ValueError, match="column y1 and the group column"):
        read_manifold_csv(text, S2, "mean", columns=XYZ, group="px")
    with pytest.raises(ValueError, match="the covariate and column y1"):
        read_manifold_csv(text, S2, "regression", columns=XYZ, covariate="px")
    with pytest.raises(ValueError, match="twice"):
        read_manifold_csv(text, S2, "mean", columns={"y1": "px", "Y1": "a", "y2": "b",
                                                     "y3": "c"})
    with pytest.raises(TypeError, match="mapping"):
        read_manifold_csv(text, S2, "mean", columns=["px", "py", "pz"])
    with pytest.raises(TypeError, match="column names"):
        read_manifold_csv(text, S2, "mean", columns={"y1": "px", "y2": "py", "y3": ""})
    with pytest.raises(TypeError, match="group"):
        read_manifold_csv(text, S2, "mean", group=" ")


def test_nothing_is_written_while_reading_a_mapped_file(monkeypatch, tmp_path):
    """In memory only: opening any file for writing fails the test."""
    import builtins

    real_open = builtins.open

    def guarded(file, mode="r", *args, **kwargs):
        assert not any(c in mode for c in "wax+"), f"write attempted: {file}"
        return real_open(file, mode, *args, **kwargs)

    monkeypatch.setattr(builtins, "open", guarded)
    got = read_manifold_csv(io.BytesIO(b"id,px,py,pz,g\n1,0,0,1,a\n"), S2, "mean",
                            columns=XYZ, group="g")
    assert got.y.shape == (1, 3)
