"""The vectorised CSV reader (:mod:`dpcore.data._csv_fast`, issue 31 point 3) against the
row-by-row reader it stands in for: on every file, the same rows, row numbers, floats (bit for
bit), group names, dropped rows and problems, or the same error. Each layout the reader knows is
checked to take the vectorised path (else it would be slow, not wrong), on generated files,
on the real data in ``../shared/data`` and on the files geomstats ships; property tests throw
adversarial tables at both readers.
"""

from __future__ import annotations

import csv
import io
import sys
from contextlib import contextmanager
from pathlib import Path
from unittest import mock

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dpcore.data import (
    DataValidationError,
    _csv_cells,
    _csv_fast,
    make_mean_data,
    make_regression_data,
    read_manifold_csv,
    to_csv,
)
from dpcore.data.geographic import sphere_to_latlon
from dpcore.data.shipped import geomstats_data_path
from dpcore.manifolds import SPD, Euclidean, KendallShape, Sphere

from .manifold_cases import MANIFOLDS
from .picks import pick

SHARED = Path(__file__).resolve().parents[3] / "shared" / "data"
S2 = Sphere(2)
PROPERTY = settings(derandomize=True, max_examples=400, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


# ------------------------------------------------------------------------------ helpers
@contextmanager
def counting():
    """Count the vectorised reader's answers (``"fast"``) and refusals (``"slow"``)."""
    seen = {"fast": 0, "slow": 0}
    real = _csv_fast.read_rows

    def spy(*args, **kwargs):
        got = real(*args, **kwargs)
        seen["fast" if got is not None else "slow"] += 1
        return got

    with mock.patch.object(_csv_fast, "read_rows", spy):
        yield seen


def outcome(fn):
    """``("ok", result)`` or ``("error", type, message)``."""
    try:
        return "ok", fn()
    except (DataValidationError, ValueError, TypeError) as err:
        return "error", type(err).__name__, str(err)


def same_data(a, b):
    """Two ManifoldData alike, bit for bit."""
    assert a.y.tobytes() == b.y.tobytes() and a.y.shape == b.y.shape
    assert (a.x is None) == (b.x is None)
    if a.x is not None:
        assert a.x.tobytes() == b.x.tobytes()
    assert a.rows.tolist() == b.rows.tolist()
    assert (a.layout, a.columns, a.ignored, a.dropped, a.slots) == (
        b.layout, b.columns, b.ignored, b.dropped, b.slots)
    assert (a.groups is None) == (b.groups is None)
    if a.groups is not None:
        assert a.groups.dtype == b.groups.dtype and a.groups.tolist() == b.groups.tolist()
    assert a.note == b.note


def both(data, m, task="mean", **kwargs):
    """Read ``data`` with the two readers; they must agree. Returns (outcome, took fast)."""
    with mock.patch.object(_csv_fast, "read_rows", return_value=None):
        slow = outcome(lambda: read_manifold_csv(data, m, task, **kwargs))
    with counting() as seen:
        fast = outcome(lambda: read_manifold_csv(data, m, task, **kwargs))
    assert slow[0] == fast[0], (slow, fast)
    if slow[0] == "ok":
        same_data(slow[1], fast[1])
    else:
        assert slow == fast
    return fast, seen["fast"] > 0


def assert_fast(data, m, task="mean", **kwargs):
    """Both readers agree, and the vectorised one answered."""
    result, fast = both(data, m, task, **kwargs)
    assert result[0] == "ok", result
    assert fast, "the vectorised reader handed this file over"
    return result[1]


def cells_agree(text, m, task, **kwargs):
    """The table stage of both readers on decoded ``text``: same numbers or same error."""
    def summary(cells):
        return (cells.layout, [(p.row, p.column, p.message) for _, p in cells.problems.items],
                cells.problems.total, cells.rows.tolist(), cells.values.tobytes(),
                cells.values.shape, cells.bad.tobytes(),
                None if cells.groups is None else cells.groups.tolist(), cells.dropped,
                cells.ignored)

    slow = outcome(lambda: summary(_csv_cells._read_cells_slow(m, text, task, 10_000,
                                                                 **kwargs)))
    fast = outcome(lambda: summary(_csv_cells._read_cells(m, text, task, 10_000, **kwargs)))
    assert slow == fast


def write(header, rows, *, delimiter=",", quoting=csv.QUOTE_MINIMAL, newline="\n"):
    buf = io.StringIO()
    writer = csv.writer(buf, delimiter=delimiter, quoting=quoting, lineterminator=newline)
    writer.writerow(header)
    writer.writerows(rows)
    return buf.getvalue()


def table(m, task="regression", n=60, seed=3):
    """A valid file of ``m`` as (header, rows of cell text)."""
    if task == "regression":
        data = make_regression_data(m, n, rng=seed)
        text = to_csv(m, data.y, data.x)
    else:
        radius = 0.4 if isinstance(m, (Sphere, KendallShape)) else 1.0
        text = to_csv(m, make_mean_data(m, n, radius=radius, rng=seed))
    lines = text.splitlines()
    return lines[0].split(","), [line.split(",") for line in lines[1:]]


# ------------------------------------------------------------------------------ constants
def test_white_space_sets_are_pythons():
    """PY_SPACE is what str.strip removes; FLOAT_SPACE what float ignores around a number."""
    every = {chr(c) for c in range(0x110000) if chr(c).isspace()}
    assert set(_csv_fast.PY_SPACE) == every
    for c in every:
        assert (c in _csv_fast.FLOAT_SPACE) == (float(f"{c}{c}2.5{c}") == 2.5
                                                if c not in "\x1c\x1d\x1e\x1f" else False)
        assert f" {c}x{c} ".strip() == "x"


@settings(PROPERTY, max_examples=200)
@given(st.text(alphabet="ab\r\n\u2028\x0c,", max_size=40), st.integers(0, 40))
def test_lines_split_as_string_io_does(text, start):
    start = min(start, len(text))
    assert list(_csv_fast.lines(text, start)) == list(io.StringIO(text[start:], newline=""))


def test_without_pyarrow_the_row_reader_reads(monkeypatch):
    header, rows = table(S2)
    data = write(header, rows).encode()
    expected = read_manifold_csv(data, S2, "regression")
    monkeypatch.setitem(sys.modules, "pyarrow.csv", None)
    with counting() as seen:
        same_data(read_manifold_csv(data, S2, "regression"), expected)
    assert seen == {"fast": 0, "slow": 1}


# ------------------------------------------------------------------------------ layouts
@pytest.mark.parametrize("m", MANIFOLDS, ids=repr)
@pytest.mark.parametrize("task", ["regression", "mean"])
def test_every_manifold_and_task_reads_fast_and_alike(m, task):
    header, rows = table(m, task)
    assert_fast(write(header, rows).encode(), m, task)


@pytest.mark.parametrize("dialect", [
    {"delimiter": ";"}, {"delimiter": "\t"}, {"delimiter": "|"},
    {"quoting": csv.QUOTE_ALL}, {"quoting": csv.QUOTE_ALL, "delimiter": ";"},
    {"newline": "\r\n"}, {"newline": "\r"}, {"quoting": csv.QUOTE_ALL, "newline": "\r"},
])
def test_dialects(dialect):
    header, rows = table(S2)
    assert_fast(write(header, rows, **dialect).encode(), S2, "regression")


@pytest.mark.parametrize("sep", [";", "\t", "|"])
def test_decimal_commas(sep):
    header, rows = table(S2)
    comma = [[c.replace(".", ",") for c in r] for r in rows]
    assert_fast(write(header, comma, delimiter=sep).encode(), S2, "regression")
    # Mixed with decimal points in the same column, and padded: the text path.
    mixed = [[c if i % 2 else f" {c.replace('.', ',')}\t" for c in r] for i, r in
             enumerate(rows)]
    assert_fast(write(header, mixed, delimiter=sep).encode(), S2, "regression")


@pytest.mark.parametrize("quoting", [csv.QUOTE_MINIMAL, csv.QUOTE_ALL])
def test_quoted_decimal_commas_in_comma_separated_files(quoting):
    header, rows = table(S2)
    comma = [[c.replace(".", ",") for c in r] for r in rows]
    assert_fast(write(header, comma, quoting=quoting).encode(), S2, "regression")
    # An integer covariate column (no comma anywhere) beside decimal-comma responses.
    ints = [[str(i), *r[1:]] for i, r in enumerate(comma)]
    assert_fast(write(header, ints, quoting=quoting).encode(), S2, "regression")


def test_quoted_commas_that_may_be_thousands_separators_are_the_row_readers():
    """A column whose every comma may separate thousands is reported, never guessed."""
    text = 'y1,y2,y3\n"1,000",0,0\n"2,000",0,1\n'
    result, fast = both(text.encode(), Euclidean(3))
    assert result[0] == "error" and "thousands" in result[2] and not fast


def test_padding_bom_utf16_and_text_sources():
    header, rows = table(S2)
    padded = [[f" {c}\u00a0" for c in r] for r in rows]
    text = write(header, padded, delimiter="\t")
    assert_fast(text.encode(), S2, "regression")
    assert_fast(("\ufeff" + text).encode(), S2, "regression")
    assert_fast(text.encode("utf-16"), S2, "regression")
    assert_fast(io.StringIO(text), S2, "regression")


def test_blank_lines_blank_records_and_blank_cells():
    header, rows = table(S2, "mean")
    lines = [",".join(header)] + [",".join(r) for r in rows]
    lines[3:3] = ["", ",,", " , ,\t"]
    lines[10:10] = ["", ""]
    text = "\n\n" + "\n".join(lines) + "\n\n\n"
    got = assert_fast(text.encode(), S2)
    assert got.rows[0] == 4 and 6 not in got.rows.tolist()
    rows[5][1] = ""
    rows[9][0] = " "
    dropped = assert_fast(write(header, rows).encode(), S2, blank="drop")
    assert dropped.dropped == 2
    result, fast = both(write(header, rows).encode(), S2)
    assert result[0] == "error" and not fast


def test_group_column_and_trailing_delimiter():
    header, rows = table(S2, "mean")
    people = [[f" person {i // 3} ", *r, ""] for i, r in enumerate(rows)]
    got = assert_fast(write(["who", *header, ""], people).encode(), S2, group="who")
    assert got.groups[0] == "person 0"
    people[4][0] = ""
    got = assert_fast(write(["who", *header, ""], people).encode(), S2, group="who",
                      blank="drop")
    assert got.dropped == 1


def test_latitude_longitude_with_text_columns():
    y = make_mean_data(S2, 50, radius=0.5, rng=2)
    lat, lon = sphere_to_latlon(y)
    rows = [[f"Town {i}, Region; \"{i}\"", repr(float(a)), repr(float(b)), "München"]
            for i, (a, b) in enumerate(zip(lat, lon, strict=True))]
    for sep in (",", ";"):
        got = assert_fast(write(["city", "Latitude", "Longitude", "note"], rows,
                                delimiter=sep).encode(), S2)
        assert got.layout == "latlon" and got.ignored == ("city", "note")


def test_spd_full_and_kendall_preshapes():
    m = SPD(3)
    data = make_regression_data(m, 40, rng=1)
    full = [[repr(float(x)), *map(repr, mat.ravel().tolist())] for x, mat in
            zip(data.x, data.y, strict=True)]
    names = [f"s{i}{j}" for i in range(1, 4) for j in range(1, 4)]
    assert assert_fast(write(["x", *names], full).encode(), m, "regression").layout == "spd_full"
    k = KendallShape(4)
    y = make_mean_data(k, 30, radius=0.4, rng=1)
    assert assert_fast(to_csv(k, y).encode(), k).layout == "preshapes"


def test_column_mapping_and_regression_covariate():
    header, rows = table(S2)
    renamed = ["age", "px", "py", "pz"]
    got = assert_fast(write(renamed, rows, delimiter=";").encode(), S2, "regression",
                      covariate="age", columns={"y1": "px", "y2": "py", "y3": "pz"})
    assert got.columns == ("age", "px", "py", "pz")


# ------------------------------------------------------------------------------ real data
def test_rat_skulls_in_every_dialect():
    path = SHARED / "rat_skulls.npy"
    if not path.exists():
        pytest.skip("../shared/data is not beside the repository")
    skulls = np.load(path)
    ages = np.tile([7, 14, 21, 30, 40, 60, 90, 150], 18)
    k = KendallShape(8)
    header = ["x", *[f"l{a}{i}" for i in range(1, 9) for a in "xy"]]
    rows = [[str(a), *map(repr, s.ravel().tolist())] for a, s in zip(ages, skulls, strict=True)]
    for dialect in ({}, {"delimiter": ";"}, {"quoting": csv.QUOTE_ALL, "newline": "\r\n"}):
        got = assert_fast(write(header, rows, **dialect).encode(), k, "regression")
        assert got.layout == "landmarks" and got.y.shape == (144, 8, 2)
    shipped = Path(__file__).resolve().parents[2] / "assets" / "data" / "rat_skulls.csv"
    assert_fast(shipped.read_bytes(), k, "regression")


def test_red_wine_through_a_column_mapping():
    path = SHARED / "winequality-red.csv"
    if not path.exists():
        pytest.skip("../shared/data is not beside the repository")
    data = path.read_bytes()
    names = data.decode().splitlines()[0].replace('"', "").split(",")
    features = [n for n in names if n not in ("alcohol", "class")]
    mapping = {f"y{i + 1}": n for i, n in enumerate(features)}
    got = assert_fast(data, Euclidean(len(features)), "regression", covariate="alcohol",
                      columns=mapping)
    assert got.y.shape == (1599, len(features)) and got.ignored == ("class",)


def test_world_cities_shipped_by_geomstats():
    path = geomstats_data_path("cities", "cities.csv")
    if not path.exists():
        pytest.skip("geomstats is not installed")
    got = assert_fast(path.read_bytes(), S2)  # every cell quoted, non-ASCII names
    assert got.layout == "latlon" and got.y.shape[0] == 50


# ------------------------------------------------------------------------------ refusals
@pytest.mark.parametrize("text", [
    'y1,y2,y3\n1"5",0,0\n0,1,0\n',             # a quote inside an unquoted cell
    'y1,y2,y3\n"1"5,0,0\n0,1,0\n',             # text after a closing quote
    'y1,y2,y3\na"b,c"d,0\n0,1,0\n',            # pyarrow would join two cells here
    'y1,y2,y3\n"1\n",0,0\n0,1,0\n',            # a record over two lines
    'y1,y2,y3\n1_0,0,0\n0,1,0\n',              # Python reads 1_0; pyarrow does not
    'y1,y2,y3\n\u0661,0,0\n0,1,0\n',           # an Arabic-Indic digit
    'y1,y2,y3\n\x1c1\x1c,0,0\n0,1,0\n',        # white space only for Python
    'y1,y2,y3\n\ufeff1,0,0\n0,1,0\n',           # pyarrow drops a byte-order mark here
    'y1,y2,y3\nnan,0,0\n0,1,0\n', 'y1,y2,y3\n1e400,0,0\n0,1,0\n',
    'y1,y2,y3\n1e13,0,0\n0,1,0\n', 'y1,y2,y3\n-inf,0,0\n0,1,0\n',
    'y1;y2;y3\n5,;0;0\n0;1;0\n',               # pyarrow takes "5," with a decimal comma
    'y1;y2;y3\n5,e1;0;0\n0;1;0\n', 'y1;y2;y3\n1,2,3;0;0\n0;1;0\n',
    'y1,y2,y3\n"5,",0,0\n"0,5",1,0\n', 'y1,y2,y3\n"0,5",0.5,0\n0,1,0\n',
    'y1,y2,y3\n1,0,0,\n0,1,0\n',               # a long row with a blank extra cell
    'y1,y2,y3,\n1,0,0,x\n0,1,0,\n',            # a value under an unnamed column
    'y1,y2,y3\n1,0\n0,1,0\n', 'y1,y2,y3\n1,0,0,5\n0,1,0\n',
    'y1,y2,y3\n1,0,0\n', 'y1,y2,y3\n\n\n',
])
def test_files_at_the_edges_read_alike(text):
    for task in ("mean", "regression"):
        cells_agree(text, Euclidean(3), task)
        both(text.encode(), Euclidean(3), task)


def test_long_lines_and_the_row_limit_are_the_row_readers():
    long = "y1,y2,y3,note\n1,0,0," + "a" * (csv.field_size_limit() + 10) + "\n0,1,0,b\n"
    result, fast = both(long.encode(), S2, others="ignore")
    assert result[0] == "error" and not fast
    header, rows = table(S2, "mean", n=30)
    result, fast = both(write(header, rows).encode(), S2, max_rows=29)
    assert result[0] == "error" and "max_rows=29" in result[2] and not fast


# ------------------------------------------------------------------------------ properties
NUMBER = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False).map(repr),
    st.floats(-1e3, 1e3).map(lambda v: f"{v:.3f}"),
    st.from_regex(r"\A[+-]?[0-9]{1,25}(\.[0-9]{0,25})?([eE][+-]?[0-9]{1,3})?\Z"),
    st.from_regex(r"\A[+-]?\.[0-9]{1,20}\Z"),
)
#: Numbers within the reader's range (magnitudes up to 1e12), written in many ways.
MODERATE = st.one_of(
    st.floats(-1e9, 1e9).map(repr),
    st.floats(-1e3, 1e3).map(lambda v: f"{v:.17g}"),
    st.from_regex(r"\A[+-]?[0-9]{1,6}(\.[0-9]{0,30})?([eE][+-]?[0-9]{1,2})?\Z").filter(
        lambda t: abs(float(t)) <= 1e12),
    st.from_regex(r"\A[+-]?[0-9]{0,3}\.[0-9]{1,30}\Z"),
)
ODD = st.sampled_from([
    "", " ", "\t", "\u00a0", "\u2003", "\x1c", "\x0b", "1,5", "5,", ",5", "-,5", "1,000",
    "0,500", "12,345", "1.000,5", "1,000.5", "1_000", "\u0661\u0662", "\uff11", "nan", "inf",
    "-Infinity", "1e400", "1e13", "-1e12", '"', '""', 'a"b', "x", "-", "+", ".", "+.5",
    "1.", "1e5", " 0.5 ", "0x10", "1e", "5e-324", "1 000", "\ufeff1",
])


ANY_NUMBER = st.one_of(NUMBER, ODD)  # built once, like the strategies of pick


@st.composite
def cell(draw, delimiter, clean):
    """A cell: mostly a number, written in some way; ``clean`` cells are numbers that both
    readers accept (unless a rare token slips in)."""
    text = draw(MODERATE if clean and draw(st.integers(0, 30)) else ANY_NUMBER)
    if delimiter != "," and draw(st.integers(0, 3)) == 0:
        text = text.replace(".", ",")
    pad = draw(pick(["", "", "", " ", "\t", "\u00a0"]))
    pad = "" if clean and pad == delimiter else pad
    text = pad + text + pad[::-1]
    how = draw(pick(["plain"] * 4 + ["quoted", "comma"] + ["broken"] * (not clean)))
    if how == "quoted" or (how == "comma" and delimiter == ","):
        if how == "comma":
            text = text.replace(".", ",")
        return '"' + text.replace('"', '""') + '"'
    if how == "broken":
        at = draw(st.integers(0, len(text)))
        return text[:at] + '"' + text[at:]
    return text


@st.composite
def files(draw):
    """Tables of random cells (mostly numbers) in a random dialect, with blank lines, blank
    records, short and long rows, group and unnamed columns."""
    m = draw(pick([Euclidean(3), Euclidean(1), S2]))
    task = draw(pick(["mean", "regression"]))
    delimiter = draw(pick([",", ";", "\t", "|"]))
    header = (["x"] if task == "regression" else []) + m.csv_columns()
    extra = draw(pick([[], ["who"], [""], ["who", ""]]))
    header = header + extra
    if draw(st.booleans()):
        header = draw(st.permutations(header))
    width = len(header)
    out = [delimiter.join(header)]
    clean = draw(st.booleans())
    for _ in range(draw(st.integers(0, 12))):
        kind = draw(pick(["row"] * 12 + ["blank", "empty", "spaces"]
                                    + ["short", "long"] * (not clean)))
        if kind == "blank":
            out.append("")
        elif kind == "empty":
            out.append(delimiter * (width - 1))
        elif kind == "spaces":
            out.append(delimiter.join(" " for _ in range(width)))
        else:
            n = width + {"row": 0, "short": -1, "long": 1}[kind]
            cells = [draw(cell(delimiter, clean)) for _ in range(max(n, 1))]
            for j, name in enumerate(header[:len(cells)]):
                if name == "who":
                    names = ["ann", " bob ", "c d", "é"] + ["", "\x1c"] * (not clean)
                    cells[j] = draw(pick(names))
                elif name == "" and (clean or draw(st.integers(0, 5))):
                    cells[j] = draw(pick(["", " "]))
            out.append(delimiter.join(cells))
    newline = draw(pick(["\n", "\r\n", "\r"]))
    text = newline.join(out) + draw(pick(["", newline, newline * 2]))
    kwargs = {"blank": draw(pick(["error", "drop"]))}
    if "who" in header:
        kwargs["group"] = "who"
    return m, task, text, kwargs


@PROPERTY
@given(files())
def test_random_files_read_alike(case):
    m, task, text, kwargs = case
    cells_agree(text, m, task, **kwargs)


@PROPERTY
@given(st.lists(NUMBER, min_size=3, max_size=30),
       st.sampled_from([",", ";", "\t"]), st.booleans())
def test_numbers_are_read_bit_for_bit(numbers, delimiter, comma):
    """Any plain decimal number, however long, reads to the float Python reads."""
    values = [n.replace(".", ",") if comma and delimiter != "," else n for n in numbers]
    if comma and delimiter == ",":
        values = ['"' + v.replace(".", ",") + '"' for v in values]
    text = f"y1{delimiter}y2\n" + "".join(f"{v}{delimiter}0\n" for v in values)
    cells_agree(text, Euclidean(2), "mean")
    expected = np.array([float(n) for n in numbers])
    if np.all(np.abs(expected) <= 1e12):
        got = _csv_cells._read_cells(Euclidean(2), text, "mean", 10_000)
        if not got.problems:  # "5." written "5," is no number, in either reader
            assert got.values[:, 0].tobytes() == expected.tobytes()


NEAR_NUMBER = st.one_of(
    st.from_regex(r"\A[ \t]?[+-]{0,2}[0-9]{0,3}[.,]{0,2}[0-9]{0,3}([eE][+-]?[0-9]{0,2})?[ \t]?\Z"),
    st.text(alphabet="0123456789.,eE+- \t_xainf\u00a0\ufeff", min_size=1, max_size=8),
)


@PROPERTY
@given(st.lists(NEAR_NUMBER, min_size=1, max_size=6), st.sampled_from([",", ";", "\t"]),
       st.booleans())
def test_cells_of_number_characters_read_alike(cells, delimiter, quote):
    """Near-numbers (a sign too many, an exponent without digits, ``5,``, ``.e1``, ...) in
    every delimiter, quoted or not: the readers agree on each."""
    def write_cell(c):
        return '"' + c + '"' if quote or delimiter in c or "," in c and delimiter == "," else c
    text = f"y1{delimiter}y2\n" + "".join(f"{write_cell(c)}{delimiter}1\n" for c in cells)
    cells_agree(text, Euclidean(2), "mean")
