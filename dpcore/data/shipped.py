r"""Real data sets shipped with dpcore, and geomstats' copies they were taken from.

Two presets of the dashboard ship inside the library as package data, in
``dpcore/data/presets`` (provenance and licences in its ``README.md``), so that an installed
``dpcore`` (``pip install .``, editable or not) finds them without geomstats:

* ``world_cities.csv`` -- the 50 largest cities of the World Cities Database (simplemaps.com,
  CC BY 4.0), byte-identical to the copy in geomstats 2.8.0 (MIT);
* ``emg_covariances_c0_c1_w800.csv`` -- the 840 SPD(2) points of the EMG preset (electrodes
  c0 and c1, windows of 800 samples), precomputed by :func:`emg_covariances` from geomstats'
  36 MB ``emg.csv`` and written exactly (every float by its shortest round-trip repr).

* :func:`preset_path` -- the path of one shipped preset file.
* :func:`emg_covariances` -- 2x2 covariance matrices of a pair of EMG electrodes over windows
  of consecutive samples (points of SPD(2)): the shipped ones, or computed from the raw file.
* :func:`emg_covariances_csv` -- the text of a shipped EMG file (to regenerate it).
* :func:`geomstats_data_path` -- the path of one file in an installed geomstats (not
  imported: importing geomstats costs about a second), for other channels or windows than the
  shipped ones and for the tests that check the shipped copies against geomstats' files.
"""

from __future__ import annotations

import csv
import importlib.util
import io
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .._validation import check_int

__all__ = ["EMG_CHANNELS", "EMG_SHIPPED", "PRESETS", "EMGCovariances", "emg_covariances",
           "emg_covariances_csv", "geomstats_data_path", "preset_path"]

#: Electrode columns of geomstats' EMG file (an 8-electrode armband, raw 8-bit samples).
EMG_CHANNELS = tuple(f"c{i}" for i in range(8))
#: The folder of the presets shipped inside dpcore (package data).
PRESETS = Path(__file__).resolve().parent / "presets"
#: The EMG covariances shipped precomputed: ``(channels, window)`` -> file in :data:`PRESETS`.
EMG_SHIPPED = {(("c0", "c1"), 800): "emg_covariances_c0_c1_w800.csv"}
_EMG_HEADER = ("session", "gesture", "start", "s00", "s01", "s11")


def preset_path(name):
    """Path of a preset file shipped inside dpcore (``dpcore/data/presets``).

    Parameters
    ----------
    name : str
        File name, e.g. ``"world_cities.csv"``.

    Returns
    -------
    pathlib.Path

    Raises
    ------
    FileNotFoundError
        If dpcore ships no such file (e.g. an installation without its package data).
    """
    path = PRESETS / str(name)
    if path.parent != PRESETS or not path.is_file():
        raise FileNotFoundError(f"dpcore ships no preset {name!r} (looked in {PRESETS}).")
    return path


def geomstats_data_path(*parts):
    """Path of a file in the installed geomstats' ``datasets/data`` folder (not imported).

    Parameters
    ----------
    *parts : str
        Path inside ``datasets/data``, e.g. ``("emg", "emg.csv")``.

    Returns
    -------
    pathlib.Path

    Raises
    ------
    FileNotFoundError
        If geomstats is not installed or does not ship that file.
    """
    spec = importlib.util.find_spec("geomstats")
    if spec is None or not spec.submodule_search_locations:
        raise FileNotFoundError("geomstats is not installed: its shipped data sets are not "
                                "available (pip install geomstats).")
    path = Path(next(iter(spec.submodule_search_locations))) / "datasets" / "data"
    path = path.joinpath(*parts)
    if not path.is_file():
        raise FileNotFoundError(f"The installed geomstats does not ship {path}.")
    return path


@dataclass(frozen=True)
class EMGCovariances:
    """Windowed covariance matrices of two EMG electrodes.

    Attributes
    ----------
    matrices : ndarray, shape (m, 2, 2)
        One sample covariance (divisor ``window - 1``) per window, in raw units squared.
    gesture : ndarray of str, shape (m,)
        The hand sign held during the window (``rest``, ``rock``, ``paper``, ``scissors``,
        ``ok``).
    session : ndarray of str, shape (m,)
        The recording (``mg_s1``, ``mg_s2``, ``rr_s1``, ``rr_s2``: two people, two sessions
        each).
    start : ndarray of int, shape (m,)
        Row (0-based, data rows of the file) of the window's first sample.
    channels : tuple of str
    window : int
    """

    matrices: np.ndarray
    gesture: np.ndarray
    session: np.ndarray
    start: np.ndarray
    channels: tuple
    window: int


def emg_covariances(source=None, *, channels=("c0", "c1"), window=800):
    r"""SPD(2) points from geomstats' EMG recordings: covariances of two electrodes.

    The raw file holds 731,682 samples of 8 electrodes with the hand sign held (``label``)
    and the recording (``exp``). Each maximal run of consecutive rows with the same recording
    and sign is cut into non-overlapping windows of ``window`` samples (a shorter remainder is
    dropped), and each window gives the sample covariance
    :math:`S = \frac{1}{w-1}\sum_t (x_t - \bar x)(x_t - \bar x)^\top` of the two chosen
    electrodes. This is geomstats' own preparation of these data (covariances of batches of
    consecutive samples within one sign), restricted to two electrodes so that the points lie
    in SPD(2).

    Parameters
    ----------
    source : path or file-like, optional
        geomstats' raw CSV (``emg.csv``) or a file of the same columns. Default: the
        precomputed copy shipped with dpcore when ``(channels, window)`` is one of
        :data:`EMG_SHIPPED` (the dashboard's preset; equal to what this function computes from
        the raw file, a test checks it), else the raw file of the installed geomstats.
    channels : pair of str
        Two of :data:`EMG_CHANNELS`.
    window : int
        Samples per window (at least 3).

    Returns
    -------
    EMGCovariances

    Raises
    ------
    ValueError
        If ``channels`` is not two distinct electrode names.
    FileNotFoundError
        If ``source`` is None, the choice is not shipped and geomstats is not installed.
    """
    channels = tuple(channels)
    if len(channels) != 2 or len(set(channels)) != 2 or not set(channels) <= set(EMG_CHANNELS):
        raise ValueError(f"`channels` must be two distinct names among {EMG_CHANNELS}, "
                         f"got {channels!r}.")
    window = check_int(window, "window", minimum=3)
    if source is None:
        shipped = EMG_SHIPPED.get((channels, window))
        if shipped is not None:
            return _read_emg_preset(preset_path(shipped), channels, window)
        try:
            source = geomstats_data_path("emg", "emg.csv")
        except FileNotFoundError as exc:
            kept = ", ".join(f"channels {c}, window {w}" for c, w in EMG_SHIPPED)
            raise FileNotFoundError(f"dpcore ships the EMG covariances for {kept} only; other "
                                    f"choices need the raw recordings: {exc}") from exc
    import pandas as pd

    frame = pd.read_csv(source, usecols=[*channels, "label", "exp"])
    values = frame[list(channels)].to_numpy(dtype=float)
    label = frame["label"].to_numpy(dtype=str)
    exp = frame["exp"].to_numpy(dtype=str)
    change = np.r_[True, (label[1:] != label[:-1]) | (exp[1:] != exp[:-1])]
    starts = np.flatnonzero(change)
    ends = np.r_[starts[1:], len(frame)]
    first = [np.arange(s, e - window + 1, window) for s, e in zip(starts, ends, strict=True)]
    first = np.concatenate(first) if first else np.zeros(0, dtype=int)
    blocks = values[first[:, None] + np.arange(window)]  # (m, window, 2)
    centred = blocks - blocks.mean(axis=1, keepdims=True)
    matrices = np.einsum("mti,mtj->mij", centred, centred) / (window - 1)
    return EMGCovariances(matrices=matrices, gesture=label[first], session=exp[first],
                          start=first.astype(int), channels=channels, window=window)


def emg_covariances_csv(result):
    """The text of a shipped EMG preset file: one row per window (``session``, ``gesture``,
    ``start``, then ``s00``, ``s01``, ``s11`` of its matrix), every float written by its
    shortest round-trip ``repr``, so reading it back gives the same bits.

    Parameters
    ----------
    result : EMGCovariances

    Returns
    -------
    str

    Examples
    --------
    Regenerate the shipped file from geomstats' raw recordings (development environment)::

        from dpcore.data.shipped import (PRESETS, emg_covariances, emg_covariances_csv,
                                         geomstats_data_path)
        res = emg_covariances(geomstats_data_path("emg", "emg.csv"))
        (PRESETS / "emg_covariances_c0_c1_w800.csv").write_text(emg_covariances_csv(res))
    """
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(_EMG_HEADER)
    for m, g, s, t in zip(result.matrices, result.gesture, result.session, result.start,
                          strict=True):
        writer.writerow([str(s), str(g), int(t), repr(float(m[0, 0])), repr(float(m[0, 1])),
                         repr(float(m[1, 1]))])
    return out.getvalue()


def _read_emg_preset(path, channels, window):
    """An :class:`EMGCovariances` read back from a file (path or text stream) of
    :func:`emg_covariances_csv`."""
    if hasattr(path, "read"):
        rows = list(csv.reader(path))
    else:
        with open(path, newline="", encoding="utf-8") as handle:
            rows = list(csv.reader(handle))
    if not rows or tuple(rows[0]) != _EMG_HEADER:
        raise ValueError(f"{path} is not an EMG preset file (header {_EMG_HEADER}).")
    rows = rows[1:]
    s00, s01, s11 = (np.array([float(r[k]) for r in rows]) for k in (3, 4, 5))
    matrices = np.stack([np.stack([s00, s01], axis=-1), np.stack([s01, s11], axis=-1)],
                        axis=-2)
    return EMGCovariances(matrices=matrices,
                          gesture=np.array([r[1] for r in rows], dtype=str),
                          session=np.array([r[0] for r in rows], dtype=str),
                          start=np.array([int(r[2]) for r in rows], dtype=int),
                          channels=tuple(channels), window=int(window))
