"""The pure logic of the shared upload-and-mapping widget (ui.logic.upload): the layouts each
manifold's files may have, parameters inferred from the header (Kendall k, Euclidean d, SPD k),
the default covariate (never a response column), the default roles of real files, the data read
through a mapping against independent oracles, and messages naming the row and the column.
The Fréchet mean page's own cases are tests/ui/logic/test_frechet_mean_upload.py."""

from pathlib import Path

import numpy as np
import pytest

from dpcore.data import DataValidationError, make_regression_data, to_csv
from dpcore.manifolds import SPD, Euclidean, KendallShape, Sphere
from ui.logic import upload as U

ROOT = Path(__file__).resolve().parents[3]
MAX_BYTES = 10**8


def scanned(text):
    return U.scan_upload(text.encode() if isinstance(text, str) else text, max_bytes=MAX_BYTES)


def roles(text, target):
    upload = scanned(text)
    return upload, U.default_roles(target, upload.profiles)


def read(upload, target, mapping):
    m = U.manifold_of(target, mapping.layout, len(mapping.columns))
    return U.read_mapped(upload, m, mapping)


# --------------------------------------------------------------------------- parameters
@pytest.mark.parametrize("kind, header, expected", [
    ("kendall", [f"l{a}{i}" for i in range(1, 9) for a in "xy"], 8),
    ("kendall", ["age", *(f"{a}{i}" for i in range(1, 6) for a in "xy")], 5),
    ("kendall", ["LX1", "LY1", "lx2", "ly2", "lx3", "ly3", "lx4"], 3),  # ly4 missing: k = 3
    ("kendall", ["x", "y1", "y2"], None),
    ("euclidean", ["t", "y1", "y2", "y3", "note"], 3),
    ("euclidean", ["t", "y2", "y3"], None),
    ("spd", ["s11", "s12", "s22"], 2),
    ("spd", ["s00", "s01", "s11"], 2),
    ("spd", ["s11", "s12", "s13", "s22", "s23", "s33"], 3),
    ("sphere", ["y1", "y2", "y3"], None),
])
def test_the_header_names_the_parameter(kind, header, expected):
    assert U.header_param(kind, header) == expected


def test_kendall_landmarks_k_is_inferred_from_the_header_and_read():
    m = KendallShape(5)
    data = make_regression_data(m, 12, rng=1)
    text = to_csv(m, data.y, data.x)
    upload, r = roles(text, U.UploadTarget("kendall", covariate=True))  # page default: k = 8
    assert r.manifold.k_landmarks == 5 and "**5 landmarks**" in r.param_note
    assert r.mapping.covariate == "x" and r.mapping.layout == "landmarks"
    assert r.mapping.columns == tuple(m.csv_columns())
    got = read(upload, U.UploadTarget("kendall", covariate=True), r.mapping)
    assert got.manifold.k_landmarks == 5
    np.testing.assert_allclose(got.x, data.x, atol=1e-12)
    np.testing.assert_allclose(got.y, data.y, atol=1e-9)
    # x1..x5 / y1..y5 naming: the same shapes, the same k
    renamed = text.replace("lx", "X").replace("ly", "Y").replace("x,", "age,", 1)
    upload, r = roles(renamed, U.UploadTarget("kendall", covariate=True))
    assert r.manifold.k_landmarks == 5 and r.mapping.covariate == "age"
    assert r.mapping.columns[:4] == ("X1", "Y1", "X2", "Y2")
    np.testing.assert_allclose(read(upload, U.UploadTarget("kendall", covariate=True),
                                    r.mapping).y, data.y, atol=1e-9)
    # a page whose manifold is fixed keeps its own k
    _, r = roles(text, U.UploadTarget("kendall", param=8, infer_param=False))
    assert r.manifold.k_landmarks == 8 and r.param_note == ""


def test_rat_skulls_are_eight_landmarks_on_age():
    upload, r = roles((ROOT / "assets/data/rat_skulls.csv").read_bytes(),
                      U.UploadTarget("kendall", covariate=True))
    assert r.manifold.k_landmarks == 8 and r.mapping.covariate == "x"
    got = read(upload, U.UploadTarget("kendall", covariate=True), r.mapping)
    assert got.y.shape == (144, 8, 2) and got.x.min() == 7


def test_euclidean_d_is_the_columns_the_header_names():
    rng = np.random.default_rng(2)
    y = rng.normal(size=(10, 3))
    t = rng.uniform(0, 5, 10)
    text = "t,y3,y1,y2,note\n" + "".join(f"{a},{c},{b[0]},{b[1]},n{i}\n" for i, (a, b, c) in
                                         enumerate(zip(t, y[:, :2], y[:, 2], strict=True)))
    target = U.UploadTarget("euclidean", covariate=True)
    upload, r = roles(text, target)
    assert r.layouts["coordinates"].free
    assert r.mapping.covariate == "t" and r.mapping.columns == ("y1", "y2", "y3")  # y order
    got = read(upload, target, r.mapping)
    assert got.manifold.dim == 3
    np.testing.assert_allclose(got.y, y)
    assert "d = 3" in U.responses_text(r.mapping.columns, upload.profiles)
    # no y-named columns: the first numeric column besides the covariate (one response)
    upload, r = roles("age,height,weight\n20,170,70\n30,180,80\n40,175,75\n", target)
    assert r.mapping.covariate == "age" and r.mapping.columns == ("height",)
    assert "first numeric column" in U.responses_text(r.mapping.columns, upload.profiles)
    two = U.UploadTarget("euclidean", covariate=True, responses=2)
    assert roles("age,height,weight\n20,170,70\n30,180,80\n", two)[1].mapping.columns == (
        "height", "weight")


# --------------------------------------------------------------------------- the covariate
@pytest.mark.parametrize("header, kind, expected", [
    ("t,y1,y2,y3", "sphere", "t"),
    ("y1,y2,y3,time", "sphere", "time"),
    ("Age (years),Systolic BP,Cholesterol", "euclidean", "Age (years)"),
    ("y1,y2,y3,lat,lon,s12", "sphere", None),      # every column is a point column somewhere
    ("city,lat,lng,population", "sphere", "population"),
    ("y2,y3,weight", "euclidean", "weight"),       # y2, y3 look like responses
    ("lx1,ly1,lx2,ly2,lx3,ly3,x", "kendall", "x"),
    ("s00,s01,s11,start", "spd", "start"),
])
def test_the_default_covariate_is_never_a_response_column(header, kind, expected):
    rng = np.random.default_rng(3)
    names = header.split(",")
    body = "".join(",".join(f"{v:.3f}" for v in rng.uniform(1, 2, len(names))) + "\n"
                   for _ in range(6))
    if "city" in names:
        body = "".join(f"C{i}," + ",".join(line.split(",")[1:]) + "\n"
                       for i, line in enumerate(body.splitlines()))
    upload, r = roles(f"{header}\n{body}", U.UploadTarget(kind, covariate=True))
    assert r.mapping.covariate == expected
    assert r.mapping.covariate not in r.mapping.columns
    text = U.covariate_text(r.mapping.covariate, upload.profiles)
    assert ("No column can be the covariate" in text) is (expected is None)


def test_an_identifier_is_never_the_default_covariate_but_is_offered():
    upload, r = roles("id,y1,y2,y3\n1,0,0,1\n2,0,1,0\n3,1,0,0\n",
                      U.UploadTarget("sphere", covariate=True))
    assert r.mapping.covariate is None
    assert U.covariate_options(upload.profiles) == ["id", "y1", "y2", "y3"]


# --------------------------------------------------------------------------- real layouts
def test_world_cities_are_latitude_longitude_with_the_covariate_not_a_coordinate():
    raw = (ROOT / "dpcore/data/presets/world_cities.csv").read_bytes()
    upload, r = roles(raw, U.UploadTarget("sphere", infer_param=False))
    assert r.mapping.layout == "latlon" and r.mapping.columns == ("lat", "lng")
    assert r.mapping.covariate is None
    got = read(upload, U.UploadTarget("sphere"), r.mapping)
    assert got.n == 50 and np.allclose(np.linalg.norm(got.y, axis=1), 1)
    assert "Recognised from the header: latitude and longitude" in U.recognised_text(
        r.manifold, "latlon", r.mapping.columns, upload.profiles)


def test_emg_covariances_with_zero_based_names_are_the_upper_triangle():
    raw = (ROOT / "dpcore/data/presets/emg_covariances_c0_c1_w800.csv").read_bytes()
    upload, r = roles(raw, U.UploadTarget("spd", infer_param=False))
    assert r.mapping.layout == "spd_upper" and r.mapping.columns == ("s00", "s01", "s11")
    got = read(upload, U.UploadTarget("spd"), r.mapping)
    from ui.logic.frechet_mean import emg_points  # the preset, read by dpcore's own loader

    np.testing.assert_allclose(got.y, emg_points(), rtol=1e-12)
    assert U.mapping_legend(SPD(2), r.mapping) == (
        "Point columns: s11 ← 's00', s12 ← 's01', s22 ← 's11'.")
    _, r = roles(raw, U.UploadTarget("spd", covariate=True))
    assert r.mapping.covariate == "start"  # session and gesture are text


def test_a_messy_export_with_blank_rows_and_text_columns():
    text = ("Name;Country;Latitude;Longitude;Notes\n"
            "Oslo;NO;59,91;10,75;capital\n"
            "\n"
            "Bergen;NO;60,39;5,32;\n"
            "Nowhere;NO;;5,1;no latitude\n"
            "Tromsø;NO;69,65;18,96;\"north; cold\"\n")
    upload, r = roles(text, U.UploadTarget("sphere", covariate=False))
    assert r.mapping.columns == ("Latitude", "Longitude")
    got = read(upload, U.UploadTarget("sphere"), r.mapping)
    assert got.rows.tolist() == [2, 4, 6] and got.dropped == 1
    assert got.ignored == ("Name", "Country", "Notes")


# --------------------------------------------------------------------------- messages
def test_a_constant_covariate_and_a_bad_cell_are_named():
    target = U.UploadTarget("euclidean", covariate=True)
    upload, r = roles("t,y1\n1.5,2\n1.5,3\n1.5,4\n", target)
    with pytest.raises(DataValidationError) as err:
        read(upload, target, r.mapping)
    assert "Column 't'" in U.user_message(err.value)
    assert "the covariate is constant" in U.user_message(err.value)
    upload, r = roles("t,y1\n0.5,2\n1.5,abc\n2.5,4\n", target)
    with pytest.raises(DataValidationError) as err:
        read(upload, target, r.mapping)
    assert "Row 3, column 'y1'" in str(err.value) and "'abc'" in str(err.value)


def test_a_column_in_two_roles_is_named_with_its_roles():
    upload = scanned("t,y1,y2,y3\n0.5,0,0,1\n1.5,0,1,0\n")
    mapping = U.PointMapping("coordinates", ("y1", "y2", "y3"), None, "y1")
    with pytest.raises(DataValidationError) as err:
        U.read_mapped(upload, Sphere(2), mapping)
    assert (err.value.row, err.value.column) == (1, "y1")
    assert "chosen for covariate and y1" in str(err.value)


def test_too_few_columns_besides_the_covariate_is_an_error_on_the_header():
    upload, r = roles("t,a,b\n0.5,1,2\n1.5,3,4\n", U.UploadTarget("sphere", covariate=True))
    assert r.mapping.covariate == "t" and None in r.mapping.columns
    level, text = U.incomplete_mapping_text(Sphere(2), "coordinates", r.mapping.columns,
                                            upload.profiles, exclude=("t",))
    assert level == "error" and text.startswith("Header (row 1)")
    assert "besides the covariate 't'" in text


def test_sphere_hint_is_worded_for_the_page():
    upload = scanned("y1,y2,y3\n0,0,2\n0,1,0\n")
    with pytest.raises(DataValidationError) as err:
        U.read_mapped(upload, Sphere(2), U.PointMapping("coordinates", ("y1", "y2", "y3")))
    message = U.user_message(err.value)
    assert "renormalize=True" not in message and "Row 2" in message
    assert "Tick the box" in U.user_message(err.value, "Tick the box.")


def test_layouts_of_every_target():
    assert list(U.layouts_for(U.UploadTarget("sphere"), Sphere(2))) == ["coordinates", "latlon"]
    assert list(U.layouts_for(U.UploadTarget("spd"), SPD(3))) == ["spd_upper", "spd_full"]
    assert list(U.layouts_for(U.UploadTarget("kendall"), KendallShape(4))) == ["landmarks"]
    free = U.layouts_for(U.UploadTarget("euclidean"), Euclidean(2))["coordinates"]
    assert free.free
    target = U.UploadTarget("euclidean")
    assert U.manifold_of(target, "coordinates", 4).dim == 4
    assert U.mapping_param(U.UploadTarget("spd"), "spd_full", 9) == 3
    assert U.mapping_param(U.UploadTarget("spd"), "spd_upper", 3) == 2
    assert U.mapping_param(U.UploadTarget("kendall"), "landmarks", 16) == 8


def test_points_off_the_sphere_are_projected_on_request():
    upload = scanned("t,y1,y2,y3\n0.5,0,0,2\n1.5,0,3,0\n")
    mapping = U.PointMapping("coordinates", ("y1", "y2", "y3"), None, "t")
    got = U.read_mapped(upload, Sphere(2), mapping, renormalize=True)
    np.testing.assert_allclose(got.y, [[0, 0, 1], [0, 1, 0]])
    np.testing.assert_allclose(got.x, [0.5, 1.5])
