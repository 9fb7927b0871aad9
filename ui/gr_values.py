"""The Geodesic regression page's settings read from ``st.session_state``, before their widgets
are drawn (issue 29: the page's first chart is sent to the browser before the settings column).

Each widget gets its starting value from ``init`` (the page's
:meth:`ui.session.PageSettings.init`) here, so the session state holds every setting before
any widget is drawn; the widgets (:mod:`ui.gr_settings`) are drawn afterwards with the same
keys, and return what is read here (Streamlit puts a value the user changed in the session
state before the rerun starts). Validation a widget does not do (the Euclidean ball centre's
text, the SPD footpoint radius against τ_m + τ) is done in the read; the widgets only say so.

An uploaded file's reading (its mapping, its person column) is made of widgets: its dataset is
None here, and the page draws section 1 first for an upload (:func:`ui.gr_settings.
data_section` returns the data read).
"""

from __future__ import annotations

from dataclasses import dataclass

import streamlit as st

from ui import covariate_estimate as CE
from ui import manifolds as M
from ui import rat_preset as RP
from ui import two_stage as TSW
from ui.caps import CAPS
from ui.logic import geodesic_regression as G
from ui.logic import regression_data as D
from ui.session import set_page_rows
from ui.upload import param_from_header

SOURCES = {"synthetic": "Synthetic (paper protocol)", "example": "Generated example",
           "rats": "Preset: rat skulls (real data)", "upload": "Upload a CSV"}
#: Widget keys of the "Advanced: sampler" section (kept while it is closed).
SAMPLER_KEYS = ("gr_chain", "gr_burn", "gr_sampler", "gr_fix_seed", "gr_release_seed")


@st.cache_data(show_spinner=False, max_entries=64)
def cached_synthetic(kind, param, n, noise, seed):
    return G.synthetic_dataset(kind, param, n, noise, seed)


@st.cache_data(show_spinner=False, max_entries=16)
def cached_example(kind, param):
    return D.example_dataset(kind, param)


@dataclass(frozen=True)
class DataChoice:
    """What section 1 chose: the manifold (``kind``, ``param``), the data ``source``, the
    ``dataset`` (None while it cannot be used), an upload's ``read`` (its mapping), whether its
    points are renormalized, whether its rows per person are confirmed (``group_ok``), the
    covariate's name, the file's digest, the synthetic data's settings (``n``, ``noise``,
    ``seed``), why the data cannot be used (``data_error``) and the manifold parameter an
    uploaded file's header names (``found``)."""

    kind: str
    param: int | None
    source: str
    dataset: object = None
    read: object = None
    renormalize: bool = False
    group_ok: bool = True
    covariate: str = "x"
    file_digest: str | None = None
    upload_digest: tuple | None = None
    synthetic: dict | None = None
    data_error: str | None = None
    found: int | None = None

    @property
    def key(self):
        """What identifies the data in a release's signature (never the data themselves)."""
        return (self.source, self.upload_digest) if self.source == "upload" else (self.source,)


@dataclass(frozen=True)
class Budget:
    """Section 2: the budgets, the scheme, the number of draws and how the budget is set
    (``split``: "separate" ε_p and ε_v, or a "total" and a share)."""

    eps_p: float
    eps_v: float
    scheme: str
    n_foot: int
    n_vec: int
    split: str = "separate"


@dataclass(frozen=True)
class Bounds:
    """Section 3: the mode, the public bounds, the two-stage design, a covariate range
    estimated under DP (``estimated``: bound -> statement; ``estimate``: the estimate; ``scope``:
    what it is kept for; ``range_keys``: the widget keys of the range fields) and the sampler's
    settings (``chain``, ``burn``, ``sampler``, ``seed``: None for OS entropy)."""

    mode: str
    tau: float | None
    covariate_range: tuple | None
    tau_m: float | None
    center: tuple | None
    max_speed: float | None
    footpoint_radius: float | None
    two: object
    estimated: dict
    estimate: dict | None
    chain: int
    burn: int
    sampler: str
    seed: int | None
    scope: str | None = None
    range_keys: tuple | None = None


def read_data(init):
    """Section 1's values: a :class:`DataChoice` (for an upload, without its dataset)."""
    ss = st.session_state
    # M.canonical reads aliases from the URL: "spd2" (an older link) is "spd".
    init("gr_manifold", "gr_m", "sphere", M.canonical, D.MANIFOLD_KINDS)
    kind = ss["gr_manifold"]
    ss["gr_prev_kind"] = kind
    param = None
    found = header_param(kind)
    if kind in D.PARAM_RANGE:
        lo_p, hi_p, default_p = D.PARAM_RANGE[kind]
        key = f"gr_param_{kind}"
        init(key, f"gr_{M.spec(kind).param}", G.default_param(kind, default_p), int,
             range(lo_p, hi_p + 1))
        param = int(ss[key])
    init("gr_source", "gr_src", "synthetic", str, tuple(SOURCES))
    source = ss["gr_source"]
    set_page_rows(None)  # set again while an uploaded file's person column is mapped
    dataset = data_error = synthetic = None
    if source == "synthetic":
        init("gr_n", "gr_n", G.default_n(kind), int, range(10, CAPS["gr_max_n"] + 1))
        noise_key = f"gr_noise_{kind}"
        if kind == "sphere":
            init(noise_key, "gr_noise", G.default_noise(kind, D.SPHERE_NOISE_CHOICES[0]),
                 float, D.SPHERE_NOISE_CHOICES)
        else:
            init(noise_key, "gr_noise", G.default_noise(kind, D.default_noise(kind)), float,
                 bounds=(0.0, 2.0))
        init("gr_seed", "gr_seed", 0, int, bounds=(0, 10**6))
        n, noise, seed = ss["gr_n"], ss[noise_key], int(ss["gr_seed"])
        dataset = cached_synthetic(kind, param, int(n), float(noise), seed)
        synthetic = {"n": n, "noise": noise, "seed": seed}
    elif source == "example":
        dataset = cached_example(kind, param)
    elif source == "rats":
        preset = RP.RAT_PRESET
        if (kind, param) != (preset["kind"], preset["param"]):
            data_error = ("The rat skulls are planar shapes with 8 landmarks: choose "
                          "*Kendall planar shapes* with k = 8 (choosing the data *Preset: "
                          "rat skulls* sets it, with the preset's bounds and budget).")
        else:
            dataset = RP.rat_skulls_dataset()
    return DataChoice(kind, param, source, dataset, synthetic=synthetic, data_error=data_error,
                      found=found)


def header_param(kind):
    """The manifold parameter an uploaded file's header names (Kendall k from lx1..lyk,
    Euclidean d from y1..yd), set into the page's parameter widget once per file before the
    widget is drawn (:func:`ui.upload.param_from_header`; the file is in the session state
    already): afterwards it is the user's to change. None without an upload."""
    uploaded = st.session_state.get("gr_upload")
    if (kind not in D.PARAM_RANGE or st.session_state.get("gr_source") != "upload"
            or uploaded is None):
        return None
    return param_from_header("gr", kind, f"gr_param_{kind}", uploaded.getvalue(),
                             D.PARAM_RANGE[kind])


def read_budget(init):
    """Section 2's values: a :class:`Budget`."""
    ss = st.session_state
    init("gr_budget_input", "gr_bi", "separate", str, ("separate", "total"))
    split = ss["gr_budget_input"]
    if split == "separate":
        init("gr_eps_p", "gr_ep", G.DEFAULT_EPS[0], float, D.EPS_GRID)
        init("gr_eps_v", "gr_ev", G.DEFAULT_EPS[1], float, D.EPS_GRID)
        eps_p, eps_v = ss["gr_eps_p"], ss["gr_eps_v"]
    else:
        init("gr_total", "gr_tot", 3.0, float, D.EPS_GRID)
        init("gr_share", "gr_share", 35, int, range(5, 96, 5))
        total, share = ss["gr_total"], ss["gr_share"]
        eps_p, eps_v = total * share / 100.0, total * (100 - share) / 100.0
    init("gr_scheme", "gr_scheme", "joint", str, G.SCHEME_LABELS)
    init("gr_nf", "gr_nf", G.DEFAULT_DRAWS[0], int, range(1, CAPS["gr_footpoints"] + 1))
    init("gr_nv", "gr_nv", G.DEFAULT_DRAWS[1], int, range(1, CAPS["gr_vectors"] + 1))
    return Budget(float(eps_p), float(eps_v), ss["gr_scheme"], int(ss["gr_nf"]),
                  int(ss["gr_nv"]), split)


def read_bounds(init, data, budget):
    """Section 3's values (and the sampler's), for the data and budget read before: a
    :class:`Bounds`."""
    ss = st.session_state
    kind, param, source, dataset = data.kind, data.param, data.source, data.dataset
    init("gr_mode", "gr_mode", "strict", str, ("strict", "paper"))
    mode = ss["gr_mode"]
    tau = covariate_range = tau_m = center = max_speed = footpoint_radius = two = None
    estimated, scope, estimate, range_keys = {}, None, None, None
    if mode != "paper":
        init(f"gr_tau_{kind}", "gr_tau", G.default_tau(kind, M.spec(kind).tau), float,
             bounds=(0.001, 10.0))
        tau = float(ss[f"gr_tau_{kind}"])
        if G.estimate_offered(source, mode) and dataset is not None:
            scope = G.estimate_scope(data.file_digest, kind, param, data.covariate)
            estimate = ss.get(CE.ESTIMATES, {}).get(scope)
        range_default = (estimate["range"] if estimate else
                         D.EXAMPLE_AGES if source == "example" else
                         RP.RAT_PRESET["covariate_range"] if source == "rats" else
                         (0.0, 1.0))
        # An estimate gives the fields new keys: they start from it (later edits stay).
        suffix = f"_{scope}_est{estimate['token']}" if estimate else ""
        range_keys = (f"gr_lo_{source}{suffix}", f"gr_hi_{source}{suffix}")
        init(range_keys[0], "gr_lo", float(range_default[0]), float)
        init(range_keys[1], "gr_hi", float(range_default[1]), float)
        covariate_range = (float(ss[range_keys[0]]), float(ss[range_keys[1]]))
        estimated = G.covariate_estimate_note(covariate_range, estimate)
        # One field per data source: the demonstration's speed bound is its design, not a
        # bound for an uploaded file.
        init(f"gr_ms_{kind}_{source}", "gr_ms", G.default_max_speed(kind, source), float,
             bounds=(0.0, 100.0))
        max_speed = float(ss[f"gr_ms_{kind}_{source}"]) or None
        if D.needs_ball(kind):
            init(f"gr_taum_{kind}", "gr_taum", G.default_tau_m(kind, M.spec(kind).tau_m),
                 float, bounds=(0.01, 100.0))
            tau_m = float(ss[f"gr_taum_{kind}"])
            if kind == "spd":
                init("gr_center_spd", "gr_c", 1.0, float, bounds=(0.001, 1000.0))
                center = (float(ss["gr_center_spd"]),)
            elif kind == "euclidean":
                init(f"gr_center_{param}", None, ", ".join(["0"] * int(param)), str)
                center = parse_center(ss[f"gr_center_{param}"], param)
        if kind in G.FOOTPOINT_REGION_KINDS:
            footpoint_radius, region_center = footpoint_region_value(
                init, kind, source, limit=None if tau_m is None else tau_m + tau)
            if kind != "spd":  # SPD: the region is about the ball's centre
                center = region_center
        two = TSW.two_stage_value(kind, budget.scheme, budget.eps_p, budget.eps_v,
                                  budget.n_foot * budget.n_vec, init)
    chain, burn, sampler, fix_seed, release_seed = sampler_values(init)
    return Bounds(mode, tau, covariate_range, tau_m, center, max_speed, footpoint_radius, two,
                  estimated, estimate, chain, burn, sampler, release_seed if fix_seed else None,
                  scope, range_keys)


def parse_center(text, param):
    """The Euclidean ball centre typed as ``param`` comma-separated numbers, or None (the
    origin) when the text is not that."""
    try:
        center = tuple(float(s) for s in text.split(","))
    except ValueError:
        return None
    return center if len(center) == int(param) else None


def footpoint_region_value(init, kind, source, limit=None):
    """The optional public footpoint region: its radius (None: the whole space, or on SPD the
    ball of radius ``limit`` = τ_m + τ, also when the radius typed exceeds it) and, on the
    sphere, its centre as (latitude, longitude); on SPD the region is about the response
    ball's centre c·I."""
    ss = st.session_state
    key = f"gr_fr_{kind}_{source}"
    init(key, None, G.default_footpoint_radius(kind, source), float, bounds=(0.0, 3.2))
    radius = float(ss[key])
    center = None
    if kind == "sphere":
        init("gr_fc_lat", None, 90.0, float, bounds=(-90.0, 90.0))
        init("gr_fc_lon", None, 0.0, float, bounds=(-180.0, 180.0))
        center = (float(ss["gr_fc_lat"]), float(ss["gr_fc_lon"]))
    elif kind == "spd" and limit is not None and radius > limit:
        radius = 0.0  # the widget says why (ui.gr_settings.footpoint_region_inputs)
    return (radius or None), center


def sampler_values(init):
    """The "Advanced: sampler" settings: (chain, burn-in, sampler, fix seed?, release seed)."""
    init("gr_chain", "gr_chain", G.DEFAULT_CHAIN, int, range(50, CAPS["gr_chain"] + 1))
    init("gr_burn", "gr_burn", G.DEFAULT_BURN_IN, int, range(0, CAPS["gr_chain"] + 1))
    init("gr_sampler", "gr_sampler", "auto", str, G.SAMPLER_LABELS)
    init("gr_fix_seed", None, False, bool)
    init("gr_release_seed", None, 1, int, bounds=(0, 10**6))
    ss = st.session_state
    return (int(ss["gr_chain"]), int(ss["gr_burn"]), ss["gr_sampler"],
            bool(ss["gr_fix_seed"]), int(ss["gr_release_seed"]))
