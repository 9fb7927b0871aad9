r"""Real data sets shipped inside an installed package, read without importing that package.

geomstats (MIT licence) ships small data sets in ``geomstats/datasets/data``. Importing
geomstats costs about a second (it sets up its backend), so these loaders find the files with
:func:`importlib.util.find_spec`, which locates the package without running it, and read them
with numpy / pandas.

* :func:`geomstats_data_path` -- the path of one shipped file.
* :func:`emg_covariances` -- 2x2 covariance matrices of a pair of EMG electrodes over windows
  of consecutive samples (points of SPD(2)).
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .._validation import check_int

__all__ = ["EMG_CHANNELS", "EMGCovariances", "emg_covariances", "geomstats_data_path"]

#: Electrode columns of geomstats' EMG file (an 8-electrode armband, raw 8-bit samples).
EMG_CHANNELS = tuple(f"c{i}" for i in range(8))


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

    The file holds 731,682 raw samples of 8 electrodes with the hand sign held (``label``)
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
        The CSV (default: the copy inside the installed geomstats).
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
    """
    import pandas as pd

    channels = tuple(channels)
    if len(channels) != 2 or len(set(channels)) != 2 or not set(channels) <= set(EMG_CHANNELS):
        raise ValueError(f"`channels` must be two distinct names among {EMG_CHANNELS}, "
                         f"got {channels!r}.")
    window = check_int(window, "window", minimum=3)
    if source is None:
        source = geomstats_data_path("emg", "emg.csv")
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
