"""AppTest tests of the column mapping of uploads on the "Fréchet mean" page (issue 14, points
3 and 4): a preview, the recognised layout and the point's columns (identifiers never chosen by
default, other columns ignored and listed), latitude/longitude on S², a person column that sets
this page's rows per person (recorded in the ledger entry), and bad cells named by row and
column. The reading itself is tested in tests/ui/logic/test_frechet_mean_upload.py."""

import numpy as np

from dpcore.data import make_mean_data, to_csv
from dpcore.manifolds import Sphere

from .pages import click_release, fm_open_studies, open_app_page

TIMEOUT = 180
LEDGER = "privacy_ledger"


def open_page():
    """The page with a small simulation (the interaction stays quick)."""
    at = fm_open_studies(open_app_page("frechet_mean.py", timeout=TIMEOUT))
    at.multiselect(key="fm_ns").set_value([10, 20])
    at.slider(key="fm_reps").set_value(5)
    at.slider(key="fm_draws").set_value(20)
    return at.run()


def upload(at, text, name="mine.csv"):
    at.radio(key="fm_source").set_value("upload").run()
    at.file_uploader(key="fm_upload").set_value((name, text.encode(), "text/csv")).run()
    assert not at.exception, at.exception
    return at


def selectbox(at, label):
    (box,) = [s for s in at.selectbox if s.label == label]
    return box


def captions(at):
    return [c.value for c in at.main.caption]


def metric(at, label):
    return next(m.value for m in at.metric if m.label == label)


def people_file(n=30, seed=5):
    """Points near the north pole with an id, a name, a person (largest group: 4 rows) and a
    date column; returns the text and the points."""
    y = make_mean_data(Sphere(2), n, radius=0.3, rng=seed)
    header, *rows = to_csv(Sphere(2), y).strip().splitlines()
    person = [f"p{i // 4}" if i < 20 else f"q{i}" for i in range(n)]
    lines = [f"id,name,{header},person,date"] + [
        f"{i + 1},Person {person[i]},{row},{person[i]},2024-05-{i % 28 + 1:02d}"
        for i, row in enumerate(rows)]
    return "\n".join(lines) + "\n", y


def test_file_with_id_name_person_columns_gives_a_private_release():
    text, _ = people_file()
    at = upload(open_page(), text)
    assert not at.error, [e.value for e in at.error]
    # the preview: the first rows as written and the column profiles
    assert any(e.label.startswith("Preview: first 5 of 30 rows") for e in at.expander)
    assert len(at.dataframe) >= 2
    assert [selectbox(at, s).value for s in ("y1", "y2", "y3")] == ["y1", "y2", "y3"]
    assert "id" not in [selectbox(at, "y1").value, selectbox(at, "y2").value]
    assert any("Recognised from the header: coordinates y1, y2, y3" in c for c in captions(at))
    assert any(c.startswith("Columns ignored: 'id' (looks like an identifier)")
               and "'person'" in c and "'date'" in c for c in captions(at)), captions(at)
    assert any("Read 30 points from the columns y1..y3." in c for c in captions(at))
    assert metric(at, "Sample size n") == "30"
    click_release(at, "fm_release")
    entry = at.session_state[LEDGER][-1]
    assert entry["guarantee"] == "private" and entry["label"] == "private"
    assert entry["rows"] == 1


def test_latitude_longitude_columns_on_the_sphere():
    """A file of places (latitude and longitude in degrees, a name, a population) is read as
    points of S² about its public centre (the north pole here); a release is private."""
    rng = np.random.default_rng(7)
    lat = rng.uniform(75, 89, 25)
    lon = rng.uniform(-180, 180, 25)
    text = "station,Latitude,Longitude,population\n" + "".join(
        f"S{i},{a:.5f},{b:.5f},{int(1000 * a)}\n"
        for i, (a, b) in enumerate(zip(lat, lon, strict=True)))
    at = upload(open_page(), text)
    assert not at.error, [e.value for e in at.error]
    assert at.radio(key=next(r.key for r in at.radio if r.label == "Each point is written as"))\
        .value == "latlon"
    assert [selectbox(at, "latitude (°)").value, selectbox(at, "longitude (°)").value] == [
        "Latitude", "Longitude"]
    assert any("Read 25 places from the columns Latitude (latitude) and Longitude (longitude)"
               in c for c in captions(at))
    assert any("Columns ignored: 'station'" in c and "'population'" in c for c in captions(at))
    # every place lies within 15° (0.26 rad) of the pole: inside the default ball
    assert any("all 25 rows lie within the public ball" in c for c in captions(at))
    click_release(at, "fm_release")
    assert at.session_state[LEDGER][-1]["guarantee"] == "private"


def test_person_column_sets_this_pages_rows_per_person_and_the_ledger_records_it():
    text, _ = people_file()
    at = upload(open_page(), text)
    assert not at.number_input(key="rows_per_person").disabled
    selectbox(at, "Person (group) column (optional)").set_value("person").run()
    assert not at.exception and not at.error
    field = at.number_input(key="rows_per_person")
    assert field.disabled and field.value == 1  # the sidebar's own value is kept
    assert any("This page counts 4 rows per person" in c.value for c in at.sidebar.caption)
    assert any("**Rows per person: 4**, the largest group of column 'person'" in i.value
               for i in at.info)
    # stated where ε is chosen, in the cost and in the assumptions, before any release
    assert any(c.startswith("ε = 4 for one person (4 rows)") for c in captions(at))
    assert any("Cost of this release: ε = 4 per person (4 rows each)" in md.value
               for md in at.markdown)
    assert any("**Unit of privacy:** one person, with up to 4 rows (the largest group of "
               "the person column 'person', confirmed public)" in md.value for md in at.markdown)
    # the largest group size comes from the data: released only once confirmed public
    assert at.button(key="fm_release").disabled
    (confirm,) = [c for c in at.checkbox if c.label.startswith("I confirm")]
    confirm.check().run()
    assert not at.button(key="fm_release").disabled
    click_release(at, "fm_release")
    entry = at.session_state[LEDGER][-1]
    assert entry["rows"] == 4 and entry["guarantee"] == "private"
    assert any(c.startswith("Per person (4 rows each, group privacy): ε = 4") for c in
               captions(at))
    # this page only: another page keeps the sidebar's value, unlocked
    at.switch_page("pages/sensitivity.py").run()
    assert not at.exception, at.exception
    assert not at.number_input(key="rows_per_person").disabled
    assert not any("This page counts" in c.value for c in at.sidebar.caption)


def test_columns_the_header_does_not_name_are_chosen_by_the_user():
    """A numeric subject column beside three unnamed columns: nothing is guessed; once the
    user picks the three, the points are read."""
    y = make_mean_data(Sphere(2), 12, radius=0.3, rng=8)
    text = "subject,m1,m2,m3\n" + "".join(
        f"{i // 3},{a!r},{b!r},{c!r}\n" for i, (a, b, c) in enumerate(y.tolist()))
    at = upload(open_page(), text)
    assert not at.error
    assert any("Choose the column of y1, y2, y3" in i.value for i in at.info)
    assert "fm_release" not in [b.key for b in at.button]
    for slot, column in (("y1", "m1"), ("y2", "m2"), ("y3", "m3")):
        selectbox(at, slot).set_value(column).run()
    assert not at.exception and not at.error
    assert metric(at, "Sample size n") == "12"
    assert any("Point columns: y1 ← 'm1', y2 ← 'm2', y3 ← 'm3'." in c for c in captions(at))


def test_a_bad_cell_is_named_by_row_and_column():
    y = make_mean_data(Sphere(2), 6, radius=0.3, rng=9)
    rows = [f"{i + 1},{a!r},{b!r},{c!r}" for i, (a, b, c) in enumerate(y.tolist())]
    rows[2] = "3,0.1,0.2,n/a"  # row 4 of the file
    at = upload(open_page(), "row_id,px,py,pz\n" + "\n".join(rows) + "\n")
    assert not at.exception
    (error,) = [e.value for e in at.error]
    assert "Row 4, column 'pz'" in error and "'n/a'" in error
    assert "Point columns: y1 ← 'px', y2 ← 'py', y3 ← 'pz'." in error
    assert "fm_release" not in [b.key for b in at.button]
    assert not (at.session_state[LEDGER] if LEDGER in at.session_state else [])
