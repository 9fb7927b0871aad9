"""Data sets of the regression pages (Geodesic regression, Budget split): the manifold choices,
synthetic and example data, and uploads (bytes parsed in memory, never written to disk)."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dpcore.data import DEFAULT_NOISE, load_csv, make_regression_data, to_csv
from dpcore.data.synthetic import GENERIC_NOISE
from ui import manifolds as M
from ui.caps import upload_max_bytes
from ui.manifolds import make_manifold

__all__ = [
    "data_csv",
    "Dataset",
    "default_noise",
    "EPS_GRID",
    "EXAMPLE_AGES",
    "example_dataset",
    "EXAMPLE_N",
    "EXAMPLE_SEED",
    "expected_header",
    "MANIFOLD_KINDS",
    "MANIFOLD_LABELS",
    "needs_ball",
    "PARAM_KINDS",
    "PARAM_RANGE",
    "parse_upload",
    "SPHERE_NOISE_CHOICES",
    "synthetic_dataset",
]

#: The manifolds of the regression pages: every key of :mod:`ui.manifolds`, in its order.
MANIFOLD_KINDS = M.KEYS


#: Manifolds whose parameter these pages let the user choose. SPD stays SPD(2) here: its
#: figures draw 2 × 2 matrices as ellipses and in the cone.
PARAM_KINDS = ("kendall", "euclidean")


MANIFOLD_LABELS = {kind: M.label(kind) if kind in PARAM_KINDS else M.choice_label(kind)
                   for kind in MANIFOLD_KINDS}


#: Allowed range and default of the manifold parameter (landmarks k, dimension d).
PARAM_RANGE = {kind: M.spec(kind).param_range for kind in PARAM_KINDS}


#: Choices of the sphere's noise variance delta (paper 002 §4.1 and app. E).
SPHERE_NOISE_CHOICES = (0.001, 0.01, 0.1)


#: Log-scale grid of the budget sliders (1-1.5-2-3-5-7 per decade).
EPS_GRID = tuple(float(f"{m * 10.0**e:.3g}") for e in (-2, -1, 0, 1)
                 for m in (1, 1.5, 2, 3, 5, 7))[:-5]  # 0.01 ... 10


def needs_ball(kind):
    """Whether strict mode needs a public ball ``B_{tau_m}(center)`` (non-compact or κ_l < 0)."""
    return M.spec(kind).needs_ball


def default_noise(kind):
    """Default noise of the synthetic data (variance δ on the sphere, a standard deviation else)."""
    return float(DEFAULT_NOISE.get(type(make_manifold(kind)), GENERIC_NOISE))


@dataclass(frozen=True, eq=False)
class Dataset:
    """Regression data shown on the page.

    Attributes
    ----------
    x : ndarray, shape (n,)
    y : ndarray, shape (n, *point_shape)
    source : {"synthetic", "example", "upload"}
    description : str
    truth : tuple (footpoint, shooting_vector, (low, high)), optional
        The data-generating geodesic of generated data: the point at covariate ``low`` and the
        velocity per unit of ``(x - low) / (high - low)``.
    """

    x: np.ndarray
    y: np.ndarray
    source: str
    description: str
    truth: tuple | None = None

    @property
    def generated(self):
        """True for synthetic and example data (which may be downloaded)."""
        return self.source != "upload"

    @property
    def n(self):
        return int(self.x.shape[0])

    def truth_points(self, manifold, x):
        """Points of the data-generating geodesic at covariates ``x`` (None if unknown)."""
        if self.truth is None:
            return None
        p, v, (low, high) = self.truth
        t = (np.asarray(x, dtype=float) - low) / (high - low)
        return manifold.geodesic(p, v, t)


def synthetic_dataset(kind, param, n, noise, seed):
    """Synthetic data following the papers' protocols (:func:`dpcore.data.make_regression_data`).

    Parameters
    ----------
    kind, param : manifold setting, see :func:`ui.manifolds.make_manifold`
    n : int
        Sample size.
    noise : float
        Noise level (variance δ on the sphere, a standard deviation elsewhere).
    seed : int

    Returns
    -------
    Dataset
    """
    m = make_manifold(kind, param)
    d = make_regression_data(m, int(n), noise=float(noise), rng=int(seed))
    what = "variance δ" if kind == "sphere" else "standard deviation"
    return Dataset(d.x, d.y, "synthetic",
                   f"Synthetic data (paper protocol): n = {int(n)}, noise {what} {noise:g}, "
                   f"seed {int(seed)}; covariate x uniform on [0, 1].",
                   truth=(d.footpoint, d.shooting_vector, (0.0, 1.0)))


#: The bundled example: a covariate in years, so that the covariate range matters.
EXAMPLE_N = 40


EXAMPLE_AGES = (20.0, 80.0)


EXAMPLE_SEED = 20240611


def example_dataset(kind, param):
    """A generated example with the covariate in original units (age 20 to 80 years).

    Made in memory from :func:`dpcore.data.make_regression_data` with a fixed seed; the covariate
    ``t`` on [0, 1] becomes ``age = 20 + 60 t``. Nothing is read from disk.

    Returns
    -------
    Dataset
    """
    m = make_manifold(kind, param)
    d = make_regression_data(m, EXAMPLE_N, rng=EXAMPLE_SEED)
    low, high = EXAMPLE_AGES
    return Dataset(low + (high - low) * d.x, d.y, "example",
                   f"Generated example: {EXAMPLE_N} subjects aged {low:g} to {high:g} years "
                   "(covariate in years), responses scattered about a geodesic.",
                   truth=(d.footpoint, d.shooting_vector, EXAMPLE_AGES))


def parse_upload(data, kind, param, renormalize=False, *, max_bytes=None):
    """Parse the bytes of an uploaded CSV into a :class:`Dataset` (validated, in memory only).

    Parameters
    ----------
    data : bytes
        File contents (e.g. ``UploadedFile.getvalue()``). Nothing is written to disk or logged.
    kind, param : manifold setting, see :func:`ui.manifolds.make_manifold`
    renormalize : bool
        Sphere: project every point onto the sphere instead of rejecting points off it.
    max_bytes : int, optional
        Largest file in bytes; by default the dashboard's upload limit
        (:func:`ui.caps.upload_max_bytes`, Streamlit's ``server.maxUploadSize``).

    Returns
    -------
    Dataset

    Raises
    ------
    dpcore.data.DataValidationError
        With a message naming the row and column of every problem.
    """
    m = make_manifold(kind, param)
    if max_bytes is None:
        max_bytes = upload_max_bytes()
    x, y = load_csv(bytes(data), m, task="regression", renormalize=bool(renormalize),
                    max_bytes=max_bytes)
    return Dataset(x, y, "upload", f"Uploaded CSV: n = {x.shape[0]} rows.")


def expected_header(kind, param):
    """The header line an uploaded CSV must have (DESIGN §9)."""
    from dpcore.data import expected_columns

    return ",".join(expected_columns(make_manifold(kind, param), "regression"))


def data_csv(kind, param, dataset):
    """CSV text of a generated data set (the format :func:`parse_upload` reads)."""
    if not dataset.generated:
        raise ValueError("Only generated data can be downloaded.")
    return to_csv(make_manifold(kind, param), dataset.y, dataset.x)
