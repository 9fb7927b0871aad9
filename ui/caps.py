"""Every size cap of the dashboard, in one table.

Two layers bound what a visitor can ask for:

* the library's resource limits, :mod:`dpcore.settings` (``DPCORE_*`` environment variables:
  replicates, chain length, Monte Carlo samples, sweep cells, rows of a file, ...), enforced
  by the library whoever calls it;
* the dashboard's caps, here: the widgets' upper ends (and the clipping of values read from
  a shared link), which keep each request of a page well under a minute on a shared server
  and its figures readable. They sit below the library's limits.

Pages (``pages/``) and page logic (``ui/logic/``) take every cap from this module; no other
dashboard module defines one (``tests/ui/test_caps.py`` checks). The table :data:`TABLE` lists
each cap with its value, what it bounds and why; :data:`CAPS` maps the names to the values.

The upload size is Streamlit's own setting ``server.maxUploadSize`` (MB of 2**20 bytes; 20 in
``.streamlit/config.toml``, Streamlit's default 200; the environment variable
``STREAMLIT_SERVER_MAX_UPLOAD_SIZE`` or ``--server.maxUploadSize`` override it). Streamlit
rejects larger uploads itself; :func:`upload_max_bytes` reads the same setting so that the
dashboard passes exactly that cap to the library's readers (``max_bytes=`` of
:func:`dpcore.data.load_csv` and :func:`dpcore.data.scan_table`, whose own default is the
library's generous 200 MiB). Only the dashboard reads Streamlit's settings, never ``dpcore``.

Importing this module does not import Streamlit (the page logic stays Streamlit-free);
:func:`upload_limit_mb` imports Streamlit's configuration when it is called.
"""

from __future__ import annotations

from typing import NamedTuple

__all__ = [
    "CAPS",
    "Cap",
    "MIB",
    "TABLE",
    "upload_limit_mb",
    "upload_max_bytes",
    "upload_max_rows",
]

#: Bytes per MB of ``server.maxUploadSize`` (Streamlit counts 2**20 bytes).
MIB = 2**20


class Cap(NamedTuple):
    """One cap of the dashboard.

    Attributes
    ----------
    name : str
        Key in :data:`CAPS`.
    value : int
        The largest value a page accepts.
    bounds : str
        What it bounds (page and widget).
    why : str
        Why this value.
    """

    name: str
    value: int
    bounds: str
    why: str


#: The caps, page by page: name, value, what it bounds, why. Each keeps a request of its page
#: well under a minute on a shared 2-core server.
TABLE: tuple[Cap, ...] = (
    # ---------------------------------------------------------------- Geodesic regression
    Cap("gr_max_n", 500, "Geodesic regression: sample size n of the synthetic data",
        "the non-private fit and the release's work grow with n"),
    Cap("gr_footpoints", 10, "Geodesic regression: private footpoints per release",
        "10 x 10 draws is the papers' setting; each draw costs ε"),
    Cap("gr_vectors", 10, "Geodesic regression: shooting vectors per footpoint",
        "as gr_footpoints"),
    Cap("gr_chain", 5000, "Geodesic regression: MCMC chain length and burn-in (each)",
        "every draw runs a chain this long"),
    Cap("gr_drawn", 25, "Geodesic regression: private geodesics drawn in a figure",
        "more lines hide the fit; the metrics use every draw"),
    # ---------------------------------------------------------------- Budget split
    Cap("sweep_max_n", 1000, "Budget split: a sample size typed into the sizes list",
        "every cell fits and releases at this n"),
    Cap("sweep_sizes", 5, "Budget split: sample sizes per simulation",
        "each size multiplies the cells of the unequal and equal views"),
    Cap("sweep_unequal", 15, "Budget split: unequal splits of the total ε",
        "each split is a cell per size and replicate"),
    Cap("sweep_equal", 12, "Budget split: totals of the equal split", "as sweep_unequal"),
    Cap("sweep_grid", 9, "Budget split: budgets per axis of the heatmap",
        "the heatmap has sweep_grid² cells per replicate"),
    Cap("sweep_replicates", 20, "Budget split: replicates (fresh data set and release each)",
        "multiplies every cell"),
    Cap("sweep_draws", 10, "Budget split: footpoints and vectors per release (each)",
        "10 x 10 is the papers' setting"),
    Cap("sweep_chain", 2000, "Budget split: MCMC chain length and burn-in (each)",
        "chains run in every cell"),
    # ---------------------------------------------------------------- Fréchet mean
    Cap("fm_max_n", 1000, "Fréchet mean: sample size n of the synthetic data",
        "the largest n of the simulation (sim_max_n)"),
    Cap("cloud_draws", 200, "Fréchet mean: private means per mechanism in the preview cloud",
        "every mechanism of the page draws this many"),
    Cap("sim_sizes", 8, "Fréchet mean: sample sizes in the simulation",
        "each size runs every mechanism sim_replicates times"),
    Cap("sim_max_n", 1000, "Fréchet mean: largest sample size in the simulation",
        "the largest of the page's sizes"),
    Cap("sim_replicates", 100, "Fréchet mean: replicates per sample size in the simulation",
        "each replicate is a data set and a release per mechanism"),
    Cap("sens_pairs", 200, "Fréchet mean and Sensitivity: adjacent data sets per sample size",
        "each pair is two non-private estimates"),
    # ---------------------------------------------------------------- Sensitivity
    Cap("sens_max_n", 500, "Sensitivity: largest sample size", "as sens_pairs"),
    Cap("sens_sizes", 4, "Sensitivity: sample sizes compared at once",
        "each size runs sens_pairs adjacent data sets"),
    # ---------------------------------------------------------------- Gaussian DP
    Cap("gd_max_n", 500, "Gaussian DP: sample size n of the released data",
        "the data are synthetic; more adds nothing to the demonstration"),
    Cap("mc_samples", 5000, "Gaussian DP: Monte Carlo samples per centre and repeat",
        "the page also keeps samples x repeats within the library's max_mc_samples"),
    Cap("mc_repeats", 50, "Gaussian DP: Monte Carlo repeats (for the standard error)",
        "as mc_samples"),
    Cap("mc_sigmas", 16, "Gaussian DP: rates σ in a Monte Carlo sweep",
        "paper 004 §4.2's grid σ = k/4, k = 1..16"),
    Cap("utility_replicates", 2000, "Gaussian DP: draws per rate in Gaussian vs Laplace",
        "two mechanisms draw this many per rate"),
    # ---------------------------------------------------------------- Linear regression
    Cap("example_rows", 2000, "Linear regression: rows of the generated example (the page's "
        "slider offers up to 1000)", "the example is made in memory at every change"),
    Cap("upload_rows", 200_000, "Uploads (Geodesic regression, Fréchet mean, Linear "
        "regression): data rows of a file",
        "measured on the 2-core machine (session 8): a strict private S² regression at page "
        "defaults takes about 10 s at n = 2e5 (6.6 s at 1e5, 67 s at 1e6), and the non-private "
        "fit that reruns on a widget change 1.2 s, under the 2 s interactivity target; 20 MiB "
        "(the upload size) holds about 270,000 S² rows. The library allows 1,000,000 "
        "(DPCORE_MAX_ROWS); slower manifolds are bounded by the work budget"),
    Cap("upload_columns", 200, "Linear regression: named columns of an uploaded CSV",
        "the column pickers stay usable; the file's size is capped by the upload limit"),
    Cap("lr_responses", 6, "Linear regression: response columns fitted at once",
        "one line per response in the figure and one row in the MSE table"),
    Cap("setting_chars", 200, "Settings file: characters of one setting's value",
        "settings are short URL values; a longer one is not a setting of this dashboard"),
    # ---------------------------------------------------------------- Privacy ledger
    Cap("rows_per_person", 10_000, "Privacy ledger: rows one person contributes (the "
        "sidebar's field and each entry of a loaded ledger)",
        "group privacy multiplies ε by it: beyond this no budget the pages offer leaves a "
        "useful guarantee per person"),
)

#: Cap name -> value, for the pages and the page logic.
CAPS: dict[str, int] = {cap.name: cap.value for cap in TABLE}


def upload_limit_mb() -> int:
    """Streamlit's upload limit ``server.maxUploadSize`` in MB (of 2**20 bytes).

    Read from Streamlit's configuration (``.streamlit/config.toml``, the environment variable
    ``STREAMLIT_SERVER_MAX_UPLOAD_SIZE`` or the command line), the setting Streamlit applies
    to every ``st.file_uploader``.

    Returns
    -------
    int
    """
    import streamlit as st  # only here: importing ui.caps stays Streamlit-free

    return int(st.get_option("server.maxUploadSize"))


def upload_max_bytes() -> int:
    """The upload limit in bytes, the ``max_bytes=`` the dashboard passes to the library's
    readers (:func:`dpcore.data.load_csv`, :func:`dpcore.data.scan_table`)."""
    return upload_limit_mb() * MIB


def upload_max_rows() -> int:
    """The most data rows an uploaded file may have: the dashboard's ``upload_rows`` cap, or
    the library's own limit (``DPCORE_MAX_ROWS``) when that is lower."""
    from dpcore.settings import get_limits

    return min(CAPS["upload_rows"], int(get_limits().max_rows))
