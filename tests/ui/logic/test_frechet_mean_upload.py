"""Column mapping of uploads on the Fréchet mean page (ui.logic.frechet_mean): the layouts a
file may use, default columns (identifiers never chosen), the points read through a mapping
against independent oracles, blank rows dropped with a count, rows per person from a person
column, and errors naming the row and the file's own column."""

import numpy as np
import pytest

from dpcore.data import DataValidationError, expected_columns, make_mean_data, to_csv
from dpcore.manifolds import SPD, Euclidean, KendallShape, Sphere
from ui.logic import frechet_mean as L

MAX_BYTES = 10**7


def scanned(text):
    return L.scan_upload(text.encode() if isinstance(text, str) else text,
                         max_bytes=MAX_BYTES)


def with_extra_columns(m, y):
    """A file of the points ``y`` with an id, a name, a person and a date column around the
    manifold's own columns, rows in file order; returns (text, person of each row)."""
    header, *rows = to_csv(m, y).strip().splitlines()
    person = [f"p{i // 3}" for i in range(len(rows))]
    lines = [f"id,name,{header},person,date"] + [
        f"{i + 1},Name {i},{row},{person[i]},2024-03-{i % 28 + 1:02d} 10:{i % 60:02d}"
        for i, row in enumerate(rows)]
    return "\n".join(lines) + "\n", person


# --------------------------------------------------------------------------- layouts
@pytest.mark.parametrize("m, keys", [
    (Sphere(2), ["coordinates", "latlon"]), (SPD(2), ["spd_upper", "spd_full"]),
    (SPD(3), ["spd_upper", "spd_full"]), (KendallShape(4), ["landmarks"]),
    (Euclidean(2), ["coordinates"]),
])
def test_layouts_name_the_readers_columns(m, keys):
    layouts = L.point_layouts(m)
    assert list(layouts) == keys
    first = layouts[keys[0]]
    assert list(first.slots) == expected_columns(m, "mean")
    assert len(first.slot_labels) == len(first.slots)
    if isinstance(m, SPD):
        k = m.k
        assert layouts["spd_full"].slots == tuple(f"s{i}{j}" for i in range(1, k + 1)
                                                  for j in range(1, k + 1))
    if isinstance(m, Sphere):
        assert layouts["latlon"].slots == ("lat", "lon")


# --------------------------------------------------------------------------- defaults
def test_extra_columns_are_ignored_and_identifiers_never_chosen():
    m = Sphere(2)
    y = make_mean_data(m, 12, radius=0.4, rng=1)
    text, _ = with_extra_columns(m, y)
    upload = scanned(text)
    assert L.default_layout(m, upload.profiles) == "coordinates"
    columns = L.default_point_columns(m, "coordinates", upload.profiles)
    assert columns == ("y1", "y2", "y3")
    read = L.read_mapped(upload, m, L.PointMapping("coordinates", columns))
    # oracle: the library's reader on the manifold's own file
    np.testing.assert_allclose(read.y, y, atol=1e-12)
    assert read.rows.tolist() == list(range(2, 14))
    assert read.ignored == ("id", "name", "person", "date")
    assert read.dropped == 0 and read.groups is None and read.rows_per_person == 1
    assert "Read 12 points from the columns y1..y3." in read.note
    assert L.person_hint(upload.profiles, exclude=columns) == ["person"]


def test_unnamed_columns_are_taken_only_when_nothing_is_left_to_guess():
    m = Sphere(2)
    y = make_mean_data(m, 6, radius=0.3, rng=2)
    body = "".join(f"{i + 1},{a!r},{b!r},{c!r}\n" for i, (a, b, c) in enumerate(y.tolist()))
    # a row counter (1..n) and three unnamed columns: the three, in file order
    upload = scanned("row_no,px,py,pz\n" + body)
    assert L.default_point_columns(m, "coordinates", upload.profiles) == ("px", "py", "pz")
    assert "taken in file order" in L.recognised_text(m, "coordinates", ("px", "py", "pz"),
                                                      upload.profiles)
    read = L.read_mapped(upload, m, L.PointMapping("coordinates", ("px", "py", "pz")))
    np.testing.assert_allclose(read.y, y, atol=1e-12)
    assert L.mapping_legend(m, read.mapping) == "Point columns: y1 ← 'px', y2 ← 'py', y3 ← 'pz'."
    # a fourth numeric column (a repeated subject number, no identifier): the user chooses
    subject = "".join(f"{i // 2},{a!r},{b!r},{c!r}\n" for i, (a, b, c) in enumerate(y.tolist()))
    upload = scanned("subject,px,py,pz\n" + subject)
    columns = L.default_point_columns(m, "coordinates", upload.profiles)
    assert columns == (None, None, None)
    level, text = L.incomplete_mapping_text(m, "coordinates", columns, upload.profiles)
    assert level == "info" and "identifier-like columns are never chosen" in text
    # an identifier is not taken even when it would make up the count
    upload = scanned("id,px,py\n1,0.5,0.5\n2,0.1,0.2\n")
    assert L.default_point_columns(m, "coordinates", upload.profiles) == (None, None, None)


def test_too_few_columns_is_an_error_on_the_header_naming_the_columns():
    m = Sphere(2)
    upload = scanned("a,b\n1,2\n3,4\n")
    columns = L.default_point_columns(m, "coordinates", upload.profiles)
    level, text = L.incomplete_mapping_text(m, "coordinates", columns, upload.profiles)
    assert level == "error"
    assert text.startswith("Header (row 1)") and "needs 3 numeric columns" in text
    assert "'a', 'b'" in text and "Latitude and longitude in degrees" in text


# --------------------------------------------------------------------------- layouts read
def test_latitude_longitude_columns_become_points_of_the_sphere():
    m = Sphere(2)
    lat = np.array([48.8566, -33.8688, 35.6762, 0.0])
    lon = np.array([2.3522, 151.2093, 139.6503, 0.0])
    body = "".join(f"C{i},{a},{b},{1000 * (i + 1)}\n"
                   for i, (a, b) in enumerate(zip(lat, lon, strict=True)))
    upload = scanned("city,Latitude,Long,population\n" + body)
    assert L.default_layout(m, upload.profiles) == "latlon"
    columns = L.default_point_columns(m, "latlon", upload.profiles)
    assert columns == ("Latitude", "Long")
    read = L.read_mapped(upload, m, L.PointMapping("latlon", columns))
    # oracle: the closed form (cos φ cos λ, cos φ sin λ, sin φ)
    phi, lam = np.radians(lat), np.radians(lon)
    expected = np.stack([np.cos(phi) * np.cos(lam), np.cos(phi) * np.sin(lam), np.sin(phi)], 1)
    np.testing.assert_allclose(read.y, expected, atol=1e-12)
    assert read.layout == "latlon" and read.ignored == ("city", "population")
    assert "Read 4 places from the columns Latitude (latitude) and Long (longitude)" in read.note
    # out of range: named by row and by the file's column
    bad = scanned("city,Latitude,Long\nA,10,20\nB,95,20\nC,0,400\n")
    with pytest.raises(DataValidationError) as err:
        L.read_mapped(bad, m, L.PointMapping("latlon", ("Latitude", "Long")))
    assert [(p.row, p.column) for p in err.value.problems] == [(3, "Latitude"), (4, "Long")]


def test_spd_full_and_upper_layouts_with_the_files_own_names():
    m = SPD(2)
    y = make_mean_data(m, 5, radius=1.0, rng=3)
    full = "".join(f"{i}," + ",".join(repr(float(v)) for v in a.ravel()) + "\n"
                   for i, a in enumerate(y))
    upload = scanned("sample,xx,xy,yx,yy\n" + full)
    mapping = L.PointMapping("spd_full", ("xx", "xy", "yx", "yy"))
    np.testing.assert_allclose(L.read_mapped(upload, m, mapping).y, y, atol=1e-12)
    # the same matrices as upper triangles under other names, columns in another order
    upper = "".join(",".join(repr(float(v)) for v in (a[1, 1], a[0, 1], a[0, 0])) + "\n"
                    for a in y)
    upload = scanned("var_b,cov,var_a\n" + upper)
    read = L.read_mapped(upload, m, L.PointMapping("spd_upper", ("var_a", "cov", "var_b")))
    np.testing.assert_allclose(read.y, y, atol=1e-12)
    # an indefinite matrix is reported at the file's column that shows why
    bad = scanned("var_b,cov,var_a\n1,0.5,1\n1,3,2\n")
    with pytest.raises(DataValidationError) as err:
        L.read_mapped(bad, m, L.PointMapping("spd_upper", ("var_a", "cov", "var_b")))
    assert (err.value.problems[0].row, err.value.problems[0].column) == (3, "cov")
    # a full matrix that is not symmetric: the file's column of the lower entry
    bad = scanned("xx,xy,yx,yy\n2,0.5,0.5,2\n2,0.5,0.7,2\n")
    with pytest.raises(DataValidationError) as err:
        L.read_mapped(bad, m, L.PointMapping("spd_full", ("xx", "xy", "yx", "yy")))
    assert (err.value.problems[0].row, err.value.problems[0].column) == (3, "yx")


def test_kendall_landmarks_are_read_through_the_mapping():
    m = KendallShape(3)
    y = make_mean_data(m, 4, radius=0.3, rng=4)
    upload = scanned(to_csv(m, y))
    layout = L.default_layout(m, upload.profiles)
    columns = L.default_point_columns(m, layout, upload.profiles)
    assert columns == tuple(m.csv_columns())
    read = L.read_mapped(upload, m, L.PointMapping(layout, columns))
    np.testing.assert_allclose(read.y, y, atol=1e-9)


# --------------------------------------------------------------------------- rows and people
def test_blank_rows_are_dropped_with_a_count_and_the_person_column_counts_rows():
    m = Sphere(2)
    text = ("who;a;b;c;note\n"
            "ann;0;0;1;x\n"
            "ann;0;1;0;\n"        # an empty unmapped cell: kept
            "bob;0,6;0;0,8;x\n"   # decimal commas in a ';' file
            "\n"                  # a blank line: skipped, still counted
            "bob;;1;0;x\n"        # blank point cell: dropped
            ";1;0;0;x\n"          # blank person: dropped when the person column is mapped
            "ann;1;0;0;x\n")
    upload = scanned(text)
    mapping = L.PointMapping("coordinates", ("a", "b", "c"), person="who")
    read = L.read_mapped(upload, m, mapping)
    assert read.rows.tolist() == [2, 3, 4, 8]
    assert read.dropped == 2
    np.testing.assert_allclose(read.y[2], [0.6, 0.0, 0.8])
    assert read.groups.tolist() == ["ann", "ann", "bob", "ann"]
    assert read.group_sizes.tolist() == [3, 1] and read.rows_per_person == 3
    assert read.ignored == ("note",)
    assert "2 rows with an empty cell left out" in read.note
    without = L.read_mapped(upload, m, L.PointMapping("coordinates", ("a", "b", "c")))
    assert without.rows.tolist() == [2, 3, 4, 7, 8] and without.rows_per_person == 1
    assert L.person_rows_text(3, "who", read.group_sizes).startswith("**Rows per person: 3**")


@pytest.mark.parametrize("name, hinted", [
    ("person", True), ("Subject ID", True), ("patient_no", True), ("rats", True),
    ("study.subject", True), ("ratio", False), ("name", False), ("date", False), ("id", False),
])
def test_columns_that_may_name_people_are_hinted_never_chosen(name, hinted):
    upload = scanned(f"{name},y1,y2,y3\na,0,0,1\nb,0,1,0\n")
    assert (L.person_hint(upload.profiles, exclude=("y1", "y2", "y3")) == [name]) is hinted


# --------------------------------------------------------------------------- bad input
def test_bad_cells_are_named_by_row_and_the_files_column():
    m = Sphere(2)
    upload = scanned("id,px,py,pz\n1,0,0,1\n2,0,1,0\n\n4,0,abc,1\n5,nan,0,1\n")
    with pytest.raises(DataValidationError) as err:
        L.read_mapped(upload, m, L.PointMapping("coordinates", ("px", "py", "pz")))
    assert [(p.row, p.column) for p in err.value.problems] == [(5, "py"), (6, "px")]
    assert "Row 5, column 'py'" in str(err.value) and "'abc'" in str(err.value)


def test_a_missing_or_twice_chosen_column_is_named():
    m = Sphere(2)
    upload = scanned("y1,y2,y3,g\n0,0,1,a\n0,1,0,b\n")
    with pytest.raises(DataValidationError) as err:
        L.read_mapped(upload, m, L.PointMapping("coordinates", ("y1", "y2", "z")))
    assert (err.value.row, err.value.column) == (1, "z")
    assert "no column named 'z'" in str(err.value)
    with pytest.raises(DataValidationError) as err:
        L.read_mapped(upload, m, L.PointMapping("coordinates", ("y1", "y1", "y3")))
    assert (err.value.row, err.value.column) == (1, "y1")
    assert "chosen for y1 and y2" in str(err.value)
    with pytest.raises(DataValidationError, match="chosen for y3 and person"):
        L.read_mapped(upload, m, L.PointMapping("coordinates", ("y1", "y2", "y3"), "Y3"))
    with pytest.raises(DataValidationError, match="needs one column for each"):
        L.read_mapped(upload, m, L.PointMapping("coordinates", ("y1", "y2", None)))
    with pytest.raises(DataValidationError, match="empty"):
        scanned(b"")
