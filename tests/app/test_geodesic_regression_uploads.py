"""Real-data layouts uploaded to the Geodesic regression page (issue "The first hour"): files of
places with latitude and longitude (with and without a covariate column, as exported by a
spreadsheet in several locales) and Kendall landmarks with more landmarks than the page's
default. Each is read without an exception and with the right roles by default: a response
column (lat/lng, y1..y3, landmarks) is never the default covariate, a file without a covariate
says which column to add, and the number of landmarks comes from the header.

Also the page's upload path itself: streamlit 1.67's AppTest supports ``st.file_uploader``
(``FileUploader.set_value`` with ``(name, bytes, mime)``), so the upload path (the shared widget,
:mod:`ui.upload`) is tested end to end; :func:`ui.logic.regression_data.parse_upload`, the same
reading without the widget, takes the raw bytes and is also tested directly."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from dpcore.data import DataValidationError, make_regression_data, to_csv
from dpcore.manifolds import Sphere
from ui.logic import regression_data as D

from .pages import gr_quick_sampler, gr_release, open_app_page

ROOT = Path(__file__).resolve().parents[2]
RATS = ROOT / "assets" / "data" / "rat_skulls.csv"
TIMEOUT = 120
LEDGER = "privacy_ledger"

CITIES = [("Paris", 48.8566, 2.3522, 2148000), ("Berlin", 52.52, 13.405, 3645000),
          ("Madrid", 40.4168, -3.7038, 3223000), ("Rome", 41.9028, 12.4964, 2873000),
          ("Vienna", 48.2082, 16.3738, 1897000), ("Warsaw", 52.2297, 21.0122, 1794000)]


def _comma(v):
    return f"{v}".replace(".", ",")


def cities_plain():
    """A cities file: a name, a latitude and a longitude; no covariate."""
    return ("city,lat,lng\n" + "".join(f"{c},{la},{lo}\n" for c, la, lo, _ in CITIES)).encode()


def cities_population():
    """The cities with a numeric covariate column (population)."""
    return ("city,lat,lng,population\n"
            + "".join(f"{c},{la},{lo},{p}\n" for c, la, lo, p in CITIES)).encode()


def messy_export():
    """A spreadsheet export: a BOM, CRLF line ends, an identifier, 'Latitude'/'Longitude' and a
    year column."""
    lines = ["ID,City Name,Latitude,Longitude,Year"] + [
        f"{i + 1},{c},{la},{lo},{2000 + 3 * i}" for i, (c, la, lo, _) in enumerate(CITIES)]
    return ("\ufeff" + "\r\n".join(lines) + "\r\n").encode("utf-8")


def semicolons():
    """Three columns separated by semicolons, decimal commas: no covariate."""
    return ("city;lat;lng\n" + "".join(f"{c};{_comma(la)};{_comma(lo)}\n"
                                       for c, la, lo, _ in CITIES)).encode()


def quoted_decimal_commas():
    """Comma-separated, every cell quoted, decimal commas (a European spreadsheet export)."""
    return ('"x","lat","lng"\n' + "".join(
        f'"{_comma(i + 0.5)}","{_comma(la)}","{_comma(lo)}"\n'
        for i, (_, la, lo, _) in enumerate(CITIES))).encode()


def rat_landmarks():
    """The rat skulls (8 landmarks lx1..ly8) with the covariate named 'age'."""
    text = RATS.read_text(encoding="utf-8")
    header, rest = text.split("\n", 1)
    assert header.split(",")[0] == "x"
    return ("age" + header[1:] + "\n" + rest).encode()


def covariate_box(at):
    """The shared upload widget's covariate selectbox (key ``gr_map_cov_<scope>``)."""
    (box,) = [s for s in at.selectbox if s.key and s.key.startswith("gr_map_cov_")]
    return box


def person_box(at):
    """The shared upload widget's person selectbox (key ``gr_map_person_<scope>``)."""
    (box,) = [s for s in at.selectbox if s.key and s.key.startswith("gr_map_person_")]
    return box


def caption_text(at):
    return " ".join(c.value for c in at.caption)


def upload(kind, content, name="data.csv"):
    at = open_app_page("geodesic_regression.py", timeout=TIMEOUT)
    if kind != "sphere":
        at.radio(key="gr_manifold").set_value(kind).run()
    at.radio(key="gr_source").set_value("upload").run()
    at.file_uploader(key="gr_upload").set_value((name, content, "text/csv")).run()
    assert not at.exception, [e.message for e in at.exception]
    return at


@pytest.mark.parametrize("make,n,covariate,lat,lon", [
    (cities_population, 6, "population", "lat", "lng"),
    (messy_export, 6, "Year", "Latitude", "Longitude"),
    (quoted_decimal_commas, 6, "x", "lat", "lng"),
], ids=["cities-population", "messy-export", "quoted-decimal-commas"])
def test_places_with_a_covariate_are_read_with_the_right_roles(make, n, covariate, lat, lon):
    at = upload("sphere", make())
    assert not at.error, [e.value for e in at.error]
    box = covariate_box(at)
    assert box.value == covariate
    assert lat not in box.options and lon not in box.options  # responses: never the covariate
    text = caption_text(at)
    assert f"Uploaded CSV: n = {n} rows, covariate '{covariate}'" in text
    assert f"from the columns {lat} (latitude) and {lon} (longitude)" in text
    assert not at.button(key="gr_release_button").disabled


@pytest.mark.parametrize("make", [cities_plain, semicolons], ids=["cities", "semicolons"])
def test_places_without_a_covariate_say_which_column_to_add(make):
    at = upload("sphere", make())
    errors = [e.value for e in at.error]
    assert len(errors) == 1, errors
    assert "no covariate column" in errors[0] and "lat, lng" in errors[0]
    assert "add a numeric column" in errors[0].lower() and "'x'" in errors[0]
    assert "Traceback" not in errors[0] and "chosen for both" not in errors[0]
    assert not any(s.key and s.key.startswith("gr_map_cov_") for s in at.selectbox)  # none
    assert at.button(key="gr_release_button").disabled


def test_response_column_chosen_as_the_covariate_is_a_message_not_an_exception():
    """The person column offered next to the covariate is never a response either; a conflict
    that still reaches the reader (a stale choice) is a message naming the column."""
    at = upload("sphere", cities_population())
    person = person_box(at)
    assert "lat" not in person.options and "lng" not in person.options
    with pytest.raises(DataValidationError, match="'lat'.*the covariate"):
        D.parse_upload(cities_population(), "sphere", None, covariate="lat")


@pytest.mark.skipif(not RATS.exists(), reason="no rat skulls CSV in assets/data")
def test_kendall_landmarks_are_counted_from_the_header():
    at = upload("kendall", rat_landmarks(), "rats.csv")
    assert not at.error, [e.value for e in at.error]
    assert at.number_input(key="gr_param_kendall").value == 8
    infos = " ".join(i.value for i in at.info) + caption_text(at)
    assert "8 landmarks" in infos and "lx1..ly8" in infos
    assert covariate_box(at).value == "age"
    text = caption_text(at)
    assert "Uploaded CSV: n = 144 rows, covariate 'age'" in text
    assert "Columns not used" not in text
    # The user may still choose fewer landmarks: the page then says what is left out.
    at.number_input(key="gr_param_kendall").set_value(4).run()
    assert not at.exception
    assert at.number_input(key="gr_param_kendall").value == 4
    assert any("lx5" in w.value and "8" in w.value for w in at.warning), [
        w.value for w in at.warning]


def test_a_new_file_gets_its_own_default_covariate():
    """The covariate chosen for one file does not stick to the next one."""
    at = upload("sphere", cities_population())
    assert covariate_box(at).value == "population"
    at.file_uploader(key="gr_upload").set_value(("m.csv", messy_export(), "text/csv")).run()
    assert not at.exception and not at.error
    assert covariate_box(at).value == "Year"
    assert np.isfinite(float(at.metric[0].value))


# --------------------------------------------------------------------------- the page's upload path
def open_page():
    return open_app_page("geodesic_regression.py", timeout=TIMEOUT)


quick_sampler = gr_quick_sampler


release = gr_release


def sphere_csv(n=30, seed=4):
    data = make_regression_data(Sphere(2), n, rng=seed)
    return to_csv(Sphere(2), data.y, data.x).encode()


def test_uploaded_csv_is_used_and_not_offered_for_download():
    at = open_page()
    at.radio(key="gr_source").set_value("upload").run()
    at.file_uploader(key="gr_upload").set_value(("mine.csv", sphere_csv(), "text/csv")).run()
    assert not at.exception and not at.error
    assert any("Uploaded CSV: n = 30" in c.value for c in at.caption)
    release(quick_sampler(at))
    assert len(at.session_state[LEDGER]) == 1
    keys = [b.key for b in at.get("download_button")]
    assert "gr_download_release" in keys and "gr_download_data" not in keys
    # Settings go to the URL, the data never do.
    assert "mine.csv" not in str(at.query_params)


@pytest.mark.parametrize("content", [
    b"x,y1,y2\n0.1,1,0\n0.2,0,1\n",  # missing column y3
    b"x,y1,y2,y3\n0.1,1,0,0\n0.2,abc,1,0\n",  # not a number
    b"\x00\x01binary",  # not text at all
])
def test_bad_csv_shows_an_error(content):
    at = open_page()
    at.radio(key="gr_source").set_value("upload").run()
    at.file_uploader(key="gr_upload").set_value(("bad.csv", content, "text/csv")).run()
    assert not at.exception
    assert len(at.error) == 1
    assert "cannot be used" in at.error[0].value
    assert at.button(key="gr_release_button").disabled


def test_sphere_upload_can_be_renormalized():
    off = b"x,y1,y2,y3\n0.1,2,0,0\n0.5,0,1.5,0\n0.9,0,0,3\n"
    at = open_page()
    at.radio(key="gr_source").set_value("upload").run()
    at.file_uploader(key="gr_upload").set_value(("off.csv", off, "text/csv")).run()
    assert len(at.error) == 1 and "not on the unit sphere" in at.error[0].value
    at.checkbox(key="gr_renormalize").check().run()
    assert not at.exception and not at.error
    assert any("Uploaded CSV: n = 3" in c.value for c in at.caption)


def test_parse_upload_takes_bytes():
    ds = D.parse_upload(sphere_csv(n=12), "sphere", None)
    assert ds.source == "upload" and not ds.generated
    assert ds.x.shape == (12,) and ds.y.shape == (12, 3)
    np.testing.assert_allclose(np.linalg.norm(ds.y, axis=1), 1.0)
    with pytest.raises(DataValidationError, match="(?i)row 3"):
        D.parse_upload(b"x,y1,y2,y3\n0.1,1,0,0\n0.2,2,0,0\n", "sphere", None)


def test_upload_column_mapping_and_person_column():
    """Issue 14 point 3-4 on this page: a file with an identifier, a covariate named 'age' and
    a person column is read after mapping; the person column sets the rows per person here."""
    rng = np.random.default_rng(0)
    data = make_regression_data(Sphere(2), 24, rng=1)
    lines = ["id,age,y1,y2,y3,person"] + [
        f"{i + 1},{x:.6f},{y[0]:.9f},{y[1]:.9f},{y[2]:.9f},p{i // 4}"
        for i, (x, y) in enumerate(zip(data.x, data.y, strict=True))]
    rng.shuffle(lines[1:])
    at = open_page()
    at.radio(key="gr_source").set_value("upload").run()
    at.file_uploader(key="gr_upload").set_value(
        ("people.csv", "\n".join(lines).encode(), "text/csv")).run()
    assert not at.exception and not at.error
    assert covariate_box(at).value == "age"
    assert "id" not in covariate_box(at).options
    caption = " ".join(c.value for c in at.caption)
    assert "n = 24 rows, covariate 'age'" in caption
    assert "Columns ignored: 'id' (looks like an identifier), 'person'" in caption
    person_box(at).set_value("person").run()
    assert not at.exception and not at.error
    assert any("counts 4 rows per person" in c.value for c in at.sidebar.caption) or any(
        "counts 4 rows per person" in m.value for m in at.sidebar.markdown)
