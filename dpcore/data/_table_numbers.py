"""Cells of a CSV table to floats: the number syntax of :mod:`dpcore.data.tables`.

Decimal commas (accepted where the delimiter allows, or where a whole quoted column of a
comma-separated file writes them unambiguously), thousands separators (rejected, with a hint),
NaN, infinity and magnitudes above :data:`HUGE_VALUE` (rejected). :func:`_to_numbers` parses a
block of text cells and reports each bad one, by row and column, to a problems collector
(:class:`dpcore.data._table_rows._Collector`). The rules are described in
:mod:`dpcore.data.tables`.
"""

from __future__ import annotations

import math
import re

import numpy as np

from ..exceptions import MAX_PROBLEMS
from ._decoding import _short

__all__ = ["HUGE_VALUE"]

#: Cells with a larger magnitude are rejected (almost always a unit or typing mistake).
HUGE_VALUE = 1e12
_DECIMAL_COMMA = re.compile(r"\s*[+-]?\d*,\d+(?:[eE][+-]?\d+)?\s*")
#: A comma that may as well be a thousands separator: 1 to 3 digits (not starting with 0),
#: the comma, exactly 3 digits, nothing else (``1,000``; ``-12,500``).
_THOUSANDS_OR_DECIMAL = re.compile(r"\s*[+-]?[1-9]\d{0,2},\d{3}\s*")
_THOUSANDS = re.compile(r"[+-]?\d{1,3}(?:[,.' \u00a0\u202f]\d{3})+(?:[.,]\d+)?")
_NAN_OR_INF = re.compile(r"\s*[+-]?(?:nan|inf|infinity)\s*", re.IGNORECASE)


def _parse_float(cell: str, decimal_comma: bool) -> float:
    try:
        return float(cell)
    except ValueError:
        if decimal_comma and _DECIMAL_COMMA.fullmatch(cell):
            return float(cell.replace(",", "."))
        raise


def _comma_decimals(column) -> bool:
    """Whether a column of a comma-separated file writes decimal commas: some of its cells
    hold a decimal-comma number (quoted, since the comma would otherwise split the cell), at
    least one of which cannot be a thousands separator, and none of its numbers has a decimal
    point."""
    unambiguous = False
    for cell in column:
        if "," not in cell:
            if "." in cell and _looks_numeric(cell):
                return False  # decimal points: the commas are not decimal commas
            continue
        if _DECIMAL_COMMA.fullmatch(cell) and not _THOUSANDS_OR_DECIMAL.fullmatch(cell):
            unambiguous = True
    return unambiguous


def _decimal_commas(cells, n_columns, delimiter) -> list[bool]:
    """Per column of ``cells`` (rows of text): whether a decimal comma is read there."""
    if delimiter != ",":
        return [True] * n_columns
    if not cells:
        return [False] * n_columns
    return [_comma_decimals(col) for col in zip(*cells, strict=True)]


def _not_a_number(cell: str, delimiter: str) -> str:
    """Message for a cell that does not parse, with a hint for separators."""
    if not cell.strip():
        return "the cell is empty; every cell needs a number."
    msg = f"value '{_short(cell)}' is not a number"
    if delimiter == "," and _DECIMAL_COMMA.fullmatch(cell):
        return (f"{msg}: in a comma-separated file a comma in a (quoted) number is read as a "
                "decimal comma only when its whole column writes decimal commas, no decimal "
                "points, and one of them at least cannot be a thousands separator (1,000 may "
                "be one thousand). Write numbers with a decimal point (0.5, not 0,5) and no "
                "thousands separator (1000, not 1,000), or separate the file by ';' or tabs.")
    if _THOUSANDS.fullmatch(cell.strip()):
        return f"{msg}: write numbers without a thousands separator (1000.5, not 1,000.5)."
    return f"{msg}."


def _too_large(cell: str) -> str:
    return (f"value '{_short(cell)}' is too large in magnitude (the limit is {HUGE_VALUE:.0e}); "
            "check the units or look for a typo.")


def _to_numbers(cells, rows, columns, delimiter, problems, padded):
    """Parse an (n, c) list of strings; report bad cells; return (values, bad_mask).

    Cells in ``padded`` (positions missing from a short row, already reported) are marked bad
    without a second message.
    """
    n, c = len(cells), len(columns)
    try:
        values = np.array(cells, dtype=float).reshape(n, c)
        bad = np.zeros((n, c), dtype=bool)
    except ValueError:
        values = np.full((n, c), np.nan)
        bad = np.zeros((n, c), dtype=bool)
        decimal_comma = _decimal_commas(cells, c, delimiter)
        shown = 0
        for i, rec in enumerate(cells):
            for j, cell in enumerate(rec):
                try:
                    values[i, j] = _parse_float(cell, decimal_comma[j])
                except ValueError:
                    bad[i, j] = True
                    if (i, j) in padded:
                        continue
                    if shown >= MAX_PROBLEMS:
                        problems.total += 1
                        continue
                    shown += 1
                    problems.add(int(rows[i]), columns[j], _not_a_number(cell, delimiter))
    nonfinite = ~bad & ~np.isfinite(values)
    huge = ~bad & np.isfinite(values) & (np.abs(values) > HUGE_VALUE)

    def nonfinite_message(i, j):
        cell = cells[i][j]
        if _NAN_OR_INF.fullmatch(cell):
            return (f"value '{_short(cell)}' is not a finite number (NaN and infinity are not "
                    "allowed).")
        return _too_large(cell)  # a literal such as 1e400 that overflows to infinity

    for mask, make in (
        (nonfinite, nonfinite_message),
        (huge, lambda i, j: _too_large(cells[i][j])),
    ):
        idx = np.argwhere(mask)
        for i, j in idx[:MAX_PROBLEMS]:
            problems.add(int(rows[i]), columns[j], make(i, j))
        problems.total += max(len(idx) - MAX_PROBLEMS, 0)
    return values, bad | nonfinite | huge


def _looks_numeric(cell: str) -> bool:
    try:
        float(cell)
    except ValueError:
        return False
    return True


def _is_number(cell: str, decimal_comma: bool) -> bool:
    try:
        return math.isfinite(_parse_float(cell, decimal_comma))
    except ValueError:
        return False
