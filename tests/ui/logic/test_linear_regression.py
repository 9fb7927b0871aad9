"""Page logic of the linear regression page (ui.logic.linear_regression)."""

import numpy as np
import pytest

from dpcore import visualization as V
from ui.logic import common as C
from ui.logic import linear_regression as L

GOOD_CSV = (
    "id;temperature;yield;quality;note\n"
    "1;10.5;3,2;7;ok\n"  # semicolon-separated, decimal comma in 'yield' is not a number
)


def test_parser_reads_semicolons_and_flags_decimal_commas():
    table = L.parse_numeric_csv(GOOD_CSV.encode("utf-8-sig"))
    assert table.numeric_columns == ["id", "temperature", "quality"]
    assert table.other_columns == ["yield", "note"]
    np.testing.assert_allclose(L.select_numeric(table, ["temperature", "quality"]), [[10.5, 7]])


def test_parser_keeps_spreadsheet_row_numbers_across_blank_lines():
    table = L.parse_numeric_csv(b"x,y\n1,2\n\n3,oops\n")
    with pytest.raises(L.CsvParseError, match=r"Row 4, column 'y'"):
        L.select_numeric(table, ["x", "y"])


def test_parser_limits():
    with pytest.raises(L.CsvParseError, match="at most 2"):
        L.parse_numeric_csv(b"x,y\n1,2\n3,4\n5,6\n", max_rows=2)
    with pytest.raises(L.CsvParseError, match="bytes"):
        L.parse_numeric_csv(b"x\n" + b"1\n" * (C.CAPS["upload_bytes"] // 2 + 1))
    with pytest.raises(TypeError):
        L.parse_numeric_csv("x,y\n1,2\n")


def test_parser_reports_many_bad_cells_compactly():
    body = "\n".join(f"{i},bad" for i in range(30))
    table = L.parse_numeric_csv(("x,y\n" + body + "\n").encode())
    with pytest.raises(L.CsvParseError) as info:
        L.select_numeric(table, ["x", "y"])
    assert len(info.value.problems) == 21
    assert info.value.problems[-1] == "... and 10 more cells."


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

