r"""Latitude and longitude in degrees as points of the unit sphere S² (issue 14: real files).

A place at latitude :math:`\phi` and longitude :math:`\lambda` is the point
:math:`(\cos\phi\cos\lambda, \cos\phi\sin\lambda, \sin\phi)`: the north pole is
:math:`(0, 0, 1)` (the sphere's origin in ``dpcore``), the point (0°, 0°) is :math:`(1, 0, 0)`.
Geodesic distances are then angles: multiply by the Earth's mean radius, 6371.0 km, for
kilometres (:data:`EARTH_RADIUS_KM`).
"""

from __future__ import annotations

import re

import numpy as np

from ..exceptions import DataValidationError
from .tables import _Collector, scan_table

__all__ = ["EARTH_RADIUS_KM", "LATITUDE_RANGE", "LONGITUDE_RANGE", "latlon_columns",
           "latlon_range_problems", "latlon_to_sphere", "load_latlon_csv",
           "sphere_to_latlon"]

#: Mean radius of the Earth (IUGG), to read geodesic distances on S² in kilometres.
EARTH_RADIUS_KM = 6371.0
#: Accepted degrees: latitudes from pole to pole; longitudes east or west of Greenwich
#: (-180..180) or counted eastwards (0..360), both common in real files.
LATITUDE_RANGE = (-90.0, 90.0)
LONGITUDE_RANGE = (-180.0, 360.0)
_LAT = re.compile(r"^(lat|latitude)$", re.IGNORECASE)
_LON = re.compile(r"^(lon|lng|long|longitude)$", re.IGNORECASE)


def latlon_to_sphere(lat, lon):
    """Points of S² from latitudes and longitudes in degrees.

    Parameters
    ----------
    lat, lon : array, shape ``(...)``

    Returns
    -------
    ndarray, shape ``(..., 3)``
    """
    phi = np.radians(np.asarray(lat, dtype=float))
    lam = np.radians(np.asarray(lon, dtype=float))
    return np.stack([np.cos(phi) * np.cos(lam), np.cos(phi) * np.sin(lam), np.sin(phi)],
                    axis=-1)


def sphere_to_latlon(points):
    """Latitudes and longitudes in degrees (longitude in (-180, 180]) of points of S².

    Parameters
    ----------
    points : array, shape ``(..., 3)``

    Returns
    -------
    lat, lon : ndarray, shape ``(...)``
    """
    p = np.asarray(points, dtype=float)
    # atan2 rather than arcsin(z): arcsin loses half the digits near the poles.
    lat = np.degrees(np.arctan2(p[..., 2], np.hypot(p[..., 0], p[..., 1])))
    lon = np.degrees(np.arctan2(p[..., 1], p[..., 0]))
    return lat, lon


def latlon_range_problems(lat, lon, rows, names, problems):
    """Report latitudes outside [-90, 90] and longitudes outside [-180, 360] degrees
    (:data:`LATITUDE_RANGE`, :data:`LONGITUDE_RANGE`), by row and column.

    Parameters
    ----------
    lat, lon : ndarray, shape (n,)
    rows : ndarray of int, shape (n,)
        Spreadsheet row numbers.
    names : pair of str
        The latitude and longitude column names, as written in the header.
    problems : collector with ``add_rows(mask, rows, column, message)``
    """
    for values, name, kind, (low, high) in ((lat, names[0], "latitude", LATITUDE_RANGE),
                                            (lon, names[1], "longitude", LONGITUDE_RANGE)):
        problems.add_rows((values < low) | (values > high), rows, name, _range_message(
            np.asarray(values, dtype=float), kind, low, high))


def _range_message(values, kind, low, high):
    return lambda i: f"{values[i]:g} is not in [{low:g}, {high:g}] degrees, the range of a {kind}."


def latlon_columns(header):
    """The (latitude, longitude) column names of a header (``lat``/``latitude`` and
    ``lon``/``lng``/``long``/``longitude``, any case), or None if it has not exactly one of
    each."""
    lat = [h for h in header if _LAT.match(h.strip())]
    lon = [h for h in header if _LON.match(h.strip())]
    return (lat[0], lon[0]) if len(lat) == 1 and len(lon) == 1 else None


def load_latlon_csv(source, *, blank="error", max_rows=None, max_bytes=None):
    """Points of S² from a CSV with a latitude and a longitude column in degrees; the other
    columns (names, countries, populations) are ignored.

    Parameters
    ----------
    source : path, bytes or file-like object
        As for :func:`dpcore.data.read_table` (nothing is written to disk or logged).
    blank : {"error", "drop"}
        Rows with an empty latitude or longitude are reported, or left out and counted.
    max_rows, max_bytes : int, optional
        As for :func:`dpcore.data.read_table`.

    Returns
    -------
    points : ndarray, shape ``(n, 3)``
    dropped : int
        Rows left out for a blank cell (``blank="drop"``).

    Raises
    ------
    DataValidationError
        No latitude/longitude pair in the header, a cell that is not a number, a latitude
        outside [-90, 90] or a longitude outside [-180, 360], fewer than one row; every
        message names the row (header = row 1) and the column.
    """
    head = scan_table(source, max_rows=max_rows, max_bytes=max_bytes)
    names = latlon_columns(head.columns)
    if names is None:
        raise DataValidationError(
            "the header needs one latitude column (lat or latitude) and one longitude column "
            f"(lon, lng, long or longitude), in degrees; it has {', '.join(head.columns)}.")
    table = head.to_numbers(list(names), blank=blank)
    lat, lon = table.values[:, 0], table.values[:, 1]
    problems = _Collector({name: j for j, name in enumerate(names)})
    latlon_range_problems(lat, lon, table.rows, names, problems)
    problems.raise_if_any()
    if table.values.shape[0] == 0:
        raise DataValidationError("the file has no data rows.")
    return latlon_to_sphere(lat, lon), int(table.dropped)
