"""Data sets shipped inside geomstats, read without importing it (dpcore.data.shipped)."""

import io
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from dpcore.data.shipped import emg_covariances, geomstats_data_path


def _frame(rng):
    """A small EMG-like file: 3 runs (two signs, then a new recording), 8 electrodes."""
    runs = [("rest", "a_s1", 23), ("rock", "a_s1", 17), ("rock", "b_s1", 11)]
    rows = []
    for label, exp, length in runs:
        for _ in range(length):
            rows.append([0, *rng.integers(100, 160, size=8), label, exp])
    return pd.DataFrame(rows, columns=["time", *[f"c{i}" for i in range(8)], "label", "exp"])


def test_windows_are_numpy_covariances_of_each_run():
    frame = _frame(np.random.default_rng(0))
    buf = io.StringIO(frame.to_csv(index=False))
    res = emg_covariances(buf, channels=("c2", "c5"), window=5)
    # runs of 23, 17, 11 rows -> 4 + 3 + 2 windows; remainders dropped
    assert res.matrices.shape == (9, 2, 2)
    assert list(res.start) == [0, 5, 10, 15, 23, 28, 33, 40, 45]
    assert list(res.gesture) == ["rest"] * 4 + ["rock"] * 5
    assert list(res.session) == ["a_s1"] * 7 + ["b_s1"] * 2
    values = frame[["c2", "c5"]].to_numpy(float)
    for s, mat in zip(res.start, res.matrices, strict=True):
        np.testing.assert_allclose(mat, np.cov(values[s:s + 5].T), rtol=1e-12)


def test_bad_channels_are_refused():
    with pytest.raises(ValueError, match="two distinct"):
        emg_covariances(io.StringIO("c0\n1\n"), channels=("c0", "c0"))
    with pytest.raises(ValueError, match="two distinct"):
        emg_covariances(io.StringIO("c0\n1\n"), channels=("c0", "c9"))


def test_shipped_emg_file_gives_spd2_points_without_importing_geomstats():
    pytest.importorskip("pandas")
    try:
        geomstats_data_path("emg", "emg.csv")
    except FileNotFoundError as exc:  # the dev environment installs geomstats
        pytest.skip(f"geomstats' EMG file is not installed: {exc}")
    code = ("import sys; from dpcore.data.shipped import emg_covariances; "
            "r = emg_covariances(); print(r.matrices.shape[0], 'geomstats' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["840", "False"]
    res = emg_covariances()
    # every sign has the same number of windows in this balanced recording
    assert set(pd.Series(res.gesture).value_counts()) == {168}
    assert np.all(np.linalg.eigvalsh(res.matrices) > 0)
    np.testing.assert_array_equal(res.matrices, np.swapaxes(res.matrices, 1, 2))
    raw = pd.read_csv(geomstats_data_path("emg", "emg.csv"), usecols=["c0", "c1"])
    s = int(res.start[123])
    np.testing.assert_allclose(res.matrices[123], np.cov(raw.to_numpy(float)[s:s + 800].T))
