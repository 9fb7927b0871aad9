"""Page: Gaussian differential privacy (GDP) of the Riemannian Gaussian mechanism.

µ against σ on the circle (exact and Monte Carlo) and on the line, Gaussian vs Laplace at
equal µ on S², the trade-off curve and privacy profile of µ-GDP, an ε ↔ µ converter and one
Gaussian-DP release of a synthetic mean on S².
"""

from __future__ import annotations

import json
import math

import numpy as np
import streamlit as st

from dpcore import visualization as V
from dpcore.data import make_mean_data, to_csv
from dpcore.learning import frechet_mean
from dpcore.manifolds import Sphere
from dpcore.privacy import (
    calibrate_sigma,
    compose_gdp,
    eps_to_mu,
    gdp_mu_circle,
    gdp_mu_monte_carlo,
    mu_to_eps,
)
from dpcore.settings import get_limits
from ui import manifolds as M
from ui.caps import CAPS
from ui.figures import show_figure
from ui.first_paint import chart_first
from ui.logic import common as C
from ui.logic import export as X
from ui.logic import gaussian_dp as L
from ui.logic import privacy_text as T
from ui.progress import show_work
from ui.release_panel import release_panel
from ui.session import (
    PageSettings,
    export_buttons,
    formula_notes,
    lazy_expander,
    rows_per_person,
    session_memo,
)
from ui.widgets import NUMBER_WIDTH, lazy_tabs, numbers_row

PAGE = "Gaussian DP"
SIGMA_GRID = np.arange(1, 17) / 4  # paper 004 §4.2: σ = k/4, k = 1..16
MC_SIGMAS = SIGMA_GRID[1::2]  # Monte Carlo at every other rate
MC_SAMPLES = (200, 500, 1000, 2000, 5000)  # Monte Carlo samples per centre and repeat
SIM_SIZES = (5, 10, 20, 50, 100)  # sample sizes of the equal-µ simulation
UTILITY_MUS = np.array([0.1, 0.2, 0.5, 1.0, 2.0, 5.0])  # rates chosen as sigma = Delta / mu
RELEASE_RADIUS = M.spec("sphere").radius  # π/8, the public data ball of the release
LAST = "gd_last_release"
MODES = ("sigma", "mu")
TARGET_QUANTILES = ("median", "q95")
#: Widgets drawn inside the lazy Monte Carlo and simulation expanders (kept while closed).
MC_KEYS = ("gd_mc_n", "gd_mc_r")
SIM_KEYS = ("gd_sim_n", "gd_sim_reps")
#: The converter's widgets (kept while its tab is closed).
CONV_KEYS = ("gd_conv_eps", "gd_conv_mu", "gd_conv_k")
#: The tabs under the rate and its µ; only the open one is built.
EXPLORE_TABS = ("ε ↔ µ converter", "Gaussian vs Laplace at equal µ on S² (simulation)",
                "What µ means: trade-off curve and privacy profile")
# Widget starting values (URL, the session's copy for page switches, or the default); the
# URL key of every setting is its widget key.
settings_state = PageSettings("gd")
init = settings_state.init

table_cached = st.cache_data(show_spinner=False, max_entries=64)(L.mu_sigma_table)
utility_cached = st.cache_data(show_spinner=False, max_entries=32)(L.gaussian_laplace_utility)


@st.cache_data(show_spinner=False, max_entries=256)
def circle_mu(sigma, sensitivity):
    """Exact µ on S¹ (paper 004 Algorithm 1)."""
    return gdp_mu_circle(sigma, sensitivity)


@st.cache_data(show_spinner=False, max_entries=256)
def circle_sigma(mu, sensitivity):
    """Smallest σ on S¹ meeting a target µ (bisection on the exact µ)."""
    return calibrate_sigma(mu, sensitivity, Sphere(1), rtol=1e-6)


@st.cache_data(show_spinner=False, max_entries=256)
def sphere_mu(sigma, sensitivity, n_samples, repeats):
    """µ on S² by Monte Carlo (paper 004 Algorithm 2), with its standard error."""
    return gdp_mu_monte_carlo(Sphere(2), sigma, sensitivity, n_samples=n_samples, n_eps=500,
                              repeats=repeats, rng=0)


@st.cache_data(show_spinner=False, max_entries=32)
def release_data(n, seed, radius):
    return make_mean_data(Sphere(2), n, radius=radius, rng=seed)


def release_event(request):
    """The privacy event the release records (its µ: the Monte Carlo estimate at σ plus 3
    standard errors), computed once per request in this session (it runs the mechanism on
    a public model data set, so it is not shared between sessions through a cache)."""
    return session_memo("gd_release_events", request, request.event, max_entries=8)


def page_request(sigma, sensitivity):
    """The page's one release request (:func:`ui.logic.gaussian_dp.release_request`): σ and Δ
    from the top, n from the release section's slider (its starting value given here, read
    from the session before the slider is drawn). The accuracy box, the cost, the work, the
    release and the exported script all read it."""
    init("gd_rel_n", "gd_rel_n", 10, int, bounds=(10, CAPS["gd_max_n"]))
    return L.release_request(int(st.session_state["gd_rel_n"]), float(sigma),
                             float(sensitivity))


@st.cache_data(show_spinner=False, max_entries=64)
def largest_sigma(target_degrees, quantile):
    return L.largest_sigma_for_error(target_degrees, quantile)


def teaching_notes():
    st.markdown(
        "A mechanism is **µ-GDP** when telling two adjacent data sets apart from its output is "
        "at least as hard as telling N(0, 1) from N(µ, 1). Equivalently it is (ε, δ_µ(ε))-DP "
        "for every ε ≥ 0:"
    )
    st.latex(r"\delta_\mu(\varepsilon) = \Phi\Big(-\frac{\varepsilon}{\mu} + \frac{\mu}{2}\Big)"
             r" - e^{\varepsilon}\,\Phi\Big(-\frac{\varepsilon}{\mu} - \frac{\mu}{2}\Big)")
    st.markdown("and no test between the two data sets beats the trade-off curve")
    st.latex(r"G_\mu(\alpha) = \Phi\big(\Phi^{-1}(1-\alpha) - \mu\big)")
    st.markdown("The Riemannian Gaussian mechanism releases a draw from")
    st.latex(r"p(y) \propto \exp\!\Big(-\frac{d(\eta, y)^2}{2\sigma^2}\Big),\qquad "
             r"\text{on } \mathbb{R}:\ \mu = \Delta/\sigma")
    st.markdown("An ε-DP mechanism (e.g. Laplace) is µ-GDP with")
    st.latex(r"\mu = -2\,\Phi^{-1}\big(1/(1+e^{\varepsilon})\big)")
    st.markdown("Composition: k mechanisms with parameters µᵢ together are √(Σ µᵢ²)-GDP.")


def assumptions_box(sensitivity):
    rows = [
        ("Sensitivity", f"Δ = {sensitivity:g} is the largest distance between the statistic on "
                        "adjacent data sets (an arc length on S¹; at most π)."),
        ("Homogeneity", "the manifold's isometries act transitively, so the normalizing "
                        "constant does not depend on the centre and µ depends only on σ and Δ "
                        "(paper 004 Thm 4.1)."),
        ("Exact vs Monte Carlo", "µ on S¹ is exact (Algorithm 1); on S² it is a Monte Carlo "
                                 "estimate (Algorithm 2) with a standard error, a statistical "
                                 "rather than a proven statement."),
        ("ε ↔ µ", "an ε-DP mechanism is µ(ε)-GDP; the converse direction gives the ε at "
                  "which Laplace is compared with Gaussian."),
        ("Release below", "the σ and Δ set above: synthetic S² data in the public ball about "
                          "the north pole whose radius makes the mean's proven sensitivity "
                          "equal Δ; its µ on S² is a Monte Carlo estimate plus 3 standard "
                          "errors; OS entropy."),
    ]
    with st.container(border=True):
        st.markdown("**Assumptions in force**")
        st.markdown(C.assumptions_markdown(rows))


def converter_init():
    """Starting values of the converter's fields, given on every run (its tab may be closed:
    they stay in the URL and the session)."""
    init("gd_conv_eps", "gd_conv_eps", 1.0, float, bounds=(0.0, 50.0))
    init("gd_conv_mu", "gd_conv_mu", 1.0, float, bounds=(0.0, 20.0))
    init("gd_conv_k", "gd_conv_k", 4, int, bounds=(1, 10_000))


def converter():
    cols = st.columns(3)
    eps = cols[0].number_input("ε (pure DP)", min_value=0.0, max_value=50.0, step=0.1,
                               key="gd_conv_eps")
    cols[0].metric("Equivalent µ", f"{eps_to_mu(eps):.4g}",
                   help="µ = −2 Φ⁻¹(1/(1 + e^ε)): every ε-DP mechanism is µ-GDP.")
    mu = cols[1].number_input("µ (Gaussian DP)", min_value=0.0, max_value=20.0, step=0.1,
                              key="gd_conv_mu")
    cols[1].metric("ε with this µ", f"{mu_to_eps(mu):.4g}",
                   help="ε = log(Φ(µ/2) / Φ(−µ/2)), the inverse of the conversion.")
    k = cols[2].number_input("Compose k releases at this µ", min_value=1, max_value=10_000,
                             step=1, key="gd_conv_k")
    cols[2].metric(f"µ of {k} releases", f"{compose_gdp([mu] * int(k)):.4g}",
                   help="GDP composes as √(Σ µᵢ²) = µ √k.")


def release_section(request, sensitivity):
    """The release of ``request`` (:func:`page_request`): its data, cost, work, run and
    record, and its exported script."""
    st.subheader("Try it: one Gaussian-DP release of a Fréchet mean on S²")
    cols = st.columns([1, 1, 2])
    init("gd_rel_seed", "gd_rel_seed", 0, int, bounds=(0, 10**6))
    n = cols[0].slider("Sample size n", 10, CAPS["gd_max_n"], key="gd_rel_n")
    seed = cols[1].number_input("Seed of the synthetic data", 0, 10**6, key="gd_rel_seed")
    sigma, radius = request.sigma, request.radius
    y = release_data(int(n), int(seed), radius)
    cols[2].markdown(
        f"The release uses the **σ = {sigma:.4g}** and **Δ = {sensitivity:g}** set at the top. "
        f"Synthetic data (paper 001 protocol) lie in a public cap of radius r = {radius:.3g} "
        f"rad about the north pole, chosen so that the mean of n = {n} points has proven "
        f"sensitivity 2r(2 − h)/(nh) = Δ. Its µ on S² is estimated by Monte Carlo (plus 3 "
        "standard errors) and recorded in the privacy ledger, where µ's compose as √(Σ µᵢ²)."
    )
    st.download_button("Download data", to_csv(Sphere(2), y),
                       file_name=f"gaussian_dp_sphere_n{n}_seed{seed}.csv", mime="text/csv",
                       key="gd_download_data", on_click="ignore")
    key = f"{n}-{seed}-{sigma}-{sensitivity}"
    mu_hat, mu_se = sphere_mu(float(sigma), float(sensitivity), 1000, 20)
    if not (np.isfinite(mu_hat) and np.isfinite(mu_se)):
        st.warning("At this σ the Monte Carlo cannot resolve µ on S² (see the metric at the "
                   "top), so no guarantee can be stated for a release: increase σ.")
        return
    # S² is curved: its µ is a Monte Carlo estimate (approximately private, as labelled).
    work, work_ok = L.release_work(request)
    entry = release_panel(
        PAGE, request, lambda bar: (request.run(y, progress=bar), {"y": y}), key="gd",
        signature=key, work=work, work_ok=work_ok, event=release_event(request),
        label="Estimating µ on S² and drawing one private mean", button="gd_release",
        run="gd_run", last=LAST, on_page="lower n or raise σ.")
    last = st.session_state.get(LAST)
    if entry is not None:
        rel = entry["release"]
        value = np.asarray(rel.values["mean"])[0]
        mean = frechet_mean(Sphere(2), y)
        cols = st.columns(4)
        cols[0].metric("Guarantee", f"µ = {rel.mu:.3g}-GDP")
        cols[1].metric("σ (from the top)", f"{rel.sigma['mean']:.4g}")
        cols[2].metric("Sensitivity Δ", f"{rel.sensitivity['mean']:.4g}")
        dist = float(Sphere(2).dist(mean, value))
        pred = L.predicted_release_error(request)  # 3 ms: not cached
        cols[3].metric("Distance to the non-private mean", f"{math.degrees(dist):.3g}°",
                       help=f"{dist:.4g} rad; predicted before the release: median "
                            f"{pred['median_deg']:.3g}°, 95% within {pred['q95_deg']:.3g}°.")
        st.code(np.array2string(value, precision=5), language=None)
        st.caption(f"Label: {rel.label}.")
        st.download_button("Download release", json.dumps(rel.to_dict(), indent=2),
                           file_name="gaussian_dp_release.json", mime="application/json",
                           key="gd_download_release", on_click="ignore")
    elif last:
        st.info("The settings changed since the last release (it stays in the ledger).")
    export_section(request, sensitivity, int(seed))


def export_section(request, sensitivity, seed):
    """This release (``request``) as a script or notebook that reproduces it with dpcore
    alone."""
    # Built only once opened: its caption and two download buttons (and the script and
    # notebook they hold) are not made on every run, nor drawn with the first plot.
    box = lazy_expander("Take it with you: this scenario as a Python script or notebook",
                        "gd_export_open")
    if box is None:
        return
    with box:
        st.caption("Public settings only (σ, Δ, n, the data seed and the derived radius). The "
                   "release draws from OS entropy; set RELEASE_SEED for a reproducible demo.")
        script = X.gaussian_dp_script(request, sensitivity=sensitivity, seed=seed)
        export_buttons(script, "gaussian_dp", "gd")


def accuracy_box(request, sensitivity):
    """Predicted error of the release below (``request``; only its σ enters: the exact radial
    law), and its inverse."""
    sigma = request.sigma
    pred = L.predicted_release_error(request)  # 3 ms: not cached
    with st.container(border=True):
        st.markdown("**Accuracy before release** (the release at the bottom of the page)")
        # One under the other: their labels fit half a page.
        st.metric("Predicted median error", f"{pred['median_deg']:.3g}°",
                  help=f"{pred['median']:.4g} rad: half of the releases land closer to the "
                       "non-private mean.")
        st.metric("95% of releases within", f"{pred['q95_deg']:.3g}°",
                  help=f"{pred['q95']:.4g} rad.")
        st.caption(
            f"Computed from σ = {sigma:.4g} alone, before anything is spent: the distance "
            "between a Riemannian Gaussian draw and its centre has the exact density "
            "∝ exp(−ρ²/(2σ²)) sin ρ on S², whatever the data. Error unit: the great-circle "
            "distance to the non-private mean, in degrees.")
        c1, c2 = st.columns(2)
        target = c1.number_input("Target error (degrees)", 0.1, 179.0, step=1.0,
                                 key="gd_target")
        which = c2.radio("for the", TARGET_QUANTILES, horizontal=True, key="gd_target_q",
                         format_func={"median": "median", "q95": "95% radius"}.get)
        c3 = st.container()
        best = largest_sigma(float(target), which)
        if best is None:
            c3.warning("No σ ≥ 1e-4 reaches this target.")
        else:
            mu_b, _ = sphere_mu(float(best), float(sensitivity), 1000, 20)
            mu_text = (f"µ on S² ≈ {mu_b:.3g} at the Δ above (Monte Carlo)"
                       if np.isfinite(mu_b) else "µ on S² too large for the Monte Carlo "
                       "to resolve at the Δ above")
            c3.metric("Largest σ for this target", f"{best:.3g}", help=mu_text)
            c3.caption(f"The smallest µ (most private) meeting the target: {mu_text}.")


def rate_settings():
    """Starting values of the left column's widgets (σ or a target µ, Δ, the accuracy box's
    target), given before the chart on the right is drawn: the page reads them from the session
    and draws their widgets after the chart (the browser gets the chart first)."""
    init("gd_mode", "gd_mode", "sigma", str, MODES)
    init("gd_delta", "gd_delta", 1.0, float, bounds=(0.05, 3.0))
    # Both of the rate and the target µ: the one not shown keeps its value (and a shared
    # link's) for when the mode changes.
    init("gd_sigma", "gd_sigma", 1.0, float, bounds=(0.05, 4.0))
    init("gd_mu", "gd_mu", 1.0, float, bounds=(0.1, 5.0))
    init("gd_target", "gd_target", 10.0, float, bounds=(0.1, 179.0))
    init("gd_target_q", None, "median", str, TARGET_QUANTILES)  # not in the URL (as before)


def rate_values():
    """(σ, Δ, µ on S¹) from the values the rate widgets hold (a user's change included: it is
    in the session before the run starts), read before the widgets are drawn."""
    ss = st.session_state
    sensitivity = ss["gd_delta"]
    if ss["gd_mode"] == "sigma":
        sigma = ss["gd_sigma"]
    else:
        with st.spinner("Calibrating σ on S¹ …"):
            sigma = circle_sigma(float(ss["gd_mu"]), float(sensitivity))
    return sigma, sensitivity, circle_mu(float(sigma), float(sensitivity))


def rate_and_mu(sigma, sensitivity, mu_circle):
    """The widgets of the rate σ (or a target µ) and the sensitivity Δ (their values read by
    :func:`rate_values`), with µ on S¹, R and S² and the equivalent ε."""
    with st.container(border=True):
        st.subheader("Rate and sensitivity")
        mode = st.radio("Set", MODES, format_func={"sigma": "the rate σ", "mu": "a target µ"}.get,
                        horizontal=True, key="gd_mode")
        st.slider("Sensitivity Δ (arc length)", 0.05, 3.0, step=0.05, key="gd_delta")
        if mode == "sigma":
            st.slider("Rate σ", 0.05, 4.0, step=0.05, key="gd_sigma")
        else:
            st.slider("Target µ", 0.1, 5.0, step=0.05, key="gd_mu")
        st.caption("On S¹: " + T.mu_reading(mu_circle, rows=rows_per_person()))
    mu_hat, mu_se = sphere_mu(float(sigma), float(sensitivity), 1000, 20)
    row = numbers_row()
    row.metric("Rate σ", f"{sigma:.4g}", width=NUMBER_WIDTH,
               help="Calibrated on S¹ for the target µ" if mode == "mu" else None)
    row.metric("µ on S¹ (exact)", f"{mu_circle:.4g}", width=NUMBER_WIDTH)
    row.metric("µ on R (Δ/σ)", f"{sensitivity / sigma:.4g}", width=NUMBER_WIDTH)
    if np.isfinite(mu_hat) and np.isfinite(mu_se):
        row.metric("µ on S² (Monte Carlo)", f"{mu_hat:.3g}", width=NUMBER_WIDTH,
                   help=f"Paper 004 Algorithm 2 with 20 repeats of 1000 samples: "
                        f"± {2 * mu_se:.2g} (2 standard errors).")
    else:
        # The two sample clouds do not overlap at all: the estimated privacy profile is 1 at
        # ε = 0 and µ is beyond what 20 x 1000 samples can resolve.
        row.metric("µ on S² (Monte Carlo)", "too large", width=NUMBER_WIDTH,
                   help="At this σ the Monte Carlo samples of the two neighbouring "
                        "releases never overlap, so Algorithm 2 cannot resolve µ (it is "
                        "large: compare µ on R = Δ/σ). Increase σ to estimate it.")
    row.metric("ε with the same µ", f"{mu_to_eps(mu_circle):.3g}", width=NUMBER_WIDTH,
               help="The ε-DP budget whose GDP conversion equals µ on S¹.")
    st.caption(L.equal_mu_reading(mu_circle))


def mc_repeats_limit(mc_samples):
    """The most Monte Carlo repeats offered: samples x repeats must fit the library's Monte
    Carlo limit (issue 13: 5000 x 50 used to pass the slider and fail in the library with a
    traceback)."""
    return max(5, min(CAPS["mc_repeats"], get_limits().max_mc_samples // int(mc_samples)))


def mu_sigma_section(sigma, sensitivity, mu_circle):
    """µ against σ on S¹ (exact and Monte Carlo) and on R."""
    st.subheader("µ against σ")
    ss = st.session_state
    init("gd_mc_n", "gd_mc_n", 500, int, MC_SAMPLES)
    max_repeats = mc_repeats_limit(ss["gd_mc_n"])
    init("gd_mc_r", "gd_mc_r", 10, int, bounds=(5, max_repeats))
    if ss["gd_mc_r"] > max_repeats:  # kept from more samples: the limit is lower now
        ss["gd_mc_r"] = max_repeats
    # Built only while open (its widgets would otherwise delay the first plot); closed, the
    # settings come from the session (a shared link's included).
    box = lazy_expander("Monte Carlo settings", "gd_mc_open", keep=MC_KEYS)
    if box is not None:
        mc_cols = box.columns(2)
        mc_cols[0].select_slider("Samples per centre and repeat", MC_SAMPLES, key="gd_mc_n")
        mc_cols[1].slider("Repeats (for the standard error)", 5, max_repeats, key="gd_mc_r")
    mc_samples, mc_repeats = int(ss["gd_mc_n"]), int(ss["gd_mc_r"])
    if sensitivity > math.pi:  # the slider stops at 3: for a Δ passed in some other way
        st.error("Δ must be at most π on the circle.")
        return
    mc_work, mc_ok = L.table_work(len(MC_SIGMAS), int(mc_samples), int(mc_repeats))
    show_work(mc_work, mc_ok, on_page="lower the samples or repeats in the Monte Carlo "
              "settings. The figure shows the exact curves only.")
    with st.spinner("Computing µ on S¹ (exact and Monte Carlo) …"):
        table = table_cached(float(sensitivity), SIGMA_GRID,
                             mc_sigmas=MC_SIGMAS if mc_ok else None,
                             mc_samples=int(mc_samples), mc_repeats=int(mc_repeats), seed=0)
    show_figure(st, V.mu_sigma_figure(table, current=(float(sigma), mu_circle)),
                    width="stretch", key="gd_mu_sigma")
    chart_first()  # a visit's first run ends at its chart (ui.first_paint)
    st.caption(
        "For small σ the circle looks like a line and µ ≈ Δ/σ. For large σ the noise wraps "
        "around the circle, the output carries less information and µ drops below Δ/σ. The "
        "Monte Carlo estimate (grey, ± 2 standard errors) follows the exact curve; paper 004 "
        "notes that it tends to overestimate µ at small σ."
    )


def sim_init():
    """Starting values of the simulation's settings, given on every run (its tab may be
    closed: they stay in the URL and the session)."""
    init("gd_sim_n", "gd_sim_n", 10, int, SIM_SIZES)
    init("gd_sim_reps", "gd_sim_reps", 200, int, bounds=(50, CAPS["utility_replicates"]))


def simulation_settings():
    """The sample size and draws of the Gaussian vs Laplace simulation, in a lazy expander
    (closed, they come from the session, a shared link's included)."""
    box = lazy_expander("Simulation settings", "gd_sim_open", keep=SIM_KEYS)
    if box is not None:
        sim_cols = box.columns(2)
        sim_cols[0].select_slider("Sample size n of the data", SIM_SIZES, key="gd_sim_n")
        sim_cols[1].slider("Draws per rate and mechanism", 50, CAPS["utility_replicates"],
                           step=50, key="gd_sim_reps")
    return int(st.session_state["gd_sim_n"]), int(st.session_state["gd_sim_reps"])


def utility_section():
    """Gaussian vs Laplace at equal µ on S² (a cached simulation on synthetic data)."""
    sim_n, sim_reps = simulation_settings()
    delta_sim = L.frechet_summary(Sphere(2), int(sim_n), math.pi / 8)["delta"]
    bar = st.progress(0.0, text="Estimating µ on S² by Monte Carlo and drawing …")
    frame = utility_cached(delta_sim / UTILITY_MUS, n=int(sim_n), radius=math.pi / 8,
                           replicates=int(sim_reps), mc_samples=500, mc_repeats=10, seed=0)
    bar.empty()
    show_figure(st, V.gaussian_utility_figure(frame), width="stretch", key="gd_utility")
    st.caption(
        f"Protocol of paper 004 §5.2: data in a ball of radius π/8 on S² with n = {sim_n}, so "
        f"the mean has sensitivity Δ = 2r(2 − h)/(nh) = {delta_sim:.3g}. The Gaussian rates are "
        "σ = Δ/m for m = 0.1 … 5, and each σ's µ is estimated by Monte Carlo; the Laplace "
        "mechanism gets the ε with the same µ and rate Δ/ε. Both densities depend only on the "
        "distance to the centre, so the error does not depend on the data set. At equal µ the "
        "Gaussian stays closer to x̄. Equal µ is not equal privacy in the pure sense: the "
        "Laplace mechanism is ε-DP (δ = 0), the Gaussian only (ε, δ(ε))-DP for each ε (see "
        "the note under the metrics at the top)."
    )


def meaning_section(sigma, sensitivity, mu_circle):
    """What µ means: the trade-off curves and the privacy profile at the current µ."""
    refs = {f"µ = {mu_circle:.3g} (current, S¹)": mu_circle}
    for ref in (0.5, 1.0, 3.0):
        if abs(ref - mu_circle) > 0.05:
            refs[f"µ = {ref:g}"] = ref
    cols = st.columns(2)
    show_figure(cols[0], V.tradeoff_figure(refs), width="stretch", key="gd_tradeoff")
    cols[0].caption("Any test of 'the data set is D' against 'it is D′' that wrongly rejects "
                    "with probability α misses with probability at least G_µ(α).")
    show_figure(cols[1], V.privacy_profile_figure(mu_circle, sigma=float(sigma),
                                                  sensitivity=float(sensitivity)),
                         width="stretch", key="gd_profile")
    cols[1].caption("The exact profile of the Gaussian mechanism on S¹ lies on or below δ_µ "
                    "for its µ: it is (ε, δ(ε))-DP for every ε at once.")


def main():
    st.title("Gaussian DP")
    st.markdown(
        "The **Riemannian Gaussian mechanism** adds noise with density ∝ exp(−d²/(2σ²)) around "
        "the statistic. Its privacy is measured by **Gaussian differential privacy** (GDP) with "
        "one parameter µ (paper 004). Set either the rate σ or a target µ, and see how µ "
        "depends on σ on the circle and on the line, how the Gaussian compares with the Laplace "
        "mechanism at equal µ, and what µ means for an attacker."
    )
    # The rate and its µ on the left, µ against σ beside them (in view while they change).
    # The chart is drawn first, from the values the left column's widgets hold; their widgets
    # follow (each input widget drawn before the chart delays it by 10-20 ms in the browser).
    left, right = st.columns([2, 3], gap="large")
    rate_settings()
    with left:  # (only a µ target's calibration spinner, before the chart)
        sigma, sensitivity, mu_circle = rate_values()
    with right:
        mu_sigma_section(float(sigma), float(sensitivity), mu_circle)
    with left:
        rate_and_mu(sigma, sensitivity, mu_circle)
        request = page_request(sigma, sensitivity)
        accuracy_box(request, float(sensitivity))

    notes, assumptions = st.columns(2)
    with notes:
        formula_notes("gd_notes", teaching_notes)
    with assumptions:
        assumptions_box(sensitivity)

    # Three views in stateful tabs, only the open one built: the converter (no chart) opens
    # first, so the page's first render holds one chart (each chart drawn on opening delayed
    # the first plot; issue 29).
    converter_init()
    sim_init()
    st.subheader("Explore µ")
    keep = dict(zip(EXPLORE_TABS, (CONV_KEYS, SIM_KEYS, ()), strict=True))
    conv_tab, sim_tab, meaning_tab = lazy_tabs(EXPLORE_TABS, "gd_explore", keep=keep)
    if conv_tab.open is not False:
        with conv_tab:
            converter()
    if sim_tab.open:
        with sim_tab:
            utility_section()
    if meaning_tab.open:
        with meaning_tab:
            meaning_section(float(sigma), float(sensitivity), mu_circle)
    release_section(request, float(sensitivity))
    # Settings, never data, go to the URL; also kept in the session for page switches.
    settings_state.finish()


main()
