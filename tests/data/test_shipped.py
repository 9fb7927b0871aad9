"""Data sets shipped with dpcore (package data, ``dpcore/data/presets``) and the geomstats
files they were taken from, read without importing geomstats (dpcore.data.shipped)."""

import io
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from dpcore.data import shipped
from dpcore.data.shipped import (
    EMG_SHIPPED,
    emg_covariances,
    emg_covariances_csv,
    geomstats_data_path,
    preset_path,
)


def _geomstats_file(*parts):
    """A file of the installed geomstats (the development environment's test oracle)."""
    try:
        return geomstats_data_path(*parts)
    except FileNotFoundError as exc:  # the runtime environment has no geomstats
        pytest.skip(f"geomstats' file is not installed: {exc}")


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
    _geomstats_file("emg", "emg.csv")
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


def test_shipped_emg_covariances_are_what_the_loader_computes_from_geomstats_raw_file():
    """The precomputed preset equals, bit for bit, the loader's computation from geomstats' raw
    recordings (and its text is what emg_covariances_csv writes for them)."""
    raw = _geomstats_file("emg", "emg.csv")
    (channels, window), name = next(iter(EMG_SHIPPED.items()))
    computed = emg_covariances(raw, channels=channels, window=window)
    shipped_res = emg_covariances(channels=channels, window=window)
    np.testing.assert_array_equal(shipped_res.matrices, computed.matrices)
    np.testing.assert_array_equal(shipped_res.start, computed.start)
    np.testing.assert_array_equal(shipped_res.gesture, computed.gesture)
    np.testing.assert_array_equal(shipped_res.session, computed.session)
    assert (shipped_res.channels, shipped_res.window) == (channels, window)
    assert preset_path(name).read_text(encoding="utf-8") == emg_covariances_csv(computed)


def test_shipped_cities_are_geomstats_copy():
    assert (preset_path("world_cities.csv").read_bytes()
            == _geomstats_file("cities", "cities.csv").read_bytes())


def test_presets_need_no_geomstats(monkeypatch):
    """Without geomstats the shipped presets still load; another choice of electrodes says
    what is shipped and what it needs."""
    def missing(*parts):
        raise FileNotFoundError("geomstats is not installed")

    monkeypatch.setattr(shipped, "geomstats_data_path", missing)
    res = emg_covariances()
    assert res.matrices.shape == (840, 2, 2)
    assert np.all(np.linalg.eigvalsh(res.matrices) > 0)
    assert preset_path("world_cities.csv").read_bytes().startswith(b'"city","city_ascii"')
    with pytest.raises(FileNotFoundError, match="ships the EMG covariances for channels"):
        emg_covariances(channels=("c2", "c3"))
    with pytest.raises(FileNotFoundError, match="ships no preset"):
        preset_path("../shipped.py")


def test_emg_csv_round_trips_exactly():
    """Floats that decimal printing at fixed precision would round come back with their
    bits."""
    rng = np.random.default_rng(3)
    a = rng.normal(size=(5, 2, 2)) * 10.0 ** rng.integers(-300, 300, size=(5, 1, 1))
    a = a + np.swapaxes(a, 1, 2)
    res = shipped.EMGCovariances(matrices=a, gesture=np.array(["rest"] * 5),
                                 session=np.array(["x_s1"] * 5), start=np.arange(5) * 7,
                                 channels=("c0", "c1"), window=7)
    text = emg_covariances_csv(res)
    back = shipped._read_emg_preset(io.StringIO(text), ("c0", "c1"), 7)
    np.testing.assert_array_equal(back.matrices, a)
    np.testing.assert_array_equal(back.start, res.start)
