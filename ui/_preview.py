"""Render every figure builder on synthetic data, to HTML and (optionally) PNG screenshots.

A development aid, not part of the app: it lets a person look at each figure without starting
Streamlit. Data come from :mod:`dpcore.data`; the "private" draws are stand-ins made by
perturbing the non-private fit with tangent noise (the private releases live elsewhere), so the
pictures show layout and styling, not a real mechanism.

Usage::

    .venv/bin/python -m ui._preview [--out /tmp/ui_preview] [--no-png] [--only NAME ...]

PNGs are taken with headless Chromium through Playwright (``/usr/bin/chromium``); plotly.js
is embedded in each HTML file, so no network is needed.
"""

from __future__ import annotations

import argparse
import warnings
from pathlib import Path

import numpy as np
from scipy.stats import norm

from dpcore.data import make_mean_data, make_regression_data
from dpcore.data.synthetic import kendall_template
from dpcore.learning import GeodesicRegression
from dpcore.manifolds import SPD, Euclidean, KendallShape, Sphere

from . import figures

CHROMIUM = "/usr/bin/chromium"
WIDTH = 1100


def _fake_private(manifold, p, v, n_draws, rng, scale_p, scale_v):
    """Stand-in private parameters: (p, v) moved by Gaussian tangent noise."""
    out = []
    for _ in range(n_draws):
        p_new = manifold.exp(p, scale_p * manifold.random_tangent(p, rng))
        v_new = manifold.transport(p, p_new, v + scale_v * manifold.random_tangent(p, rng))
        out.append((p_new, manifold.proj_tangent(p_new, v_new)))
    return out


def _fit(manifold, x, y):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return GeodesicRegression(manifold).fit(x, y)


def build_figures(seed=0):
    """All preview figures, keyed by a short name.

    Parameters
    ----------
    seed : int
        Seed of every random draw.

    Returns
    -------
    dict of str to plotly.graph_objects.Figure
    """
    rng = np.random.default_rng(seed)
    t = np.linspace(0.0, 1.0, 200)
    figs = {}

    # Sphere regression.
    s2 = Sphere(2)
    data = make_regression_data(s2, 60, noise=0.005, rng=rng)
    model = _fit(s2, data.x, data.y)
    p, v = model.footpoint_, model.shooting_vector_
    private = [figures.geodesic_curve(s2, pp, vv, t)
               for pp, vv in _fake_private(s2, p, v, 4, rng, 0.15, 0.3)]
    figs["sphere_regression"] = figures.sphere_regression_figure(
        data.y, figures.geodesic_curve(s2, p, v, t), private,
        generating_curve=data.true_points(t), data_x=data.x,
        curve_x=np.linspace(*model.covariate_range_, t.size),
    )
    many = [figures.geodesic_curve(s2, pp, vv, t)
            for pp, vv in _fake_private(s2, p, v, 12, rng, 0.15, 0.3)]
    figs["sphere_regression_many"] = figures.sphere_regression_figure(
        data.y, figures.geodesic_curve(s2, p, v, t), many,
        title="Geodesic regression on S² (12 private draws)",
    )

    # Sphere Fréchet means.
    ball = make_mean_data(s2, 80, radius=np.pi / 8, rng=rng)
    north = np.array([0.0, 0.0, 1.0])
    centre = ball.mean(axis=0) / np.linalg.norm(ball.mean(axis=0))
    clouds = {}
    for label, sigma in (("Riemannian Laplace", 0.12), ("KNG", 0.08),
                         ("Ambient Laplace (projected)", 0.2)):
        base = np.broadcast_to(centre, (100, 3))
        clouds[label] = s2.exp(base, sigma * s2.random_tangent(base, rng))
    figs["sphere_points"] = figures.sphere_points_figure(
        clouds, data=ball, true_point=north, nonprivate_point=centre,
    )

    # SPD(2).
    spd = SPD(2)
    sdata = make_regression_data(spd, 40, noise=0.05, rng=rng)
    smodel = _fit(spd, sdata.x, sdata.y)
    sp, sv = smodel.footpoint_, smodel.shooting_vector_
    draws = _fake_private(spd, sp, sv, 3, rng, 0.1, 0.2)
    xs = np.linspace(0.0, 1.0, 6)
    figs["spd_ellipses"] = figures.spd_ellipses_figure(
        xs, spd.geodesic(sp, sv, xs), [spd.geodesic(pp, vv, xs) for pp, vv in draws],
        generating_mats=sdata.true_points(xs),
    )
    figs["spd_cone"] = figures.spd_cone_figure(
        sdata.y, spd.geodesic(sp, sv, t), [spd.geodesic(pp, vv, t) for pp, vv in draws],
        generating_curve=sdata.true_points(t),
    )

    # Kendall shapes.
    ks = KendallShape(8)
    kdata = make_regression_data(ks, 50, rng=rng)
    kmodel = _fit(ks, kdata.x, kdata.y)
    kp, kv = kmodel.footpoint_, kmodel.shooting_vector_
    kdraws = _fake_private(ks, kp, kv, 3, rng, 0.03, 0.05)
    ref = kendall_template(8)
    kx = np.array([0.0, 0.5, 1.0])
    figs["kendall_shapes"] = figures.kendall_shapes_figure(
        kx, ks.to_landmarks(ks.geodesic(kp, kv, kx), reference=ref),
        [ks.to_landmarks(ks.geodesic(pp, vv, kx), reference=ref) for pp, vv in kdraws],
        generating_landmarks=ks.to_landmarks(kdata.true_points(kx), reference=ref),
    )

    # Euclidean R^3.
    r3 = Euclidean(3)
    edata = make_regression_data(r3, 60, noise=0.3, rng=rng)
    emodel = _fit(r3, edata.x, edata.y)
    grid = np.linspace(0.0, 1.0, 50)
    ep, ev = emodel.footpoint_, emodel.shooting_vector_
    edraws = _fake_private(r3, ep, ev, 3, rng, 0.2, 0.4)
    figs["euclidean_regression"] = figures.euclidean_regression_figure(
        edata.x, edata.y, r3.geodesic(ep, ev, grid),
        [r3.geodesic(pp, vv, grid) for pp, vv in edraws],
        x_grid=grid, generating_lines=edata.true_points(grid),
    )

    figs.update(_study_figures(rng))
    return figs


def _study_figures(rng):
    """The studies' figures (budget sweep, heatmaps, sensitivity histogram, Gaussian DP
    curves) on made-up numbers drawn from ``rng``."""
    figs = {}
    # Budget sweep with bands.
    eps = np.geomspace(0.02, 2.0, 12)
    series, refs = {}, {}
    for n in (20, 50, 100):
        reps = np.repeat(eps, 10)
        level = np.log(0.01 + 4.0 / (n * reps) ** 2)
        vals = level + 0.3 * rng.standard_normal(reps.size)
        series[f"n = {n}"] = figures.mean_and_se(reps, vals)
        refs[f"n = {n}"] = np.log(0.01 + 0.5 / n)
    figs["band"] = figures.band_figure(
        series, reference=refs, x_title="footpoint budget ε_p (total ε = 2)", log_x=True,
        title="Unequal budget split at total ε = 2",
    )

    # Heatmap over (eps_p, eps_v).
    grid_p = np.geomspace(0.05, 2.0, 10)
    grid_v = np.geomspace(0.05, 2.0, 10)
    z = np.log(0.02 + 1.0 / grid_p[:, None] ** 2 / 400 + 3.0 / grid_v[None, :] ** 2 / 400)
    z = z + 0.05 * rng.standard_normal(z.shape)
    figs["heatmap"] = figures.heatmap_figure(z, grid_v, grid_p, total=1.0, log_axes=True)
    figs["heatmap_linear"] = figures.heatmap_figure(
        z, np.linspace(0.1, 2, 10), np.linspace(0.1, 2, 10), total=1.5,
        title="Utility over a linear budget grid",
    )

    # Sensitivity ratio histograms.
    figs["histogram"] = figures.histogram_figure({
        "Sphere S²": 1.0 + rng.gamma(2.0, 0.6, 500),
        "SPD(2)": 1.0 + rng.gamma(3.0, 0.8, 500),
    })

    # Gaussian DP curves.
    sigma = np.geomspace(0.2, 5.0, 25)
    mc_sigma = sigma[::3]
    mu_r = 1.0 / sigma
    mu_s1 = 1.0 / sigma * (1 - 0.3 * np.exp(-sigma))
    mu_mc = 1.0 / mc_sigma * (1 - 0.3 * np.exp(-mc_sigma)) + 0.02 * rng.standard_normal(9)
    figs["curves_mu_sigma"] = figures.curves_figure(
        {"R (µ = 1/σ)": (sigma, mu_r), "S¹ exact": (sigma, mu_s1),
         "S¹ Monte Carlo": (mc_sigma, mu_mc, np.full(mc_sigma.size, 0.05))},
        styles={"R (µ = 1/σ)": {"dash": "dash"}, "S¹ Monte Carlo": {"mode": "markers"}},
        x_title="noise scale σ (sensitivity 1)", y_title="µ (GDP parameter)",
        title="µ against σ", log_x=True, log_y=True,
    )
    alpha = np.linspace(0.0, 1.0, 201)
    trade = {f"µ = {mu:g}": (alpha, norm.cdf(norm.ppf(1 - alpha) - mu)) for mu in (0.5, 1, 2)}
    trade["no privacy loss"] = (alpha, 1 - alpha)
    figs["curves_tradeoff"] = figures.curves_figure(
        trade, styles={"no privacy loss": {"color": "#999999", "dash": "dot"}},
        x_title="type I error α", y_title="type II error β", title="Trade-off curves G_µ",
        square=True, height=560,
    )
    e = np.linspace(0.0, 5.0, 200)
    prof = {f"µ = {mu:g}": (e, norm.cdf(-e / mu + mu / 2) - np.exp(e) * norm.cdf(-e / mu - mu / 2))
            for mu in (0.5, 1, 2)}
    figs["curves_delta"] = figures.curves_figure(
        prof, x_title="ε", y_title="δ(ε)", title="Privacy profiles δ_µ(ε)", log_y=True,
        y_range=(-8, 0),
    )
    return figs


def write_html(figs, out_dir):
    """Write each figure to ``<out_dir>/<name>.html`` with plotly.js embedded.

    Returns
    -------
    dict of str to Path
    """
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    paths = {}
    for name, fig in figs.items():
        path = out_dir / f"{name}.html"
        fig.write_html(path, include_plotlyjs=True, full_html=True)
        paths[name] = path
    return paths


def screenshot(paths, figs, out_dir, executable_path=CHROMIUM, width=WIDTH, suffix=""):
    """PNG screenshot of each HTML file with headless Chromium (needs Playwright).

    ``width`` is the viewport width in px; ``suffix`` is appended to the PNG names.

    Returns
    -------
    list of Path
    """
    from playwright.sync_api import sync_playwright

    shots = []
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=executable_path,
                                     args=["--no-sandbox", "--disable-gpu"])
        try:
            for name, path in paths.items():
                height = int(figs[name].layout.height or 500) + 20
                page = browser.new_page(viewport={"width": width, "height": height})
                page.goto(path.resolve().as_uri())
                page.wait_for_selector(".main-svg")
                page.wait_for_timeout(1200)  # WebGL scenes draw after the SVG layer
                png = Path(out_dir) / f"{name}{suffix}.png"
                page.screenshot(path=str(png))
                page.close()
                shots.append(png)
        finally:
            browser.close()
    return shots


def main(argv=None):
    """Command-line entry point."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default="/tmp/ui_preview")
    parser.add_argument("--no-png", action="store_true")
    parser.add_argument("--only", nargs="*")
    parser.add_argument("--width", type=int, default=WIDTH, help="viewport width in px")
    args = parser.parse_args(argv)
    figs = build_figures()
    if args.only:
        figs = {k: v for k, v in figs.items() if k in args.only}
    paths = write_html(figs, args.out)
    for path in paths.values():
        print(path)
    if not args.no_png:
        suffix = "" if args.width == WIDTH else f"_w{args.width}"
        for png in screenshot(paths, figs, args.out, width=args.width, suffix=suffix):
            print(png)


if __name__ == "__main__":
    main()
