"""Files whose every cell is quoted (spreadsheets' "quote all" export; in decimal-comma locales
the usual way to write ``"0,5"`` in a comma-separated file): the vectorised reader shows their
quotes sound by counting (:func:`dpcore.data._csv_fast._all_quoted`) instead of locating each
quote. It must take that path on such files, give the row reader's numbers bit for bit, leave
every bad cell to the row reader's message (row and column), and never accept quotes the
positions check (the general path) would refuse.
"""

from __future__ import annotations

import csv
from unittest import mock

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dpcore.data import DataValidationError, _csv_fast, read_manifold_csv
from dpcore.manifolds import Euclidean, Sphere

from .test_csvio_fast import ODD, PROPERTY, assert_fast, both, cells_agree, table, write

S2 = Sphere(2)


def comma_rows(n=300, seed=3):
    header, rows = table(S2, n=n, seed=seed)
    return header, [[c.replace(".", ",") for c in r] for r in rows]


def spy_all_quoted():
    """Patch ``_all_quoted`` to record what it answers."""
    seen = []
    real = _csv_fast._all_quoted

    def spy(*args, **kwargs):
        got = real(*args, **kwargs)
        seen.append(got)
        return got

    return seen, mock.patch.object(_csv_fast, "_all_quoted", spy)


def body_of(text: bytes):
    return _csv_fast._body(text, 0)


def general(body, delimiter, commas):
    """The positions check alone (what ``_quotes`` answers without the counting path)."""
    with mock.patch.object(_csv_fast, "_all_quoted", return_value=None):
        return _csv_fast._quotes(body, delimiter, commas)


# ------------------------------------------------------------------------------ the layout
@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_quoted_decimal_commas_are_counted_and_read_bit_for_bit(newline):
    header, rows = comma_rows(n=2000)  # ~170 kB: over one slice of the count (128 KiB)
    data = write(header, rows, quoting=csv.QUOTE_ALL, newline=newline).encode()
    seen, patch = spy_all_quoted()
    with patch:
        got = assert_fast(data, S2, "regression")  # same arrays as the row reader, bit for bit
    assert seen and seen[-1] == (len(rows), False)  # (lines, no risky comma)
    expected = np.array([[float(c.replace(",", ".")) for c in r[1:]] for r in rows])
    assert got.y.tobytes() == expected.tobytes()
    assert got.rows.tolist() == list(range(2, len(rows) + 2))


def test_every_cell_quoted_with_decimal_points_is_counted_too():
    header, rows = table(S2)
    data = write(header, rows, quoting=csv.QUOTE_ALL, newline="\r\n").encode()
    seen, patch = spy_all_quoted()
    with patch:
        assert_fast(data, S2, "regression")
    assert seen[-1] == (len(rows), False)


@pytest.mark.parametrize("bad, column", [
    ("0,8x", "y2"), ("abc", "y1"), ("1,000.5", "y3"), ("", "x"),
    ("5,", "y1"), ("5,e3", "y2"), ("5, ", "y3"), ("5,e-3", "y1"), ("1,5,5", "x"),
    ("nan", "y2"), ("1e13", "y3"),
])
def test_a_bad_cell_in_a_quoted_decimal_comma_file_is_the_row_readers(bad, column):
    header, rows = comma_rows(n=60)
    j = header.index(column)
    rows[6][j] = bad
    data = write(header, rows, quoting=csv.QUOTE_ALL).encode()
    result, fast = both(data, S2, "regression")  # both readers: the same error
    assert result[0] == "error" and not fast
    with pytest.raises(DataValidationError) as err:
        read_manifold_csv(data, S2, "regression")
    assert (8, column) in [(p.row, p.column) for p in err.value.problems]


def test_padding_and_text_beside_quoted_decimal_commas():
    """Spaces inside the quotes, an exponent, a text column with commas: read alike."""
    header, rows = comma_rows(n=80)
    rows[3][0] = " " + rows[3][0] + " "
    rows[5][0] = "1,5e-3"
    people = [[f"Smith, {i // 4}", *r] for i, r in enumerate(rows)]
    data = write(["who", *header], people, quoting=csv.QUOTE_ALL).encode()
    assert_fast(data, S2, "regression", group="who")


# ------------------------------------------------------------------------------ refusals
@pytest.mark.parametrize("text", [
    b'"0,5","1"\n"1","2"x\n"3","4"',       # text after a closing quote
    b'"0,5","1"\n"1"x,"2"\n"3","4"',       # text after a closing quote, before a delimiter
    b'"0,5","1""2"\n"3","4"',              # a doubled quote
    b'"0,5",","\n"3","4"',                 # a quote between two separators
    b'","\n"3","4"',                       # the first quote before a separator
    b'"3","4"\n","',                       # the last quote after one
    b'"0,5","1"\n\n"3","4"',               # a blank line
    b'"0,5","1\n2"\n"3","4"',              # a record over two lines
    b'"0,5","1"\n"3",4\n"5","6"',          # one cell unquoted
    b'"0,5","1",\n"3","4"',                # a trailing delimiter
    b'"', b'""', b'"5"', b'"5","',         # tiny bodies
    b'"0,5","1"\r"3","4"\r\n"5","6"',      # mixed line ends
])
def test_counting_never_accepts_what_the_positions_refuse(text):
    body = body_of(text)
    for commas in (False, True):
        got = _csv_fast._all_quoted(body, ",", commas)
        if got is not None:
            assert general(body, ",", commas) is not None
            assert got[0] == _csv_fast._count_lines(body.b, body.cr)


def test_refused_layouts_are_refused_by_counting():
    """The cases above that must fail the count (else the check is not looking)."""
    for text in (b'"0,5","1"\n"1","2"x\n"3","4"', b'"0,5","1""2"\n"3","4"',
                 b'"0,5",","\n"3","4"', b'","\n"3","4"', b'"3","4"\n","',
                 b'"0,5","1"\n\n"3","4"', b'"0,5","1"\n"3",4\n"5","6"', b'"'):
        assert _csv_fast._all_quoted(body_of(text), ",", True) is None, text
    body = body_of(b'"0,5","1\n2"\n"3","4"')  # sound quotes: 3 lines, 2 records
    assert _csv_fast._all_quoted(body, ",", False) == (3, False)


def test_risky_commas_are_found_by_counting():
    for text in (b'"5,e3","1"\n"1","2"', b'"5, ","1"', b'"1","5,\t"', b'"5,E1","1"'):
        assert _csv_fast._all_quoted(body_of(text), ",", True)[1] is True, text
        assert _csv_fast._all_quoted(body_of(text), ",", False)[1] is False
    many = b"\n".join(b'"0,5","e e e e"' for _ in range(200)) + b'\n"5,e3","1"'
    assert _csv_fast._all_quoted(body_of(many), ",", True)[1] is True  # past the limit


@PROPERTY
@given(st.text(alphabet=',eE \t5"\n', max_size=60), st.integers(0, 5))
def test_risky_commas_beside_few_or_many_letters(text, limit):
    """The commas before e, E, space or tab: the same found beside each letter or in bulk."""
    body = body_of(("0" + text + "0").encode())
    found = _csv_fast._risky_commas(body, limit=limit)
    assert found.tolist() == _csv_fast._risky_commas(body, limit=-1).tolist()
    expected = [i for i in range(body.b.size - 1)
                if body.b[i] == ord(",") and chr(body.b[i + 1]) in "eE \t"]
    assert found.tolist() == expected


@PROPERTY
@given(st.lists(st.sampled_from(['"', '"', '"', ",", ",", ";", "\n", "\r", "\r\n", "0", "5",
                                 "e", " ", '","', '"\n"', '"\r\n"']), max_size=30),
       st.sampled_from([",", ";"]))
def test_counting_agrees_with_the_positions(tokens, delimiter):
    """On quote-heavy bytes that start and end with a quote: whatever the count accepts, the
    positions accept, with the same risk and the same count of lines."""
    text = ('"' + "".join(tokens) + '"').encode()
    body = body_of(text)
    if body is None:
        return
    commas = delimiter == ","
    got = _csv_fast._all_quoted(body, delimiter, commas)
    for step in (1, 2, 3, 5, 8):  # slices of a few bytes: their edges everywhere
        assert _csv_fast._all_quoted(body, delimiter, commas, step=step) == got, (text, step)
    if got is not None:
        ref = general(body, delimiter, commas)
        assert ref is not None, text
        assert got[1] == ref[1], text
        assert got[0] == _csv_fast._count_lines(body.b, body.cr), text


QUOTED = st.one_of(
    st.floats(-1e3, 1e3).map(lambda v: repr(v).replace(".", ",")),
    st.floats(-1e3, 1e3).map(repr),
    ODD,
)


@PROPERTY
@given(st.lists(st.lists(QUOTED, min_size=3, max_size=3), min_size=1, max_size=8),
       st.sampled_from(["\n", "\r\n", "\r"]), st.sampled_from(["error", "drop"]))
def test_quoted_files_read_alike(rows, newline, blank):
    """Every cell quoted, numbers with decimal commas or points and odd cells: the two
    readers give the same numbers or the same messages."""
    text = write(["y1", "y2", "y3"], rows, quoting=csv.QUOTE_ALL, newline=newline)
    cells_agree(text, Euclidean(3), "mean", blank=blank)
