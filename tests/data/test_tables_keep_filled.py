"""TextTable.keep_filled and TextTable.text (dpcore.data.tables): one row set for numeric and
text columns, blank rows dropped and counted, names matched case-insensitively."""

import numpy as np
import pytest

from dpcore.data import DataValidationError, scan_table

TEXT = b"who;x;y;note\n a ;1,5;2;\nb;;3;n\n;2;4;m\nc;3;5;k\n"


def test_keep_filled_drops_rows_blank_in_the_named_columns_only():
    table = scan_table(TEXT)
    kept, dropped = table.keep_filled(["WHO", "x"])
    assert dropped == 2 and kept.rows.tolist() == [2, 5]
    assert kept.columns == table.columns  # every column kept, rows unchanged
    assert kept.text("who").tolist() == ["a", "c"]
    np.testing.assert_array_equal(kept.to_numbers(["x", "y"]).values, [[1.5, 2], [3, 5]])
    same, none = table.keep_filled(["y"])
    assert same is table and none == 0


def test_keep_filled_errors():
    table = scan_table(TEXT)
    with pytest.raises(DataValidationError, match="no column named 'z'"):
        table.keep_filled(["x", "z"])
    with pytest.raises(TypeError):
        table.keep_filled("x")
    with pytest.raises(DataValidationError, match="none is left"):
        scan_table(b"a,b\n1,\n,2\n").keep_filled(["a", "b"])
