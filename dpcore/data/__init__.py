"""Data for the estimators: synthetic generators (paper protocols) and CSV input/output.

* :func:`make_regression_data`, :func:`make_mean_data` -- seeded synthetic data sets following
  the simulation protocols of papers 001 and 002.
* :func:`load_csv`, :func:`to_csv`, :func:`expected_columns` -- the CSV format of the dashboard,
  with validation that names the row and column of every problem
  (:class:`DataValidationError`).
"""

from .csvio import (
    DataValidationError,
    Problem,
    expected_columns,
    load_csv,
    neutralize_cell,
    to_csv,
)
from .synthetic import (
    DEFAULT_NOISE,
    RegressionData,
    default_center,
    kendall_template,
    make_mean_data,
    make_regression_data,
)

__all__ = [
    "DEFAULT_NOISE",
    "DataValidationError",
    "Problem",
    "RegressionData",
    "default_center",
    "expected_columns",
    "kendall_template",
    "load_csv",
    "make_mean_data",
    "make_regression_data",
    "neutralize_cell",
    "to_csv",
]
