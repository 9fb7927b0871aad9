"""The dashboard's pages, in navigation order: the one list every consumer reads.

``app.py`` builds ``st.navigation`` from :data:`PAGES`, the landing page lists their summaries,
``tests/app/test_app_smoke.py`` and the browser tests (``tests/browser``) open each of them, and
``benchmarks/bench_pages.py`` times their default scenarios. A new page is its file in ``pages/``
(plus its logic module in ``ui/`` if it has one) and one :class:`PageSpec` line here;
``tests/ui/test_registry.py`` checks that every ``pages/*.py`` file is registered exactly once.

No Streamlit import: tests and benchmarks read this module without a running app.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

PAGES_DIR = Path(__file__).resolve().parent.parent / "pages"


@dataclass(frozen=True)
class PageSpec:
    """One page of the dashboard.

    Attributes
    ----------
    file : str
        File name in ``pages/``.
    title : str
        Title in the navigation menu and the browser tab.
    icon : str
        Navigation icon (a Streamlit ``:material/...:`` name).
    url_path : str
        URL pathname (``/<url_path>``; the first page is also served at ``/``); also the name
        of the page's screenshot in ``assets/screenshots/``.
    name : str
        Short name: the prefix of the page's widget and URL query keys, a word
        ``BENCH_PAGES`` accepts (``BENCH_PAGES=gr,fm make bench``) and the test id.
    summary : str
        What the page shows, one line in the landing page's table ("" for the landing page).
    heading : str, optional
        The page's ``st.title`` when it differs from ``title``.
    run_button : str, optional
        Widget key of the button that runs the page's default scenario (Release / Run), if any.
    done_button : str, optional
        Widget key of the download button that appears once that run has finished.
    chart_on_open : bool
        Whether the page draws a chart as soon as it opens (before any button is pressed):
        such pages have the browser compile and run the chart library while the app boots
        (:func:`ui.serve.preload_chart_library`) and the server's warm-up runs them
        (:func:`ui.serve.warm_up_pages`).
    warm_up_last : bool
        Whether the warm-up runs this page after the others (a page whose first run costs
        most of the warm-up's CPU budget would otherwise keep the pages after it cold).
    """

    file: str
    title: str
    icon: str
    url_path: str
    name: str
    summary: str
    heading: str | None = None
    run_button: str | None = None
    done_button: str | None = None
    chart_on_open: bool = True
    warm_up_last: bool = False

    @property
    def path(self) -> Path:
        """Absolute path of the page file."""
        return PAGES_DIR / self.file

    @property
    def page_title(self) -> str:
        """The title the page shows (its ``st.title``)."""
        return self.heading or self.title


#: Every page in navigation order; the first one is the landing page (served at ``/``).
PAGES: tuple[PageSpec, ...] = (
    PageSpec("home.py", "Home", ":material/home:", "home", "home", "",
             heading="Private statistics on manifolds", chart_on_open=False),
    PageSpec(
        "geodesic_regression.py", "Geodesic regression", ":material/timeline:",
        "geodesic_regression", "gr",
        "Fit a geodesic to synthetic, example or uploaded data on S², SPD(2), Kendall shape "
        "space or R^d, then release private footpoints and shooting vectors (ε_p, ε_v) on a "
        "button: private geodesics drawn beside the non-private fit, MSE, footpoint and angle "
        "errors, sensitivities, σ's and sampler diagnostics",
        run_button="gr_release_button", done_button="gr_download_release"),
    PageSpec(
        "budget_split.py", "Budget split", ":material/pie_chart:", "budget_split", "bs",
        "A simulation of how splitting a total ε between footpoint (ε_p) and shooting vector "
        "(ε_v) changes the error, for several sample sizes: unequal and equal splits, and a "
        "heatmap over (ε_p, ε_v) with the best split for a chosen total",
        # Its default simulation is drawn on opening (about 3 CPU s the first time: last in the
        # warm-up, whose budget would otherwise end on it).
        run_button="bs_run", done_button="bs_download", warm_up_last=True),
    PageSpec(
        "frechet_mean.py", "Fréchet mean", ":material/center_focus_strong:", "frechet_mean",
        "fm",
        "Riemannian Laplace, KNG, Riemannian Gaussian and ambient Euclidean Laplace on S² or "
        "SPD(k) at one ε: clouds of private means, error against n, empirical sensitivity "
        "against its bound, and one private release",
        run_button="fm_release", done_button="fm_download_release"),
    PageSpec(
        "gaussian_dp.py", "Gaussian DP", ":material/blur_on:", "gaussian_dp", "gd",
        "µ against σ on the circle (exact and Monte Carlo) and on the line, Gaussian versus "
        "Laplace at equal µ on S², trade-off curves, the privacy profile δ(ε), an ε ↔ µ "
        "converter and one Gaussian-DP release",
        run_button="gd_release", done_button="gd_download_release"),
    PageSpec(
        "sensitivity.py", "Sensitivity", ":material/tune:", "sensitivity", "se",
        "Theory / empirical sensitivity ratios of geodesic regression on adjacent data sets, "
        "and the Jacobi fields (cos, 1, cosh / sin, 1, sinh) behind the curvature terms"),
    PageSpec(
        "linear_regression.py", "Linear regression", ":material/show_chart:",
        "linear_regression", "lr",
        "The Euclidean case on an uploaded CSV or a generated example: private and "
        "least-squares lines per response, an MSE table, and diffprivlib's LinearRegression "
        "at the same ε",
        run_button="lr_release", done_button="lr_download_release"),
)

#: The landing page.
HOME = PAGES[0]


def page(file_or_name: str) -> PageSpec:
    """The registered page with this file name (``"frechet_mean.py"``) or short name."""
    for spec in PAGES:
        if file_or_name in (spec.file, spec.name):
            return spec
    raise KeyError(f"No registered page {file_or_name!r}; see ui/registry.py.")


__all__ = ["HOME", "PAGES", "PAGES_DIR", "PageSpec", "page"]
