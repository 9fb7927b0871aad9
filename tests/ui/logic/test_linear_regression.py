"""Page logic of the linear regression page (ui.logic.linear_regression)."""

import numpy as np
import pytest

from dpcore import visualization as V
from dpcore.data import DataValidationError
from ui import caps
from ui.caps import CAPS
from ui.logic import linear_regression as L

GOOD_CSV = (
    "id;temperature;yield;quality;note\n"
    "1;10.5;3,2;7;ok\n"  # semicolon-separated, decimal comma in 'yield'
)


def test_parser_reads_semicolons_and_decimal_commas():
    """Regression: the page's own pandas parser read '3,2' in a ';' file as text, so 'yield'
    was silently not offered; the library reader reads it as 3.2."""
    table = L.parse_numeric_csv(GOOD_CSV.encode("utf-8-sig"))
    assert table.numeric_columns == ("id", "temperature", "yield", "quality")
    assert table.text_columns == ("note",)
    np.testing.assert_allclose(L.select_numeric(table, ["temperature", "yield", "quality"]),
                               [[10.5, 3.2, 7]])


def test_parser_keeps_text_columns_out_of_the_numeric_ones():
    data = b"name,id,dose,response\nann,p1,1.5,2\nbob,p2,2.5,3\n"
    table = L.parse_numeric_csv(data)
    assert table.numeric_columns == ("dose", "response")
    assert table.text_columns == ("name", "id")
    with pytest.raises(DataValidationError, match=r"Row 2, column 'name': value 'ann'"):
        L.select_numeric(table, ["name", "dose"])


def test_parser_keeps_spreadsheet_row_numbers_across_blank_lines():
    table = L.parse_numeric_csv(b"x,y\n1,2\n\n3,oops\n")
    with pytest.raises(DataValidationError, match=r"Row 4, column 'y'") as info:
        L.select_numeric(table, ["x", "y"])
    assert (info.value.row, info.value.column) == (4, "y")


def test_parser_limits(monkeypatch):
    with pytest.raises(DataValidationError, match="more than 2 data rows"):
        L.parse_numeric_csv(b"x,y\n1,2\n3,4\n5,6\n", max_rows=2)
    # One size cap for every page: the dashboard's upload limit (Streamlit's
    # server.maxUploadSize, read by ui.caps), passed to the library as max_bytes.
    monkeypatch.setattr(caps, "upload_limit_mb", lambda: 1)
    with pytest.raises(DataValidationError, match=r"1,048,576 bytes") as info:
        L.parse_numeric_csv(b"x\n" + b"1\n" * (2**19 + 1))
    assert "max_bytes" in str(info.value) and "DPCORE_MAX_UPLOAD_MB" not in str(info.value)
    with pytest.raises(DataValidationError, match=r"more than the limit of 10 bytes"):
        L.parse_numeric_csv(b"x\n" + b"1\n" * 10, max_bytes=10)
    assert "upload_bytes" not in CAPS
    cols = CAPS["upload_columns"] + 1
    with pytest.raises(DataValidationError, match=f"{cols} columns"):
        L.parse_numeric_csv((",".join(f"c{j}" for j in range(cols)) + "\n").encode())
    with pytest.raises(TypeError):
        L.parse_numeric_csv("x,y\n1,2\n")


def test_parser_errors_are_data_validation_errors():
    for data, fragment in [(b"", "empty"), (b"name,city\nann,rome\n", "No column holds numbers"),
                           (b"x,x\n1,2\n", "appears 2 times"),
                           (b"x,y\n1,2\n2,3,4\n", "Row 3")]:
        with pytest.raises(DataValidationError, match=fragment):
            L.parse_numeric_csv(data)
    assert not hasattr(L, "CsvParseError")


def test_parser_reports_many_bad_cells_compactly():
    body = "\n".join(f"{i},bad" for i in range(30))
    table = L.parse_numeric_csv(("x,y\n" + body + "\n").encode("utf-16"))
    with pytest.raises(DataValidationError) as info:
        L.select_numeric(table, ["x", "y"])
    assert len(info.value.problems) == 20 and info.value.n_problems == 30
    assert "... and 10 more not shown." in str(info.value)


def test_example_linear_fit_and_mse():
    frame = L.example_regression_frame(200, seed=1)
    x = frame["dose"].to_numpy()
    y = frame[["response_a", "response_b"]].to_numpy()
    intercept, slope = L.linear_fit(x, y)
    for j in range(2):
        b, a = np.polyfit(x, y[:, j], 1)
        assert intercept[j] == pytest.approx(a) and slope[j] == pytest.approx(b)
    table = L.mse_table(y, ["a", "b"], {"fit": intercept + x[:, None] * slope})
    assert table.loc["all responses", "fit"] == pytest.approx(table["fit"][:2].mean())
    lo, hi = L.nice_bounds(x)
    assert lo <= x.min() and hi >= x.max()
    fig = V.linear_regression_figure(x, y, ["a", "b"], {"OLS": (intercept, slope),
                                                        "Private": (intercept, slope)})
    assert {tr.name for tr in fig.data} >= {"OLS", "Private"}

