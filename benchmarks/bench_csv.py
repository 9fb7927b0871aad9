"""CSV loading speed: dpcore's validating loader against a bare ``pandas.read_csv``.

The loader checks every cell (row and column in each message) and every point against the
manifold; pandas only parses. Ratio = dpcore time / pandas time (the price of validation).
"""

from __future__ import annotations

import io
import time

import pandas as pd

from dpcore.data import load_csv, make_regression_data, to_csv
from dpcore.manifolds import Euclidean, Sphere


def _time(fn, repeats=3):
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def main():
    rows = []
    cases = [
        ("Sphere(2), 50k rows", Sphere(2), make_regression_data(Sphere(2), 50_000, rng=3)),
        ("Euclidean(1), 100k rows", Euclidean(1), make_regression_data(Euclidean(1), 100_000,
                                                                         rng=3)),
    ]
    for name, m, data in cases:
        text = to_csv(m, data.y, data.x).encode()
        ours = _time(lambda: load_csv(text, m))  # noqa: B023
        base = _time(lambda: pd.read_csv(io.BytesIO(text)))  # noqa: B023
        rows.append({"file": name, "MB": round(len(text) / 1e6, 2), "dpcore_s": round(ours, 3),
                     "pandas_s": round(base, 3), "ratio_to_pandas": round(ours / base, 1)})
    return pd.DataFrame(rows).set_index("file")


if __name__ == "__main__":
    print(main().to_string())
