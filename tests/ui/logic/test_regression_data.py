"""Column mapping of uploaded tables (ui.logic.regression_data): the preview's profiles,
identifier detection, default roles (Geodesic regression's, through the shared reader
ui.logic.upload), blank rows dropped with a count, errors by row and column, rows per person
from a group column."""

import numpy as np
import pytest

from dpcore.data import DataValidationError, scan_table
from dpcore.manifolds import Sphere
from ui.logic import regression_data as D
from ui.logic import upload as U

MESSY = (
    "ID;Subject;Age (years);Systolic BP [mmHg];Chol;Comment\n"
    "1;S1;41,5;120.5;5,1;ok\n"
    "2;S1;;121.0;5,3;late\n"          # blank age: row 3 dropped when age is mapped
    "3;S2;60,25;131.5;;\n"           # blank cholesterol and comment
    "4;S3;35,0;118.0;4,9;recheck\n"
    "5;S3;52,5;126.0;6,0;ok\n"
    "6;S3;47,0;124.5;5,5;ok\n"
)


def profiles_of(text):
    return D.profile_columns(scan_table(text.encode()))


def test_profiles_give_type_blanks_and_identifiers():
    profiles = {p.name: p for p in profiles_of(MESSY)}
    assert [p.kind for p in profiles.values()] == ["number", "text", "number", "number",
                                                   "number", "text"]
    assert profiles["Age (years)"].blanks == 1 and profiles["Chol"].blanks == 1
    assert profiles["Comment"].blanks == 1
    assert profiles["ID"].id_like == "named 'ID'"
    # Decimal-comma numbers are not mistaken for all-different text; repeated text is no id.
    assert not profiles["Age (years)"].id_like and not profiles["Subject"].id_like
    frame = D.profile_frame(list(profiles.values()))
    assert list(frame.columns) == ["column", "type", "empty cells", "note"]
    assert frame.loc[0, "note"].startswith("looks like an identifier")


@pytest.mark.parametrize("name", ["id", "ID", "Index", "row", "patient_id", "Row No",
                                  "Unnamed: 0", "#"])
def test_identifier_names(name):
    (profile, _, _) = profiles_of(f"{name},a,b\n7,1.5,2\n3,2.5,4\n9,0.5,1\n")
    assert profile.id_like, name


@pytest.mark.parametrize("values, flagged", [
    ([0, 1, 2, 3], True), ([1, 2, 3, 4], True),           # row counters
    ([2001, 2002, 2003, 2004], False),                    # years: a real covariate
    ([1, 2, 4, 3], False), ([1.0, 2.5, 3.0, 4.0], False),  # not a counter
])
def test_row_counters_are_identifiers(values, flagged):
    text = "n,a,b\n" + "".join(f"{v},{k * 1.5},{k}\n" for k, v in enumerate(values))
    assert bool(profiles_of(text)[0].id_like) is flagged


def test_all_different_text_is_an_identifier():
    profiles = profiles_of("code,a,b\nx1,1,2\nx2,2,3\nx3,3,5\n")
    assert profiles[0].id_like == "every value is different text"


def test_default_mapping_never_picks_an_identifier():
    mapping = D.default_mapping(profiles_of(MESSY))
    assert mapping == D.ColumnMapping("Age (years)", ("Systolic BP [mmHg]",), None)
    assert D.default_mapping(profiles_of(MESSY), responses=2).responses == (
        "Systolic BP [mmHg]", "Chol")
    # Only a row counter and one measurement: no default covariate; the user chooses.
    mapping = D.default_mapping(profiles_of("id,y\n1,2.5\n2,3.5\n3,1.0\n"))
    assert mapping.covariate == "y" and mapping.responses == ()
    assert D.default_mapping(profiles_of("id,row\n1,1\n2,2\n")).covariate is None


def test_mapping_drops_blank_rows_with_a_count_and_reads_decimal_commas():
    table = scan_table(MESSY.encode())
    data = D.apply_mapping(table, D.ColumnMapping("Age (years)", ("Chol",)))
    assert data.dropped == 2 and data.n == 4
    assert data.rows.tolist() == [2, 5, 6, 7]
    np.testing.assert_array_equal(data.x, [41.5, 35.0, 52.5, 47.0])
    np.testing.assert_array_equal(data.y[:, 0], [5.1, 4.9, 6.0, 5.5])
    assert data.groups is None and data.rows_per_person == 1
    # Unmapped columns (the blank comment) are not read and drop nothing.
    only = D.apply_mapping(table, D.ColumnMapping("Systolic BP [mmHg]", ("ID",)))
    assert only.dropped == 0 and only.n == 6


def test_group_column_gives_rows_per_person():
    table = scan_table(MESSY.encode())
    data = D.apply_mapping(table, D.ColumnMapping("Age (years)", ("Systolic BP [mmHg]",),
                                                  "Subject"))
    # Row 3 (S1, blank age) is dropped: S1 keeps 1 row, S2 1, S3 3.
    assert data.groups.tolist() == ["S1", "S2", "S3", "S3", "S3"]
    assert data.group_sizes.tolist() == [3, 1, 1]
    assert data.rows_per_person == 3
    # A blank group cell drops its row too.
    blank = scan_table(b"g,x,y\na,1,2\n,2,3\nb,3,5\n")
    data = D.apply_mapping(blank, D.ColumnMapping("x", ("y",), "g"))
    assert data.dropped == 1 and data.rows_per_person == 1


def test_mapping_errors_name_row_and_column():
    table = scan_table(b"a;b;c\n1,5;2;x\n2;abc;3\n3;4;5\n")
    with pytest.raises(DataValidationError) as err:
        D.apply_mapping(table, D.ColumnMapping("a", ("b",)))
    assert "Row 3" in str(err.value) and "'b'" in str(err.value) and "abc" in str(err.value)
    with pytest.raises(DataValidationError, match="two roles"):
        D.apply_mapping(table, D.ColumnMapping("a", ("a",)))
    with pytest.raises(DataValidationError, match="no column named 'z'"):
        D.apply_mapping(table, D.ColumnMapping("a", ("z",)))
    with pytest.raises(DataValidationError, match="none is left"):
        D.apply_mapping(scan_table(b"a,b\n1,\n2,\n"), D.ColumnMapping("a", ("b",)))


def test_preview_shows_the_first_rows_as_written():
    frame = D.preview_frame(scan_table(MESSY.encode()), rows=2)
    assert frame.index.tolist() == [2, 3]
    assert frame.loc[2, "Age (years)"] == "41,5" and frame.loc[3, "Age (years)"] == ""


def test_upload_mapping_reads_a_named_covariate_and_counts_rows_per_person():
    """An uploaded file with an identifier, a renamed covariate and a person column: the
    identifier is never offered as the covariate on Geodesic regression, the person's largest
    group sets the rows per person, and the unread columns are listed."""
    text = ("id,age,y1,y2,y3,rat\n"
            + "".join(f"{i + 1},{t},{y}\n" for i, (t, y) in enumerate([
                (0.1, "0,0,1,a"), (0.4, "0,1,0,a"), (0.7, "0,0.6,0.8,a"),
                (0.2, "1,0,0,b"), (0.9, "0.6,0.8,0,b")]))).encode()
    names = U.covariate_choices(gr_target("sphere"), Sphere(2), scanned(text).profiles)
    assert "id" not in names and names[0] == "age"
    data = D.parse_upload(text, "sphere", None, covariate="age", person="rat")
    np.testing.assert_allclose(data.x, [0.1, 0.4, 0.7, 0.2, 0.9])
    assert data.rows_per_person == 3
    assert "covariate 'age'" in data.description and "Columns not used: id." in \
        data.description and "3 rows per person (column 'rat')" in data.description
    plain = D.parse_upload(text, "sphere", None, covariate="age")
    assert plain.rows_per_person == 1 and "Columns not used: id, rat." in plain.description


# ------------------------------------------------ issue "The first hour": default roles
def gr_target(kind, param=None):
    """What Geodesic regression reads (:func:`pages.geodesic_regression.upload_data`)."""
    return U.UploadTarget(kind, param, covariate=True, infer_param=False, covariate_ids=False,
                          responses=param or 1,
                          max_responses=param if kind == "euclidean" else None)


def scanned(raw):
    return U.scan_upload(raw, max_bytes=10**6)


def test_a_response_column_is_never_the_default_covariate():
    """Latitude/longitude, y1..y3, landmarks and matrix entries are responses: never offered as
    the covariate on Geodesic regression (a free Euclidean layout offers every column, the
    default never a y-named one)."""
    cities = b"city,lat,lng,population\nParis,48.85,2.35,2148000\nRome,41.9,12.5,2873000\n"
    profiles = scanned(cities).profiles
    roles = U.default_roles(gr_target("sphere"), profiles)
    assert roles.mapping.columns == ("lat", "lng")
    assert U.covariate_choices(gr_target("sphere"), roles.manifold, profiles) == ["population"]
    assert roles.mapping.covariate == "population"
    assert [p.name for p in profiles if p.name not in roles.mapping.used] == ["city"]
    profiles = scanned(b"y1,y2,y3,age\n0,0,1,3\n0,1,0,4\n").profiles
    roles = U.default_roles(gr_target("sphere"), profiles)
    assert roles.mapping.covariate == "age"
    assert U.covariate_choices(gr_target("sphere"), roles.manifold, profiles) == ["age"]
    # Euclidean R^1 reads y1; y2 may be chosen but is not a default.
    profiles = scanned(b"y1,y2\n0,1.5\n1,2.5\n0.5,0.7\n").profiles
    roles = U.default_roles(gr_target("euclidean", 1), profiles)
    assert roles.mapping.columns == ("y1",) and roles.mapping.covariate is None
    assert "y2" in U.covariate_choices(gr_target("euclidean", 1), roles.manifold, profiles)
    assert "No column can be the covariate" in U.covariate_text(None, profiles)
    # Kendall: landmarks beyond the page's k are never offered either
    header = "age," + ",".join(f"l{a}{i}" for i in range(1, 9) for a in "xy")
    rows = "\n".join(",".join(f"{v:.3f}" for v in np.random.default_rng(i).uniform(1, 2, 17))
                     for i in range(4))
    profiles = scanned(f"{header}\n{rows}\n".encode()).profiles
    roles = U.default_roles(gr_target("kendall", 4), profiles)
    assert U.covariate_choices(gr_target("kendall", 4), roles.manifold, profiles) == ["age"]


def test_a_file_of_places_without_a_covariate_says_which_column_to_add():
    profiles = scanned(b"city;lat;lng\nParis;48,85;2,35\nRome;41,9;12,5\n").profiles
    roles = U.default_roles(gr_target("sphere"), profiles)
    assert U.covariate_choices(gr_target("sphere"), roles.manifold, profiles) == []
    assert roles.mapping.covariate is None
    text = U.no_covariate_text(profiles, roles.mapping.columns)
    assert "no covariate column" in text and "lat, lng" in text and "'x'" in text
    assert "'city'" in text  # the text column, said to be ignored


def test_parameters_counted_from_the_header():
    names = ["age", *[f"l{c}{i}" for i in range(1, 9) for c in "xy"]]
    assert U.header_param("kendall", names) == 8
    assert U.header_param("kendall", ["x", "LX1", "LY1", "lx2", "ly2", "lx3", "ly3", "lx4"]) == 3
    assert U.header_param("kendall", ["x", "y1", "y2"]) is None
    k = "Number of landmarks k"
    assert "lx5..ly8" in U.param_left_out("kendall", 8, 4, k)
    assert U.param_left_out("kendall", 8, 8, k) == U.param_left_out("kendall", None, 4, k) == ""
    assert "**8 landmarks** (lx1..ly8)" in U.param_read_text("kendall", 8, k)
    assert U.header_param("euclidean", ["t", "y1", "y2", "y3"]) == 3
    assert "the column y3 is not read" in U.param_left_out("euclidean", 3, 2, "Dimension d")
    assert "**3 coordinates** (y1..y3)" in U.param_read_text("euclidean", 3, "Dimension d")


def test_quoted_decimal_commas_upload_as_the_mean_page_reads_them():
    """A comma-separated file whose quoted numbers use decimal commas: the Fréchet mean page's
    reader and this page's read the same values (dpcore.data.tables, one rule for both)."""
    from ui.logic import frechet_mean as L

    raw = (b'"x","lat","lng"\n"0,5","48,85","2,35"\n"1,5","52,52","13,405"\n'
           b'"2,5","40,4168","-3,7038"\n')
    profiles = scanned(raw).profiles
    assert [p.kind for p in profiles] == ["number"] * 3
    roles = U.default_roles(gr_target("sphere"), profiles)
    assert roles.mapping.covariate == "x" and roles.mapping.columns == ("lat", "lng")
    data = D.parse_upload(raw, "sphere", None, covariate="x")
    np.testing.assert_allclose(data.x, [0.5, 1.5, 2.5])
    upload = L.scan_upload(raw, max_bytes=10**6)
    mapping = L.PointMapping("latlon", L.default_point_columns(Sphere(2), "latlon",
                                                               upload.profiles))
    np.testing.assert_allclose(L.read_mapped(upload, Sphere(2), mapping).y, data.y)
