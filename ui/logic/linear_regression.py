"""Page logic of the linear-regression page: the upload parser, the example data, OLS and
the error table. Uploaded bytes are parsed in memory by :mod:`dpcore.data.tables` (the
library's one CSV reader), never written to disk or logged."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from dpcore.data import DataValidationError, TextTable, scan_table
from ui.caps import CAPS, upload_max_bytes, upload_max_rows

__all__ = [
    "DATA_START_NOTE",
    "EXAMPLE_DESIGN",
    "EXAMPLE_DOSE",
    "EXAMPLE_LINES",
    "EXAMPLE_NOISE_SDS",
    "TAU_START_NOTE",
    "DataHeld",
    "bound_sources",
    "data_bounds_warning",
    "data_held",
    "data_start_notes",
    "default_tau",
    "example_regression_frame",
    "release_label",
    "start_bounds",
    "linear_fit",
    "mse_table",
    "nice_bounds",
    "observed_excess",
    "parse_numeric_csv",
    "predicted_error",
    "predicted_error_text",
    "plot_subsample",
    "release_plan",
    "release_work",
    "release_settings",
    "select_numeric",
    "smallest_epsilon_text",
    "WINE_BOUNDS",
    "WINE_CITATION",
    "WINE_FILE",
    "WINE_MAPPING",
    "wine_bytes",
]


def parse_numeric_csv(data, *, max_rows=None, max_bytes=None):
    """Read an uploaded CSV (bytes) in memory and find its numeric columns.

    A thin call to :func:`dpcore.data.scan_table`, the first half of
    :func:`dpcore.data.read_table`: the file is decoded (UTF-8, UTF-16 or UTF-32 with a BOM,
    UTF-16 without), its delimiter found (``,``, ``;``, tab or ``|``), header and rows checked.
    Text columns (such as an ``id`` of names) are allowed: :attr:`TextTable.text_columns`
    lists them and only :attr:`TextTable.numeric_columns` are offered. Numbers may use a
    decimal comma in files not separated by commas. Cells are checked when columns are chosen
    (:func:`select_numeric`). Nothing is written to disk.

    Limits: the size is ``max_bytes``, by default the dashboard's upload limit
    (:func:`ui.caps.upload_max_bytes`, Streamlit's ``server.maxUploadSize``, the same on every
    page); the rows are ``max_rows``; the named columns are ``CAPS["upload_columns"]``.

    Parameters
    ----------
    data : bytes
        The file's content.
    max_rows : int, optional
        Most data rows accepted (default: :func:`ui.caps.upload_max_rows`).
    max_bytes : int, optional
        Largest file in bytes (default: :func:`ui.caps.upload_max_bytes`).

    Returns
    -------
    dpcore.data.TextTable

    Raises
    ------
    DataValidationError
        For an empty, binary, undecodable or malformed file, a missing or duplicated header
        name, ragged rows, too many rows, bytes or columns, or no numeric column. Messages
        name the row (header = row 1, first data row = row 2) and the column.
    """
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"`data` must be bytes, got {type(data).__name__}.")
    if max_bytes is None:
        max_bytes = upload_max_bytes()
    if max_rows is None:
        max_rows = upload_max_rows()
    table = scan_table(bytes(data), max_rows=max_rows, max_bytes=max_bytes,
                       max_columns=CAPS["upload_columns"])
    if not table.numeric_columns:
        raise DataValidationError("no column holds numbers: every column is text or empty.")
    return table


def select_numeric(table: TextTable, columns):
    """The chosen columns as floats, checking every cell (:meth:`TextTable.to_numbers`).

    Parameters
    ----------
    table : dpcore.data.TextTable
        From :func:`parse_numeric_csv`.
    columns : sequence of str
        Column names, in the order wanted.

    Returns
    -------
    ndarray, shape (n_rows, len(columns))

    Raises
    ------
    DataValidationError
        Listing (up to 20 of) the empty, non-numeric, NaN, infinite or huge cells by row and
        column, or a column not in the file.
    """
    return table.to_numbers(columns).values


#: The generated example's design, public facts of the generator (never read from its output):
#: ``dose`` is uniform on this interval ...
EXAMPLE_DOSE = (0.0, 10.0)
#: ... and each response is ``intercept + slope * dose + N(0, sd^2)``: name -> (intercept,
#: slope, sd).
EXAMPLE_LINES = {
    "response_a": (2.0, 0.8, 1.0),
    "response_b": (10.0, -0.5, 0.7),
    "response_c": (5.0, 0.1, 1.5),
}
#: Noise standard deviations added each side of a response's line for its public bounds.
EXAMPLE_NOISE_SDS = 5.0


def _design_bounds(intercept, slope, sd):
    ends = (intercept + slope * EXAMPLE_DOSE[0], intercept + slope * EXAMPLE_DOSE[1])
    return (float(math.floor(min(ends) - EXAMPLE_NOISE_SDS * sd)),
            float(math.ceil(max(ends) + EXAMPLE_NOISE_SDS * sd)))


#: Public bounds of the generated example's columns, from its design alone: ``dose`` in its
#: interval; each response in the range of its line over that interval widened by
#: :data:`EXAMPLE_NOISE_SDS` noise standard deviations, rounded outward to whole numbers (a
#: point beyond them, chance below 1e-6 each, is projected onto the box like any other).
EXAMPLE_DESIGN = {"dose": EXAMPLE_DOSE,
                  **{name: _design_bounds(*line) for name, line in EXAMPLE_LINES.items()}}


def example_regression_frame(n=100, *, seed=0):
    """A generated example for the linear-regression page (made in memory, never read from disk).

    Three responses depend linearly on a covariate ``dose`` in [0, 10] with Gaussian noise;
    a text column ``site`` shows that non-numeric columns are ignored.

    Parameters
    ----------
    n : int
        Rows (capped by ``CAPS["example_rows"]``).
    seed : int

    Returns
    -------
    pandas.DataFrame
        Columns ``site``, ``dose``, ``response_a``, ``response_b``, ``response_c``.
    """
    n = int(min(max(int(n), 3), CAPS["example_rows"]))
    rng = np.random.default_rng(seed)
    dose = rng.uniform(*EXAMPLE_DOSE, n)
    columns = {"site": rng.choice(["north", "south", "east"], n), "dose": np.round(dose, 3)}
    for name, (intercept, slope, sd) in EXAMPLE_LINES.items():
        columns[name] = np.round(intercept + slope * dose + rng.normal(0.0, sd, n), 3)
    return pd.DataFrame(columns)


def linear_fit(x, y):
    """Ordinary least squares, one line per response column.

    Parameters
    ----------
    x : array-like, shape (n,)
    y : array-like, shape (n, d)

    Returns
    -------
    (intercept, slope) : tuple of ndarray, each shape (d,)
    """
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    xc = x - x.mean()
    denom = float(np.sum(xc**2))
    if denom == 0:
        raise ValueError("The covariate is constant: no line can be fitted.")
    slope = xc @ (y - y.mean(axis=0)) / denom
    return y.mean(axis=0) - slope * x.mean(), slope


def nice_bounds(values, *, pad=0.05):
    """An interval holding ``values``, widened by ``pad`` of its width and rounded outward.

    Parameters
    ----------
    values : array-like
    pad : float

    Returns
    -------
    (low, high) : tuple of float
    """
    v = np.asarray(values, dtype=float)
    lo, hi = float(np.min(v)), float(np.max(v))
    width = hi - lo if hi > lo else max(abs(hi), 1.0)
    lo, hi = lo - pad * width, hi + pad * width
    step = 10.0 ** math.floor(math.log10(width)) / 10.0
    return math.floor(lo / step) * step, math.ceil(hi / step) * step


def mse_table(y, names, predictions):
    """Mean squared error per response and over all responses.

    Parameters
    ----------
    y : array-like, shape (n, d)
    names : sequence of str
        Response names.
    predictions : mapping of str to array-like, shape (n, d)
        Fitted values per method (e.g. non-private, dpcore, diffprivlib).

    Returns
    -------
    pandas.DataFrame
        One row per response plus a row ``"all responses"``; one column per method.
    """
    y = np.asarray(y, dtype=float)
    data = {}
    for method, pred in predictions.items():
        err = (y - np.asarray(pred, dtype=float)) ** 2
        data[method] = list(err.mean(axis=0)) + [float(err.mean())]
    return pd.DataFrame(data, index=pd.Index([*names, "all responses"], name="response"))


def release_plan(n, d, eps_p, eps_v, bounds, mode):
    """What dpcore's release will run (exact or MCMC) and its label, from public inputs only
    (:func:`dpcore.release.plan_regression_sampler` on R^d with the page's bounds)."""
    from dpcore.manifolds import Euclidean
    from dpcore.release import plan_regression_sampler

    return plan_regression_sampler(
        Euclidean(int(d)), int(n), eps_p=float(eps_p), eps_v=float(eps_v),
        tau=bounds["tau"] if mode == "strict" else None, tau_m=bounds["tau_m"], draws=1,
        mode=mode)


def release_settings(eps_p, eps_v, bounds, mode):
    """The keyword arguments of :func:`dpcore.release.private_geodesic_regression` for the
    page's budget and bounds (the exported script passes the same). Bounds that still hold a
    starting value taken from the data (``bounds["bound_sources"]``, :func:`bound_sources`)
    are passed as such (``bound_sources``), so the release is labelled NOT PRIVATE."""
    out = {"eps_p": float(eps_p), "eps_v": float(eps_v), "tau": bounds["tau"],
           "covariate_range": bounds["covariate_range"], "tau_m": bounds["tau_m"],
           "center": None if bounds["center"] is None else np.asarray(bounds["center"],
                                                                       dtype=float),
           "mode": mode}
    if mode == "strict" and bounds.get("bound_sources"):
        out["bound_sources"] = dict(bounds["bound_sources"])
    return out


# ------------------------------------------------------------- where the bounds came from
#: The note a release carries for a bound still holding the page's starting value taken from
#: the data.
DATA_START_NOTE = "the page's starting value, the data's range rounded outward; not replaced"
#: The same for τ, which follows the response box until typed.
TAU_START_NOTE = ("the page's starting value, from the response box holding the data's range "
                  "rounded outward; not replaced")


def start_bounds(name, column, public=None, estimated=None):
    """A bounds field's starting value and where it comes from.

    Parameters
    ----------
    name : str
        The column's name.
    column : array-like
        Its values (used only when nothing public is known: :func:`nice_bounds`).
    public : mapping of str to (float, float), optional
        Bounds from domain knowledge or a generator's design.
    estimated : mapping of str to (float, float), optional
        Ranges estimated under DP (they win).

    Returns
    -------
    (low, high, origin) : (float, float, str)
        ``origin`` is ``"estimate"``, ``"public"`` or ``"data"`` (the data's range rounded
        outward: not public).
    """
    if estimated and name in estimated:
        lo, hi = estimated[name]
        return float(lo), float(hi), "estimate"
    if public and name in public:
        lo, hi = public[name]
        return float(lo), float(hi), "public"
    lo, hi = nice_bounds(column)
    return float(lo), float(hi), "data"


def default_tau(lower, upper):
    """τ's starting value: the radius of the box's circumscribed ball, to 2 significant
    digits."""
    radius = 0.5 * float(np.linalg.norm(np.asarray(upper, float) - np.asarray(lower, float)))
    return float(f"{radius:.2g}")


@dataclass(frozen=True)
class DataHeld:
    """Which bounds fields still hold a starting value taken from the data.

    Attributes
    ----------
    covariate : bool
        The covariate range.
    responses : tuple of str
        The responses whose box row does.
    tau : bool
        τ: it was not typed, so it follows the box (:func:`default_tau`), and the box holds
        the data's range.
    """

    covariate: bool = False
    responses: tuple = ()
    tau: bool = False

    @property
    def any(self):
        return bool(self.covariate or self.responses or self.tau)


def _same(value, start):
    return bool(np.allclose(np.asarray(value, float), np.asarray(start, float), rtol=1e-9,
                            atol=0.0))


def data_held(covariate, names, starts, covariate_value, box, tau_typed):
    """Which fields still hold their starting value taken from the data (:func:`start_bounds`
    with origin ``"data"``).

    Parameters
    ----------
    covariate : str
    names : sequence of str
        The responses, in the box's order.
    starts : mapping of str to (low, high, origin)
        Every field's start (:func:`start_bounds`).
    covariate_value : (float, float)
        The covariate fields' values.
    box : sequence of (float, float)
        The box's values per response.
    tau_typed : bool
        Whether τ was typed; if not, it follows the box (:func:`default_tau`).

    Returns
    -------
    DataHeld
        τ counts as held when it was not typed and some response's box row is held.
    """
    def held(name, value):
        lo, hi, origin = starts[name]
        return origin == "data" and _same(value, (lo, hi))

    responses = tuple(nm for nm, value in zip(names, box, strict=True) if held(nm, value))
    return DataHeld(covariate=held(covariate, covariate_value), responses=responses,
                    tau=bool(responses) and not tau_typed)


def bound_sources(held):
    """The ``bound_sources`` of :func:`dpcore.release.private_geodesic_regression` for the
    fields in ``held`` (a :class:`DataHeld`): the box gives τ_m and the centre."""
    out = {}
    if held.covariate:
        out["covariate_range"] = "data"
    if held.responses:
        out["tau_m"] = out["center"] = "data"
    if held.tau:
        out["tau"] = "data"
    return out


def data_start_notes(sources):
    """The notes a release carries for the bounds in ``sources`` (:func:`bound_sources`)."""
    return {name: TAU_START_NOTE if name == "tau" else DATA_START_NOTE
            for name, source in sources.items() if source == "data"}


def data_bounds_warning(covariate, held):
    """The warning shown next to the bounds while some field holds the data's range (None
    when none does)."""
    if not held.any:
        return None
    fields = []
    if held.covariate:
        fields.append(f"the covariate range ('{covariate}')")
    if held.responses:
        fields.append("the response box (" + ", ".join(f"'{nm}'" for nm in held.responses)
                      + ")")
    if held.tau:
        fields.append("τ (which follows the response box until typed)")
    listed = fields[0] if len(fields) == 1 else ", ".join(fields[:-1]) + " and " + fields[-1]
    verb = "holds" if len(fields) == 1 else "hold"
    return (f"**Bounds from the data:** {listed} still {verb} the data's own range rounded "
            "outward (the fields' starting value), which is not public. The release will be "
            "labelled **NOT PRIVATE (bounds from the data)** until "
            + ("it is" if len(fields) == 1 else "they are")
            + " replaced by public values (from the columns' units or domain knowledge) or "
            "estimated privately (*Estimate privately* below).")


def release_label(plan, bounds, mode):
    """The guarantee and label dpcore's release will get, before it is made.

    Parameters
    ----------
    plan : dict
        :func:`release_plan` (exact or MCMC).
    bounds : dict
        The page's bounds (``bound_sources`` for fields holding the data's range).
    mode : {"strict", "paper"}

    Returns
    -------
    (guarantee, label) : (str, str)
    """
    from dpcore.release.record import APPROXIMATE_LABELS, DATA_BOUNDS_LABEL, LABELS

    if mode == "paper":
        return "not private", LABELS["not private"]
    if any(v == "data" for v in (bounds.get("bound_sources") or {}).values()):
        return "not private", DATA_BOUNDS_LABEL
    if plan["guarantee"] == "approximately private":
        return "approximately private", APPROXIMATE_LABELS["mcmc"]
    return plan["guarantee"], LABELS.get(plan["guarantee"], plan["guarantee"])


def release_work(request):
    """``(WorkEstimate, within the work budget)`` of dpcore's release (``request.work()``;
    the library's budget, :data:`dpcore.release.work.DEFAULT_WORK_BUDGET`). The diffprivlib
    comparison (a closed-form fit) adds little to it."""
    from dpcore.release import work as W

    est = request.work()
    return est, est.seconds <= W.DEFAULT_WORK_BUDGET


# ---------------------------------------------------------------------- the red-wine preset
#: The shipped copy of the UCI red-wine data (see assets/data/README.md for its provenance).
WINE_FILE = Path(__file__).resolve().parents[2] / "assets" / "data" / "winequality-red.csv"

#: Attribution shown with the preset.
WINE_CITATION = ("P. Cortez, A. Cerdeira, F. Almeida, T. Matos and J. Reis, *Modeling wine "
                 "preferences by data mining from physicochemical properties*, Decision Support "
                 "Systems 47(4):547–553, 2009; UCI Machine Learning Repository, Wine Quality, "
                 "CC BY 4.0.")

#: The preset's default roles: alcohol (% vol) explains the sensory quality score.
WINE_MAPPING = ("alcohol", ("class",))

#: Public bounds of every column of the red-wine file, from domain knowledge of red table
#: wine (not from the file): units and the reasoning are in assets/data/README.md.
WINE_BOUNDS = {
    "fixed_acidity": (4.0, 16.0),          # g/L tartaric acid
    "volatile_acidity": (0.0, 1.6),        # g/L acetic acid
    "citric_acid": (0.0, 1.0),             # g/L
    "residual_sugar": (0.0, 16.0),         # g/L
    "chlorides": (0.0, 0.7),               # g/L sodium chloride
    "free_sulfur_dioxide": (0.0, 75.0),    # mg/L
    "total_sulfur_dioxide": (0.0, 300.0),  # mg/L
    "density": (0.99, 1.005),              # g/cm³
    "pH": (2.7, 4.1),
    "sulphates": (0.3, 2.0),               # g/L potassium sulphate
    "alcohol": (8.0, 15.0),                # % by volume
    "class": (0.0, 10.0),                  # sensory quality score, 0 (very bad) to 10
}


def wine_bytes():
    """The shipped red-wine CSV file's bytes."""
    return WINE_FILE.read_bytes()


def plot_subsample(n, limit, *, seed=0):
    """Indices of the rows a figure draws: all ``n`` rows up to ``limit``, else a fixed
    (seeded) random subsample of ``limit`` rows in file order.

    Returns
    -------
    ndarray of int
    """
    if n <= limit:
        return np.arange(n)
    return np.sort(np.random.default_rng(seed).choice(n, size=int(limit), replace=False))


# ------------------------------------------------------------------ accuracy before release
def predicted_error(request, seed=0):
    """The predicted excess mean squared error of dpcore's release ``request`` (a linear
    :class:`~dpcore.release.GeodesicRegressionRequest`; its :meth:`predict
    <dpcore.release.GeodesicRegressionRequest.predict>` with ``metric="excess_mse"``): public
    inputs only (n, the number of responses, ε and the public bounds τ and τ_m). None in paper
    mode."""
    return request.predict(metric="excess_mse", rng=int(seed))


def predicted_error_text(pred, epsilon, n, mcmc=False, data_bounds=False):
    """The prediction as sentences shown next to the budget (``pred`` None: paper mode;
    ``data_bounds``: some bounds field still holds the data's range, so the inputs are not all
    public)."""
    if pred is None:
        return ("No prediction before release in paper mode: its bounds come from the data, "
                "so nothing about its error can be said from public inputs alone.")
    if not pred["available"]:
        return f"No prediction before release at ε = {epsilon:g}: {pred['reason']}."
    inputs = ("from n = {n:,}, the bounds in the fields (some still hold the data's range, "
              "so this is not a public statement) and ε = {eps:g}" if data_bounds
              else "public inputs only: n = {n:,}, the bounds and ε = {eps:g}")
    text = (f"**Predicted error before you release** ({inputs.format(n=n, eps=epsilon)}): "
            "dpcore's lines will have a mean squared error above the least-squares one by "
            f"**{pred['median']:.3g}** (median) and by at most "
            f"**{pred['q95']:.3g}** with 95% chance (all responses, squared response units, as "
            "in the table below). From the " + pred["model"] + "; covariates bunched in part "
            "of the public range give larger errors.")
    if mcmc:
        text += " The MCMC draw only approximates this target."
    return text


def smallest_epsilon_text(request, target, rows=1, seed=0):
    """The smallest ε whose predicted median excess mean squared error is at most ``target``
    for ``request`` at another ε (its n, number of responses and bounds), as a sentence (with
    the cost per person when one person has ``rows`` rows)."""
    from dpcore.release.accuracy import smallest_linear_regression_epsilon

    n, d, tau, tau_m = request.n, request.manifold.d, request.tau, request.tau_m
    try:
        eps = smallest_linear_regression_epsilon(int(n), int(d), float(target),
                                                 tau=float(tau), tau_m=float(tau_m),
                                                 max_speed=request.max_speed, rng=int(seed))
    except RuntimeError as exc:
        return f"No answer: {exc}"
    if eps is None:
        return (f"No ε up to 1000 brings the median excess mean squared error below "
                f"{target:g} at n = {n:,}.")
    per_person = f" ({rows * eps:.3g} per person with {rows} rows)" if rows > 1 else ""
    return (f"The smallest ε with a median excess mean squared error of at most {target:g} "
            f"is **ε = {eps:g}**{per_person} (n = {n:,}, same bounds).")


def observed_excess(table, method, baseline="Non-private least squares"):
    """A method's mean squared error above the baseline's, over all responses
    (:func:`mse_table`'s last row): the quantity :func:`predicted_error` predicts."""
    return float(table.loc["all responses", method] - table.loc["all responses", baseline])
