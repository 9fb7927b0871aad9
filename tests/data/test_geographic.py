"""Latitude/longitude CSVs as points of S² (dpcore.data.geographic)."""

import numpy as np
import pytest

from dpcore.data import (
    DataValidationError,
    latlon_columns,
    latlon_to_sphere,
    load_latlon_csv,
    sphere_to_latlon,
)
from dpcore.manifolds import Sphere


def test_known_places_and_round_trip():
    np.testing.assert_allclose(latlon_to_sphere(0, 0), [1, 0, 0], atol=1e-15)
    np.testing.assert_allclose(latlon_to_sphere(90, 123), [0, 0, 1], atol=1e-15)
    np.testing.assert_allclose(latlon_to_sphere(0, 90), [0, 1, 0], atol=1e-15)
    rng = np.random.default_rng(0)
    lat, lon = rng.uniform(-89, 89, 500), rng.uniform(-179, 180, 500)
    back = sphere_to_latlon(latlon_to_sphere(lat, lon))
    np.testing.assert_allclose(back[0], lat, atol=1e-10)
    np.testing.assert_allclose(back[1], lon, atol=1e-10)


def test_great_circle_distance_matches_the_haversine_formula():
    """Paris-Tokyo: the geodesic distance on S² times 6371 km against the haversine formula
    (an independent closed form)."""
    a, b = (48.8566, 2.3522), (35.6850, 139.7514)
    d = Sphere(2).dist(latlon_to_sphere(*a), latlon_to_sphere(*b))
    p1, p2 = np.radians(a[0]), np.radians(b[0])
    dl = np.radians(b[1] - a[1])
    h = np.sin((p2 - p1) / 2) ** 2 + np.cos(p1) * np.cos(p2) * np.sin(dl / 2) ** 2
    assert d == pytest.approx(2 * np.arcsin(np.sqrt(h)), rel=1e-12)
    assert 6371.0 * d == pytest.approx(9712, abs=5)  # km


def test_cities_file_reads_with_text_columns_ignored():
    csv = (b'"city","lat","lng","population"\n"Tokyo","35.6850","139.7514","35676000"\n'
           b'"Lima","-12.0480","-77.0501","8180000"\n')
    pts, dropped = load_latlon_csv(csv)
    assert pts.shape == (2, 3) and dropped == 0
    assert np.all(Sphere(2).belongs(pts, atol=1e-12))


def test_geomstats_cities_read_as_points_on_the_sphere():
    from pathlib import Path

    import geomstats.datasets

    path = Path(geomstats.datasets.__file__).parent / "data" / "cities" / "cities.csv"
    pts, _ = load_latlon_csv(path.read_bytes())
    assert pts.shape == (50, 3) and np.all(Sphere(2).belongs(pts, atol=1e-12))


@pytest.mark.parametrize("content,fragments", [
    (b"lat,lon\n10,20\n95,0\n", ["Row 3", "'lat'", "95"]),
    (b"Latitude,Longitude\n10,400\n", ["Row 2", "'Longitude'", "400"]),
    (b"x,y\n1,2\n", ["latitude column"]),
    (b"lat,lon\n10,\n", ["Row 2", "'lon'"]),
])
def test_bad_files_name_row_and_column(content, fragments):
    with pytest.raises(DataValidationError) as info:
        load_latlon_csv(content)
    for f in fragments:
        assert f in str(info.value)


def test_blank_rows_can_be_dropped_with_a_count():
    pts, dropped = load_latlon_csv(b"city,lat,lon\nA,10,20\nB,,\nC,-5,3\n", blank="drop")
    assert pts.shape == (2, 3) and dropped == 1
    assert latlon_columns(("City", "LAT", "lng")) == ("LAT", "lng")
    assert latlon_columns(("lat", "latitude", "lon")) is None
