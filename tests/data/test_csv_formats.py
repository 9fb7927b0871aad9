"""The registry of CSV file layouts (dpcore.data._csv_formats): one place that knows how the
files of each kind of manifold write a point."""

from dpcore.data._csv_formats import FORMATS, PointFormat, file_format, spd_full_columns
from dpcore.manifolds import SPD, Euclidean, KendallShape, Sphere


def test_each_manifold_class_has_its_format_and_subclasses_share_it():
    class Globe(Sphere):
        pass

    assert file_format(Globe(2)) is FORMATS[Sphere]
    assert file_format(Euclidean(3)).layouts(Euclidean(3)) == {"coordinates": ("y1", "y2", "y3")}
    assert type(file_format(Euclidean(3))) is PointFormat


def test_layouts_a_mapping_may_name():
    assert file_format(Sphere(2)).layouts(Sphere(2)) == {
        "coordinates": ("y1", "y2", "y3"), "latlon": ("lat", "lon")}
    assert list(file_format(Sphere(3)).layouts(Sphere(3))) == ["coordinates"]
    spd = SPD(2)
    assert file_format(spd).layouts(spd) == {
        "spd_upper": tuple(spd.csv_columns()), "spd_full": ("s11", "s12", "s21", "s22")}
    assert list(file_format(SPD(1)).layouts(SPD(1))) == ["coordinates"]
    assert list(file_format(KendallShape(4)).layouts(KendallShape(4))) == ["landmarks"]
    assert spd_full_columns(10)[:2] == ["s1_1", "s1_2"]


def test_detection_from_the_header():
    s2 = Sphere(2)
    assert file_format(s2).detect(s2, ["city", "Latitude", "Longitude"],
                                  {"city", "latitude", "longitude"}) == (
        "latlon", ("Latitude", "Longitude"), True)
    # the own columns win over a latitude column
    assert file_format(s2).detect(s2, ["y1", "y2", "y3", "lat"],
                                  {"y1", "y2", "y3", "lat"})[0] == "coordinates"
    spd = SPD(2)
    full = {"s11", "s12", "s21", "s22"}
    assert file_format(spd).detect(spd, sorted(full), full)[0] == "spd_full"
    assert file_format(spd).detect(spd, ["s11", "s12", "s22"], {"s11", "s12", "s22"})[0] == \
        "spd_upper"
    assert "full matrix" in file_format(spd).alternatives(spd)
    assert file_format(KendallShape(3)).alternatives(KendallShape(3)) == ""
