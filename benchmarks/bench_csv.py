"""CSV loading speed per layout: dpcore's row-by-row reader, its vectorised reader and a bare
``pandas.read_csv`` on the same 100,000-row files.

``read_manifold_csv`` reads a clean file with its vectorised reader (pyarrow) and hands any
file with a problem to the row-by-row reader, which words every message; "row reader" is that
reader on its own (the reader of before), "dpcore" the two together as users get them. Both
validate every cell and every point; pandas only parses (with the file's separator and decimal
mark when it has decimal commas). Columns:

* ``row_reader_s``, ``dpcore_s``: the whole ``read_manifold_csv`` (decoding, the cells, the
  points checked against the manifold: eigenvalues for SPD, centring for Kendall, ...);
* ``reading_s``: dpcore's reading alone, without the points' checks (decoding, header, rows,
  cells to numbers: the part the vectorised reader replaces);
* ratios to ``pandas_s``, and ``speed-up`` = row reader / dpcore.

The times of one layout are best of several rounds. The row reader's come first, on their
own: whatever runs right after it pays for the memory it frees (about 5 ms on these files).
Then dpcore, its reading alone and pandas are measured in turn, starting one further each
round, so that a busy machine slows all of them alike; ratios are to pandas in the same run.
The row reader and dpcore must return the same arrays bit for bit: the benchmark checks it.
``python -m benchmarks.bench_csv Kendall`` times only the layouts whose name holds the word.
"""

from __future__ import annotations

import csv
import io
import time
from unittest import mock

import numpy as np
import pandas as pd

from dpcore.data import (
    _csv_cells,
    _csv_fast,
    make_mean_data,
    make_regression_data,
    read_manifold_csv,
)
from dpcore.data import to_csv as _to_csv
from dpcore.data._decoding import _read_source
from dpcore.data.geographic import sphere_to_latlon
from dpcore.manifolds import SPD, Euclidean, KendallShape, Sphere

N = 100_000
ROUNDS = 5


def _rows(text):
    lines = text.splitlines()
    return lines[0].split(","), [line.split(",") for line in lines[1:]]


def _write(header, rows, *, delimiter=",", quoting=csv.QUOTE_MINIMAL, newline="\n"):
    buf = io.StringIO()
    writer = csv.writer(buf, delimiter=delimiter, quoting=quoting, lineterminator=newline)
    writer.writerow(header)
    writer.writerows(rows)
    return buf.getvalue().encode()


def _cases(n):
    """``(name, manifold, task, data, read_manifold_csv options, pandas options)``."""
    rng = np.random.default_rng(0)
    s2, e1 = Sphere(2), Euclidean(1)
    reg = make_regression_data(s2, n, rng=3)
    plain = _to_csv(s2, reg.y, reg.x)
    header, rows = _rows(plain)
    comma = [[c.replace(".", ",") for c in r] for r in rows]
    mean = make_mean_data(s2, n, radius=0.5, rng=4)
    mh, mrows = _rows(_to_csv(s2, mean))
    blanks = [list(r) for r in mrows]
    for i in rng.choice(n, n // 100, replace=False):
        blanks[i][int(rng.integers(3))] = ""
    lat, lon = sphere_to_latlon(mean)
    places = [[f"place {i}", repr(float(a)), repr(float(b)), str(int(p))]
              for i, (a, b, p) in enumerate(zip(lat, lon, rng.integers(1, 10**6, n),
                                                strict=True))]
    groups = [[f"person {i // 8}", *r] for i, r in enumerate(mrows)]
    spd, kendall = SPD(2), KendallShape(8)
    sreg = make_regression_data(spd, n, rng=5)
    sh, srows = _rows(_to_csv(spd, sreg.y, sreg.x))
    full = [[r[0], r[1], r[2], r[2], r[3]] for r in srows]
    kreg = make_regression_data(kendall, n, rng=6)
    ereg = make_regression_data(e1, n, rng=7)
    semi = {"sep": ";", "decimal": ","}
    return [
        ("S², comma", s2, "regression", plain.encode(), {}, {}),
        ("S², ';' + decimal commas", s2, "regression", _write(header, comma, delimiter=";"),
         {}, semi),
        ("S², ',' + quoted decimal commas", s2, "regression",
         _write(header, comma, quoting=csv.QUOTE_ALL), {}, {}),
        ("S², every cell quoted, CRLF", s2, "regression",
         _write(header, rows, quoting=csv.QUOTE_ALL, newline="\r\n"), {}, {}),
        ("S², tab, padded cells", s2, "regression",
         _write(header, [[f" {c} " for c in r] for r in rows], delimiter="\t"), {},
         {"sep": "\t"}),
        ("S² mean, 1% blank cells dropped", s2, "mean", _write(mh, blanks),
         {"blank": "drop"}, {}),
        ("S² mean, group column", s2, "mean", _write(["who", *mh], groups),
         {"group": "who"}, {}),
        ("S² mean, latitude/longitude + text", s2, "mean",
         _write(["city", "lat", "lon", "population"], places), {}, {}),
        ("SPD(2), upper triangle", spd, "regression", _to_csv(spd, sreg.y, sreg.x).encode(),
         {}, {}),
        ("SPD(2), full matrix", spd, "regression",
         _write(["x", "s11", "s12", "s21", "s22"], full), {}, {}),
        ("Kendall(8), landmarks", kendall, "regression",
         _to_csv(kendall, kreg.y, kreg.x).encode(), {}, {}),
        ("R¹", e1, "regression", _to_csv(e1, ereg.y, ereg.x).encode(), {}, {}),
    ]


def _timed(fn):
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def main(n=N, rounds=ROUNDS, only=""):
    """Per layout: seconds of the row reader, dpcore (and its reading alone) and pandas, with
    ratios to pandas measured in the same run (``only``: the layouts whose name holds it)."""
    table = []
    for name, m, task, data, options, pandas_options in _cases(n):
        if only not in name:
            continue
        kw = {"max_rows": n, **options}

        def new():
            return read_manifold_csv(data, m, task, **kw)  # noqa: B023

        def old():
            with mock.patch.object(_csv_fast, "read_rows", return_value=None):
                return read_manifold_csv(data, m, task, **kw)  # noqa: B023

        def plain():
            return pd.read_csv(io.BytesIO(data), **pandas_options)  # noqa: B023

        def reading():
            text = _read_source(data)  # noqa: B023
            return _csv_cells._read_cells(m, text, task, n, **options)  # noqa: B023

        best = {"row": np.inf, "new": np.inf, "reading": np.inf, "pandas": np.inf}
        _, a = _timed(old)
        _, b = _timed(new)  # warm-up: pyarrow's first import
        if not (np.array_equal(a.y, b.y) and np.array_equal(a.rows, b.rows)
                and (a.x is None or a.x.tobytes() == b.x.tobytes())
                and a.y.tobytes() == b.y.tobytes() and a.dropped == b.dropped
                and (a.groups is None or a.groups.tolist() == b.groups.tolist())):
            raise AssertionError(f"{name}: the readers differ")
        for _ in range(rounds):  # first and on its own: the memory it frees slows the next
            best["row"] = min(best["row"], _timed(old)[0])
        runs = [("new", new), ("reading", reading), ("pandas", plain)]
        for r in range(rounds):  # in turn, starting one further each round
            for key, fn in runs[r % 3:] + runs[:r % 3]:
                best[key] = min(best[key], _timed(fn)[0])
        table.append({
            "layout": name, "MB": round(len(data) / 1e6, 1),
            "row_reader_s": round(best["row"], 4), "dpcore_s": round(best["new"], 4),
            "reading_s": round(best["reading"], 4), "pandas_s": round(best["pandas"], 4),
            "row_reader/pandas": round(best["row"] / best["pandas"], 1),
            "dpcore/pandas": round(best["new"] / best["pandas"], 2),
            "reading/pandas": round(best["reading"] / best["pandas"], 2),
            "speed-up": round(best["row"] / best["new"], 1),
        })
    return pd.DataFrame(table).set_index("layout")


if __name__ == "__main__":
    import sys

    print(main(only=" ".join(sys.argv[1:])).to_string())
