"""ASCII bytes read without decoding the whole file (issue 31 point 3): ``_read_source`` hands
plain ASCII bytes to the reader, which parses them with pyarrow and decodes only the head (the
delimiter and the header) or, for the row reader, all of it. Whatever the source -- the same
file as ASCII bytes, as text, or not ASCII -- the result is the same, bit for bit, and so is
every error; the slices of bytes the reader works on give the lines and records of the text.
"""

from __future__ import annotations

import io

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpcore.data import DataValidationError, _csv_cells, _csv_fast, read_manifold_csv, to_csv
from dpcore.data._decoding import _read_source, _read_text
from dpcore.manifolds import SPD, Euclidean, KendallShape, Sphere

from .test_csvio_fast import both, counting, outcome, same_data

S2 = Sphere(2)
PROPERTY = settings(derandomize=True, max_examples=150, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


def sphere_file(n=50):
    rng = np.random.default_rng(1)
    y = rng.normal(size=(n, 3))
    y /= np.linalg.norm(y, axis=-1, keepdims=True)
    return to_csv(S2, y, rng.normal(size=n))


@pytest.mark.parametrize("data", [
    b"x,y1\n1,2\n", b"", b"   ", b"a\tb\r\n1\t2\r\n", bytearray(b"x,y1\n1,2\n"),
    memoryview(b"x,y1\n1,2\n"),
])
def test_ascii_bytes_come_as_they_are(data):
    got = _read_source(data)
    assert isinstance(got, bytes) and got == bytes(data)
    assert got.decode("ascii") == _read_text(data)


@pytest.mark.parametrize("data", [
    "x,Länge\n1,2\n".encode(), b"\xef\xbb\xbfx,y1\n1,2\n", "x,y1\n1,2\n".encode("utf-16"),
    b"x,y1\n1\x00,2\n", b"PK\x03\x04 not a csv", b"x,y1\n1,\xff\n", io.StringIO("x,y1\n1,2\n"),
])
def test_other_sources_are_decoded_as_ever(data):
    def read(fn):
        if isinstance(data, io.StringIO):
            data.seek(0)
        return outcome(lambda: fn(data))

    got, want = read(_read_source), read(_read_text)
    assert got == want
    if got[0] == "ok":
        assert isinstance(got[1], str)


def test_ascii_bytes_text_and_a_text_source_read_alike():
    text = sphere_file()
    fast = read_manifold_csv(text.encode(), S2, "regression")
    same_data(fast, read_manifold_csv(io.StringIO(text), S2, "regression"))
    same_data(fast, read_manifold_csv(io.BytesIO(text.encode()), S2, "regression"))
    with counting() as seen:
        read_manifold_csv(text.encode(), S2, "regression")
    assert seen == {"fast": 1, "slow": 0}


@pytest.mark.parametrize("pad", [0, 1, 2, 3, 65536 - 40, 65536 - 12, 65536 - 11, 65536 - 10,
                                 65536 - 9, 65536, 70000])
@pytest.mark.parametrize("newline", ["\n", "\r\n", "\r"])
def test_headers_and_blank_lines_around_the_head(pad, newline):
    """Blank lines or a long header that end near or past the decoded head (64 Ki
    characters): the same header, rows and row numbers as the row reader's."""
    body = sphere_file(20).split("\n")
    rows = newline.join(body[1:])
    # Blank lines before the header push it to the end of the head.
    blank = newline * (pad // len(newline))
    both((blank + body[0] + newline + rows).encode(), S2, "regression")
    # A header padded with an ignored column whose name is long.
    header = body[0] + "," + "n" * pad
    cells = newline.join(line + "," for line in body[1:] if line)
    result, _ = both((header + newline + cells).encode(), S2, "regression", others="ignore")
    assert result[0] == "ok"
    # The same header with a quoted name that spans lines.
    quoted = body[0] + ',"' + "q" * pad + newline + 'q"'
    both((quoted + newline + cells).encode(), S2, "regression", others="ignore")


def test_errors_of_ascii_bytes_are_the_text_errors():
    text = sphere_file(10)
    for bad in [text.replace("\n", "\nzz,", 1), text + "1,2\n", text.replace(",", ";", 3),
                text.split("\n", 1)[0] + "\n", "\n\n\n", text + '"\n',
                text.replace("y1", "y1,y1")]:
        got = outcome(lambda b=bad: read_manifold_csv(b.encode(), S2, "regression"))
        want = outcome(lambda b=bad: read_manifold_csv(io.StringIO(b), S2, "regression"))
        assert got[0] == want[0] == "error" and got == want


@pytest.mark.parametrize("m", [SPD(2), KendallShape(4), Euclidean(2)], ids=repr)
def test_every_layout_alike_from_bytes_and_text(m):
    rng = np.random.default_rng(2)
    if isinstance(m, KendallShape):
        y = m.from_csv_rows(rng.normal(size=(30, 8)))
    elif isinstance(m, SPD):
        a = rng.normal(size=(30, 2, 2))
        y = a @ a.swapaxes(-1, -2) + np.eye(2)
    else:
        y = rng.normal(size=(30, 2))
    text = to_csv(m, y)
    same_data(read_manifold_csv(text.encode(), m, "mean"),
              read_manifold_csv(io.StringIO(text), m, "mean"))


@PROPERTY
@given(st.text(alphabet='ab,;"\r\n \t', max_size=60), st.integers(0, 60))
def test_lines_of_bytes_are_the_lines_of_their_text(text, start):
    start = min(start, len(text))
    assert list(_csv_fast.lines(text.encode(), start)) == list(_csv_fast.lines(text, start))


@PROPERTY
@given(st.text(alphabet='x1.5,;"\r\n \t', max_size=80))
def test_cells_of_bytes_are_the_cells_of_their_text(text):
    """The table stage on ASCII bytes and on their text: the same numbers or the same
    error."""
    def summary(source):
        cells = _csv_cells._read_cells(Euclidean(1), source, "mean", 1000)
        return (cells.rows.tolist(), cells.values.tobytes(), cells.bad.tobytes(),
                [(p.row, p.column, p.message) for _, p in cells.problems.items])

    def run(source):
        try:
            return "ok", summary(source)
        except DataValidationError as err:
            return "error", str(err)

    assert run(text.encode()) == run(text)


@pytest.mark.parametrize("repeat", [1, 3, 8, 1000])
def test_group_names_of_long_files_alike(repeat):
    """Group names read through their distinct values (names repeated) or one by one: the
    row reader's names, in a file long enough for either."""
    body = sphere_file(5000).split("\n")
    names = [f" person {i // repeat} " if i % 3 else f"Zoë {i // repeat}" for i in range(5000)]
    text = "who," + body[0] + "\n" + "\n".join(
        f"{name},{line}" for name, line in zip(names, body[1:], strict=False)) + "\n"
    result, fast = both(text.encode(), S2, "regression", group="who")
    assert result[0] == "ok" and fast
    assert result[1].groups.tolist() == [n.strip() for n in names]


def test_lines_counted_in_slices_as_in_one_go():
    """The count of lines by slices (``\\n``, ``\\r`` and ``\\r\\n`` across slice edges)."""
    rng = np.random.default_rng(0)
    for _ in range(3000):
        b = rng.choice(np.array([10, 13, 97], np.uint8), int(rng.integers(0, 60)))
        lf, cr = b == 10, b == 13
        want = np.count_nonzero(lf) + 1
        step = int(rng.integers(1, 8))
        assert _csv_fast._count_lines(b, False, step) == want
        want += np.count_nonzero(cr) - np.count_nonzero(cr[:-1] & lf[1:])
        assert _csv_fast._count_lines(b, True, step) == want
