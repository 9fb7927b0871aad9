"""Data for the estimators: synthetic generators (paper protocols) and CSV input/output.

* :func:`make_regression_data`, :func:`make_mean_data` -- seeded synthetic data sets following
  the simulation protocols of papers 001 and 002.
* :func:`read_table` -- any numeric CSV table (header row, decimal commas, encodings, blank
  cells reported or dropped) as a header and a float array (:class:`Table`);
  :func:`scan_table` and :meth:`TextTable.to_numbers` are its two halves.
* :func:`load_csv`, :func:`to_csv`, :func:`expected_columns` -- the manifold CSV formats of the
  dashboard, read with the same reader; :func:`read_manifold_csv` also says which layout a file
  had (:class:`ManifoldData`: SPD upper triangle or full, raw landmarks or preshapes, latitude
  and longitude), can drop rows with empty cells, with a count, and reads columns named as in
  the user's file through a column mapping (``columns=``, and a ``group=`` column);
  :func:`response_columns` names the columns it would read as the points of a file.
* :func:`load_latlon_csv`, :func:`latlon_to_sphere`, :func:`sphere_to_latlon` -- places given
  by latitude and longitude in degrees as points of S².

Every problem in a file is reported in one :class:`DataValidationError` (defined in
:mod:`dpcore.exceptions`) naming its row and column.
"""

from ..exceptions import DataValidationError, Problem
from .csvio import (
    LAYOUTS,
    ManifoldData,
    expected_columns,
    load_csv,
    neutralize_cell,
    read_manifold_csv,
    response_columns,
    to_csv,
)
from .geographic import (
    EARTH_RADIUS_KM,
    latlon_columns,
    latlon_to_sphere,
    load_latlon_csv,
    sphere_to_latlon,
)
from .synthetic import (
    DEFAULT_NOISE,
    RegressionData,
    default_center,
    kendall_template,
    make_mean_data,
    make_regression_data,
)
from .tables import Table, TextTable, read_table, scan_table

__all__ = [
    "DEFAULT_NOISE",
    "EARTH_RADIUS_KM",
    "LAYOUTS",
    "ManifoldData",
    "read_manifold_csv",
    "latlon_columns",
    "latlon_to_sphere",
    "load_latlon_csv",
    "sphere_to_latlon",
    "DataValidationError",
    "Problem",
    "RegressionData",
    "Table",
    "TextTable",
    "default_center",
    "expected_columns",
    "kendall_template",
    "load_csv",
    "make_mean_data",
    "make_regression_data",
    "neutralize_cell",
    "read_table",
    "response_columns",
    "scan_table",
    "to_csv",
]
