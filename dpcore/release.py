r"""End-to-end private releases that state their guarantee (DESIGN §8).

Two modes:

``strict`` (default)
    Bounds are public inputs. Covariates are clipped to the public ``covariate_range`` and mapped
    to [0, 1] with it; residuals are clipped to norm ``tau`` inside every gradient; responses are
    projected onto the public ball ``B_{tau_m}(center)`` where the bounds need it; the
    mechanisms' supports are restricted to public balls on non-compact spaces. The stated
    guarantee then holds for every dataset. Randomness comes from OS entropy unless a seed is
    passed, in which case the release is labelled "not for publication".
``paper``
    Reproduces the papers' choices: missing bounds are taken from the data (τ = largest residual
    of the non-private fit, data min/max as covariate range), KNG uses σ = Δ/ε. A
    :class:`~dpcore.exceptions.PrivacyLeakWarning` is raised and the release is labelled not
    private.
"""

from __future__ import annotations

import json
import numbers
import warnings
from dataclasses import dataclass, field

import numpy as np

from . import __version__
from ._validation import check_int, check_positive
from .data.synthetic import default_center
from .exceptions import (
    ApproximatePrivacyWarning,
    ExactSamplingUnavailable,
    PrivacyLeakWarning,
)
from .learning import GeodesicRegression, frechet_mean
from .learning.regression import regression_gradient
from .manifolds import SPD, Euclidean, Hyperbolic, Sphere
from .mechanisms import (
    AmbientLaplace,
    Ball,
    KNormGradient,
    RiemannianGaussian,
    RiemannianLaplace,
    ambient_radius,
    embed,
)
from .mechanisms.base import check_manifold
from .mechanisms.kng import (
    exact_support_available,
    frechet_mean_exact,
    refined_chart_available,
    refined_joint_available,
    regression_footpoints_many,
    regression_gradient_bounds,
    regression_joint_exact,
    regression_joint_many,
    regression_vectors_many,
)
from .mechanisms.laplace import _laplace_integrable, unembed
from .sampling.rejection import worst_case_proposals
from .sensitivity import (
    frechet_gradient_sensitivity,
    frechet_mean_sensitivity,
    geodesic_regression_sensitivity,
)
from .settings import check_limit, get_limits

MODES = ("strict", "paper")
FRECHET_MECHANISMS = ("laplace", "kng", "gaussian", "ambient_laplace")
SEQUENTIAL_CAVEAT = (
    "Sequential scheme (paper 002): the footpoint is drawn with the shooting vector fixed at its "
    "non-private estimate, which the sensitivity proof treats as fixed; the total is the sum "
    "epsilon_p + epsilon_v per geodesic."
)
#: Ways of splitting the budget of one private geodesic (DESIGN §8).
SCHEMES = ("sequential", "joint")
SEEDED_CAVEAT = "Seeded randomness: reproducible demo, not for publication."
#: What a release may claim (DESIGN §12), from :attr:`Release.guarantee`.
GUARANTEES = ("private", "approximately private", "not covered", "not private")
LABELS = {
    "private": "private",
    "not covered": "NOT PRIVATE (sequential scheme: not covered by the sensitivity proof)",
    "not private": "NOT PRIVATE (paper mode: bounds from the data)",
}
#: Paper mode with every bound public: not private because of sigma = Delta/epsilon (KNG).
PAPER_PUBLIC_BOUNDS_LABEL = "NOT PRIVATE (paper mode: sigma = Delta/epsilon)"
APPROXIMATE_LABELS = {
    "mcmc": "approximately private (MCMC; δ not certified)",
    "monte_carlo": "approximately private (µ calibrated by Monte Carlo; not proven)",
}
SAMPLERS = ("auto", "exact", "mcmc")
MCMC_CAVEAT = (
    "MCMC sampler: the draws only approximate the mechanism's distribution; pure epsilon-DP "
    "holds only approximately and no delta is certified (paper 002 app. A.1 gives delta of "
    "order 1/chain length only if the chain has mixed, which no diagnostic proves)."
)
SEQUENTIAL_STRICT_CAVEAT = (
    "Not covered by the sensitivity proof: the footpoint stage evaluates the gradient at the "
    "data's own (non-private) shooting vector, which moves when one row is replaced; the "
    "audit in tests/audit measured log-density ratios of 5.1 epsilon_p at n = 20 and 8.5 "
    "epsilon_p at n = 40 on the sphere, growing with n. Use scheme='joint' for a private "
    "release."
)
PAPER_CAVEAT = (
    "Paper mode: bounds were taken from the data and/or sigma = Delta/epsilon was used; the "
    "output is NOT differentially private as stated."
)


# ---------------------------------------------------------------------- the record
def _jsonable(value):
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return _jsonable(value.tolist())
    if isinstance(value, (np.bool_, bool)):
        return bool(value)
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        value = float(value)
        return value if np.isfinite(value) else str(value)
    if value is None or isinstance(value, str):
        return value
    return str(value)


#: Diagnostics that describe the sampler's configuration or are post-processing of the private
#: outputs alone; everything else (acceptance rates, tuned step size, ESS, R-hat) is computed
#: from chain states driven by the private data and is not covered by epsilon.
PUBLIC_DIAGNOSTICS = frozenset({
    "exact", "sampler", "n_chains", "n_samples", "n_burn_in", "thin", "diagnostics_grouping",
    "mu_accounting", "projected", "ambient_dimension", "fraction_left_manifold",
})
WITHHELD_NOTE = (
    "Chain diagnostics (acceptance, tuned step size, ESS, R-hat) are computed from the private "
    "data and are not covered by epsilon; they are kept out of this record (see Release."
    "diagnostics locally)."
)


def _public_diagnostics(diagnostics):
    out, withheld = {}, False
    for key, value in diagnostics.items():
        if isinstance(value, dict):
            sub, w = _public_diagnostics(value)
            out[key], withheld = sub, withheld or w
        elif key in PUBLIC_DIAGNOSTICS:
            out[key] = value
        else:
            withheld = True
    return out, withheld


@dataclass
class Release:
    """A private release and everything needed to state its guarantee.

    Attributes
    ----------
    values : dict
        The private outputs (arrays).
    mechanism : str
    epsilon : float or None
        Total pure-DP budget of everything in ``values`` (None for Gaussian DP).
    delta : float or None
        0 for exact samplers; the approximate-DP δ (order 1 / chain length per draw) for MCMC;
        None for Gaussian DP (see ``mu``).
    mu : float or None
        GDP parameter (Gaussian mechanism only).
    sensitivity, sigma : dict
        Sensitivities and noise scales used, by parameter.
    assumptions : dict
        Every bound the guarantee relies on, with its value and its source (``"public"`` or
        ``"data"``).
    diagnostics : dict
        Sampler diagnostics (acceptance, ESS, R-hat) and exactness of the sampler.
    mode : {"strict", "paper"}
    seeded : bool
        Whether a seed or generator was supplied (reproducible, not for publication).
    version : str
    caveats : list of str
    details : dict
        Scenario facts (sample size, scheme, draws).
    coverage : {"proven", "mcmc", "monte_carlo", "sequential"}
        Which proof covers the draw: ``"proven"`` (exact sampler, proven sensitivity),
        ``"mcmc"`` (MCMC sampler: δ not certified), ``"monte_carlo"`` (Gaussian µ calibrated by
        Monte Carlo), ``"sequential"`` (footpoint stage outside the sensitivity proof). With
        ``mode`` and the sources of the bounds it gives :attr:`guarantee` and :attr:`label`.
    """

    values: dict
    mechanism: str
    epsilon: float | None
    delta: float | None
    mu: float | None
    sensitivity: dict
    sigma: dict
    assumptions: dict
    diagnostics: dict
    mode: str
    seeded: bool
    version: str = __version__
    caveats: list = field(default_factory=list)
    details: dict = field(default_factory=dict)
    coverage: str = "proven"

    @property
    def bounds_public(self):
        """Whether strict mode ran and no bound the guarantee relies on came from the data."""
        return self.mode == "strict" and all(
            a.get("source") != "data" for a in self.assumptions.values() if isinstance(a, dict)
        )

    @property
    def guarantee(self):
        """What is proven for this exact release (DESIGN §12), one of :data:`GUARANTEES`.

        ``"private"``: proven sensitivity, exact sampler, public bounds (ε-DP with δ = 0, or a
        µ-GDP proven in closed form). ``"approximately private"``: as before but drawn by MCMC
        (δ not certified) or with a µ calibrated by Monte Carlo (a statistical estimate).
        ``"not covered"``: the papers' sequential scheme, whose footpoint stage evaluates the
        gradient at the data's own shooting vector, outside the sensitivity proof.
        ``"not private"``: paper mode or bounds taken from the data.
        """
        if not self.bounds_public:
            return "not private"
        if self.coverage == "sequential":
            return "not covered"
        if self.coverage in ("mcmc", "monte_carlo"):
            return "approximately private"
        return "private"

    @property
    def private(self):
        """True only where a proof covers this exact release (``guarantee == "private"``)."""
        return self.guarantee == "private"

    @property
    def label(self):
        """The release's label; it never claims more than :attr:`guarantee`."""
        base = LABELS[self.guarantee] if self.guarantee != "approximately private" else (
            APPROXIMATE_LABELS[self.coverage])
        if self.guarantee == "not private" and not any(
                a.get("source") == "data" for a in self.assumptions.values()
                if isinstance(a, dict)):
            base = PAPER_PUBLIC_BOUNDS_LABEL
        if self.seeded and self.guarantee != "not private":
            if self.guarantee == "private":
                return "private mechanism, seeded: not for publication"
            return base + ", seeded: not for publication"
        return base

    def to_dict(self):
        """JSON-safe dict: private outputs and metadata only (no input data).

        In strict mode, sampler diagnostics computed from the private data (acceptance, tuned
        step size, ESS, R-hat) are left out: they are not covered by the privacy budget.
        """
        diagnostics, caveats = self.diagnostics, list(self.caveats)
        if self.mode == "strict":
            diagnostics, withheld = _public_diagnostics(self.diagnostics)
            if withheld:
                caveats.append(WITHHELD_NOTE)
        out = {
            "values": self.values,
            "mechanism": self.mechanism,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "mu": self.mu,
            "sensitivity": self.sensitivity,
            "sigma": self.sigma,
            "assumptions": self.assumptions,
            "diagnostics": diagnostics,
            "mode": self.mode,
            "seeded": self.seeded,
            "version": self.version,
            "label": self.label,
            "guarantee": self.guarantee,
            "private": self.private,
            "caveats": caveats,
            "details": self.details,
        }
        return _jsonable(out)

    def to_json(self, **kwargs):
        return json.dumps(self.to_dict(), **kwargs)


# ---------------------------------------------------------------------- shared helpers
def _check_mode(mode):
    if mode not in MODES:
        raise ValueError(f"`mode` must be one of {MODES}, got {mode!r}.")
    return mode


def _resolve_rng(rng):
    """OS entropy when ``rng`` is None; anything else is a fixed seed or caller's generator."""
    return np.random.default_rng(rng), rng is not None


def _check_responses(manifold, y, name="y"):
    y = np.asarray(y, dtype=float)
    if y.ndim != manifold.point_ndim + 1 or y.shape[1:] != manifold.point_shape:
        raise ValueError(
            f"`{name}` must have shape (n, {', '.join(map(str, manifold.point_shape))}), "
            f"got {y.shape}."
        )
    if y.shape[0] < 2:
        raise ValueError(f"`{name}` must hold at least 2 observations, got {y.shape[0]}.")
    if not np.all(np.isfinite(y)):
        raise ValueError(f"`{name}` contains NaN or infinite values.")
    return y


def project_to_ball(manifold, points, center, radius):
    """Geodesic projection onto ``B_radius(center)``: pull far points back along the geodesic.

    Points in the cut locus of ``center`` (e.g. antipodal on the sphere), where that geodesic is
    not unique, go to the boundary point in a fixed direction (the first vector of
    :meth:`~dpcore.manifolds.Manifold.orthonormal_basis` at ``center``): the map stays a
    deterministic function of each point, which is all the privacy argument needs.
    """
    points = np.asarray(points, dtype=float)
    center = np.asarray(center, dtype=float)
    d = manifold.dist(points, center)
    outside = d > radius
    if not np.any(outside):
        return points
    cut = d >= manifold.injectivity_radius - 1e-6
    safe = np.where(manifold.pointwise(cut), np.broadcast_to(center, points.shape), points)
    v = manifold.log(np.broadcast_to(center, points.shape), safe)
    scale = np.where(outside & ~cut, radius / np.where(d > 0, d, 1.0), 1.0)
    pulled = manifold.exp(center, v * manifold.pointwise(scale))
    fixed = manifold.exp(center, radius * manifold.orthonormal_basis(center)[0])
    pulled = np.where(manifold.pointwise(cut), fixed, pulled)
    return np.where(manifold.pointwise(outside), pulled, points)


def _assumption(value, source, note=None):
    out = {"value": value, "source": source}
    if note:
        out["note"] = note
    return out


# ---------------------------------------------------------------------- regression
def private_geodesic_regression(
    manifold,
    x,
    y,
    *,
    eps_p,
    eps_v,
    tau=None,
    covariate_range=None,
    tau_m=None,
    n_vectors=1,
    mode="strict",
    rng=None,
    center=None,
    n_footpoints=1,
    max_speed=None,
    chain_length=2000,
    burn_in=1000,
    scheme=None,
    sampler="auto",
):
    r"""Private footpoint and shooting vectors of geodesic regression (paper 002, sequential KNG).

    First ``n_footpoints`` private footpoints :math:`\tilde p` are drawn by KNG on
    :math:`p \mapsto E(p, \Gamma_{\hat p \to p}\hat v)` with budget ``eps_p``; then at each,
    ``n_vectors`` private shooting vectors by KNG on :math:`v \mapsto E(\tilde p, v)` with budget
    ``eps_v``. One geodesic costs ``eps_p + eps_v``; publishing every draw costs
    ``n_footpoints * eps_p + n_footpoints * n_vectors * eps_v`` (the ``epsilon`` reported).

    Parameters
    ----------
    manifold : Manifold
    x : array-like, shape (n,)
        Covariates.
    y : array-like, shape (n, *point_shape)
        Responses.
    eps_p, eps_v : float
        Budgets of the footpoint and of each shooting vector.
    tau : float
        Public bound on residual norms; residuals are clipped to it (required in strict mode).
    covariate_range : (float, float)
        Public range of the covariate; x is clipped to it and mapped to [0, 1] (strict: required).
    tau_m : float
        Radius of a public ball ``B_{tau_m}(center)`` holding the responses (required in strict
        mode on non-compact manifolds and whenever the curvature can be negative).
    n_vectors, n_footpoints : int
        Number of private shooting vectors per footpoint and of footpoints.
    mode : {"strict", "paper"}
    rng : None, int or Generator
        None uses OS entropy (required for publication); a seed gives a reproducible demo.
    center : array, optional
        Centre m0 of the public ball (default: origin of R^d, identity of SPD).
    max_speed : float, optional
        Public bound on the shooting-vector norm, the support of the vector mechanism
        (default: the diameter on compact spaces, 2 (tau_m + tau) otherwise, paper 002 app. C).
    chain_length, burn_in : int
        Metropolis-Hastings settings where no exact sampler exists.
    scheme : {None, "joint", "sequential"}
        ``"joint"`` (default in strict mode): one KNG on the tangent bundle over (p, v) with the
        stacked gradient, sensitivity :math:`\sqrt{\Delta_p^2 + \Delta_v^2}` and budget
        ``eps_p + eps_v`` per geodesic (DESIGN §8, §12); ``n_footpoints * n_vectors``
        independent pairs are drawn and returned as footpoints ``(n_draws, *point_shape)`` with
        one vector each ``(n_draws, 1, *point_shape)``. ``"sequential"`` (default in paper
        mode, the papers' scheme): footpoints by KNG with budget ``eps_p``, then vectors by KNG
        with budget ``eps_v``; its footpoint stage evaluates the gradient at the data's own
        shooting vector, outside the sensitivity proof, so a strict sequential release is
        labelled not private.
    sampler : {"auto", "exact", "mcmc"}
        ``"exact"``: rejection sampling from uniform proposals (δ = 0,
        :mod:`dpcore.sampling.rejection`); raises :class:`~dpcore.exceptions.
        ExactSamplingUnavailable` before sampling where no exact sampler exists.
        ``"mcmc"``: Metropolis-Hastings, labelled "approximately private". ``"auto"``: exact
        in strict mode when its public worst-case cost is within the ``max_exact_work`` limit
        (:mod:`dpcore.settings`), else MCMC with an
        :class:`~dpcore.exceptions.ApproximatePrivacyWarning`; paper mode uses MCMC as the
        papers did.

    Returns
    -------
    Release
        ``values``: ``footpoint`` (shape ``(n_footpoints, *point_shape)``, at the lower end of the
        covariate range), ``shooting_vector`` (``(n_footpoints, n_vectors, *point_shape)``,
        velocity per unit of the rescaled covariate), ``intercept`` and ``coef`` in the original
        covariate units (as :class:`~dpcore.learning.GeodesicRegression`).
    """
    eps_p = check_positive(eps_p, "eps_p")
    eps_v = check_positive(eps_v, "eps_v")
    return _geodesic_regression_releases(
        manifold, x, y, [(eps_p, eps_v)], tau=tau, covariate_range=covariate_range,
        tau_m=tau_m, n_vectors=n_vectors, mode=mode, rng=rng, center=center,
        n_footpoints=n_footpoints, max_speed=max_speed, chain_length=chain_length,
        burn_in=burn_in, scheme=scheme, sampler=sampler, stacklevel=3,
    )[0]


def private_geodesic_regression_budgets(manifold, x, y, *, budgets, **kwargs):
    r"""One :func:`private_geodesic_regression` release per budget pair, sampled together.

    The budget pairs share the data, the non-private fit, the bounds and the sensitivities;
    their Metropolis-Hastings chains run as one batched array with one step-size group per
    budget, which is several times faster than separate calls when many budgets are compared
    on one data set (budget-split studies). Each returned release is distributed exactly as the
    release of a separate call (only the random stream differs), with its own diagnostics.

    Every release is a separate use of the data: publishing several of them costs the sum of
    their ε (sequential composition).

    Parameters
    ----------
    budgets : sequence of (eps_p, eps_v)
        The budget pairs.
    **kwargs
        As for :func:`private_geodesic_regression` (all but ``eps_p`` and ``eps_v``).

    Returns
    -------
    list of Release
        One per budget pair, in order.
    """
    pairs = [(check_positive(p, "eps_p"), check_positive(v, "eps_v")) for p, v in budgets]
    if not pairs:
        raise ValueError("`budgets` must hold at least one (eps_p, eps_v) pair.")
    return _geodesic_regression_releases(manifold, x, y, pairs, stacklevel=3, **kwargs)


def _geodesic_regression_releases(
    manifold,
    x,
    y,
    budgets,
    *,
    tau=None,
    covariate_range=None,
    tau_m=None,
    n_vectors=1,
    mode="strict",
    rng=None,
    center=None,
    n_footpoints=1,
    max_speed=None,
    chain_length=2000,
    burn_in=1000,
    scheme=None,
    sampler="auto",
    stacklevel=2,
):
    """Body of :func:`private_geodesic_regression` for validated budget pairs."""
    m = check_manifold(manifold)
    mode = _check_mode(mode)
    if scheme is None:
        scheme = "joint" if mode == "strict" else "sequential"
    if scheme not in SCHEMES:
        raise ValueError(f"`scheme` must be one of {SCHEMES}, got {scheme!r}.")
    if sampler not in SAMPLERS:
        raise ValueError(f"`sampler` must be one of {SAMPLERS}, got {sampler!r}.")
    n_vectors = check_int(n_vectors, "n_vectors")
    n_footpoints = check_int(n_footpoints, "n_footpoints")
    check_limit("max_replicates", n_footpoints * n_vectors)
    check_limit("max_chain_length", check_int(chain_length, "chain_length"))
    check_limit("max_burn_in", check_int(burn_in, "burn_in", minimum=0))
    y = _check_responses(m, y)
    x = np.asarray(x, dtype=float)
    if x.shape != (y.shape[0],):
        raise ValueError(f"`x` must have shape ({y.shape[0]},) to match `y`, got {x.shape}.")
    if not np.all(np.isfinite(x)):
        raise ValueError("`x` contains NaN or infinite values.")
    gen, seeded = _resolve_rng(rng)
    kappa_low = m.curvature_bounds[0]
    needs_ball = kappa_low < 0 or not m.is_compact
    assumptions, caveats, leaks = {}, [SEQUENTIAL_CAVEAT], []

    # --- covariate range -------------------------------------------------------------
    if covariate_range is None:
        if mode == "strict":
            raise ValueError("Strict mode needs a public `covariate_range=(low, high)`.")
        covariate_range = (float(x.min()), float(x.max()))
        leaks.append("covariate_range")
        source = "data"
    else:
        source = "public"
    lo, hi = (float(c) for c in covariate_range)
    if not hi > lo:
        raise ValueError(f"`covariate_range` must satisfy low < high, got {(lo, hi)}.")
    assumptions["covariate_range"] = _assumption([lo, hi], source)
    t = (np.clip(x, lo, hi) - lo) / (hi - lo)

    # --- public ball for the responses ------------------------------------------------
    if center is None:
        center = default_center(m) if isinstance(m, (Euclidean, SPD, Hyperbolic)) else None
        center_source = "public default"
    else:
        center = np.asarray(center, dtype=float)
        center_source = "public"
    if needs_ball:
        if center is None:
            raise ValueError(f"Pass a public `center` for the response ball on {m!r}.")
        if tau_m is None:
            if mode == "strict":
                raise ValueError(
                    f"Strict mode on {m!r} needs `tau_m`, the radius of a public ball about "
                    "`center` holding the responses."
                )
            tau_m = float(np.max(m.dist(y, center)))
            leaks.append("tau_m")
            assumptions["tau_m"] = _assumption(tau_m, "data")
        else:
            tau_m = check_positive(tau_m, "tau_m")
            assumptions["tau_m"] = _assumption(tau_m, "public")
            if mode == "strict":
                y = project_to_ball(m, y, center, tau_m)
        assumptions["center"] = _assumption(np.asarray(center), center_source)

    if tau is None and mode == "strict":
        raise ValueError("Strict mode needs a public residual bound `tau`.")
    # --- non-private fit: paper mode's chains and bounds start from it; a strict joint
    # release never touches it (no data-dependent refusal, no chain started at the estimate).
    p_hat = v_hat = None
    if mode == "paper" or scheme == "sequential":
        fit = GeodesicRegression(m, covariate_range=(0.0, 1.0), tol=1e-8).fit(t, y)
        p_hat, v_hat = fit.footpoint_, fit.shooting_vector_

    # --- residual bound -----------------------------------------------------------------
    if tau is None:
        tau = float(np.max(m.dist(m.exp(p_hat, m.pointwise(t) * v_hat), y)))
        tau = max(tau, 1e-12)
        leaks.append("tau")
        assumptions["tau"] = _assumption(tau, "data", "largest residual of the non-private fit")
    else:
        tau = check_positive(tau, "tau")
        assumptions["tau"] = _assumption(
            tau, "public", "residuals clipped to this norm" if mode == "strict" else None
        )
    clip = tau if mode == "strict" else None

    delta_p, delta_v = geodesic_regression_sensitivity(
        y.shape[0], tau, kappa_low, tau_m if kappa_low < 0 else None
    )
    sigma_rule = "rigorous" if mode == "strict" else "paper"

    # --- supports -----------------------------------------------------------------------
    if max_speed is None:
        max_speed = m.diameter if m.is_compact else 2.0 * (tau_m + tau)
        speed_source = "derived" if mode == "strict" else "derived from data bounds"
    else:
        max_speed = check_positive(max_speed, "max_speed")
        speed_source = "public"
    foot_support = None
    if needs_ball:
        foot_support = (center, tau_m + tau)
        assumptions["footpoint_support"] = _assumption(
            tau_m + tau, "derived", "footpoints restricted to B_{tau_m + tau}(center), app. C"
        )
    if mode == "strict":
        assumptions["max_speed"] = _assumption(max_speed, speed_source,
                                               "shooting vectors restricted to this norm")
    speed_cap = max_speed if mode == "strict" else None
    v_start = None
    if p_hat is not None:
        v_norm = float(m.norm(p_hat, v_hat))
        v_start = v_hat if (speed_cap is None or v_norm <= speed_cap) else v_hat * (
            0.999 * speed_cap / v_norm)

    common = dict(lo=lo, hi=hi, mode=mode, seeded=seeded, assumptions=assumptions,
                  n=int(y.shape[0]), kappa_low=kappa_low)
    if scheme == "joint":
        delta_j = float(np.hypot(delta_p, delta_v))
        sigma_factor = 2.0 if sigma_rule == "rigorous" else 1.0
        smallest_sigma = sigma_factor * delta_j / max(ep + ev for ep, ev in budgets)
        refined = (refined_joint_available(m) and foot_support is not None
                   and clip is not None and speed_cap is not None)
        predicted = (len(budgets) * predicted_joint_kng_work(
            m, foot_support[1], speed_cap, tau, smallest_sigma, int(y.shape[0]),
            n_footpoints * n_vectors) if refined and mode == "strict" and sampler == "auto"
            else None)
        use_exact = _choose_exact(
            m, sampler, mode, clip=clip, speed_cap=speed_cap,
            g_max=(float(np.hypot(*regression_gradient_bounds(m, tau, speed_cap)))
                   if clip is not None and speed_cap is not None else None),
            sigma=smallest_sigma, n=int(y.shape[0]), draws=n_footpoints * n_vectors,
            what="joint (footpoint, shooting vector) KNG", stacklevel=stacklevel + 1,
            predicted_work=predicted, refined=refined)
        if p_hat is None:
            p_hat, v_start = _public_start(m, foot_support)
        releases = _joint_releases(m, budgets, t, y, p_hat, v_start, gen, delta_p=delta_p,
                                   delta_v=delta_v, sigma_rule=sigma_rule, clip=clip,
                                   foot_support=foot_support, speed_cap=speed_cap,
                                   n_draws=n_footpoints * n_vectors, chain_length=chain_length,
                                   burn_in=burn_in, exact=use_exact,
                                   caveats=[c for c in caveats if c != SEQUENTIAL_CAVEAT],
                                   **common)
        _warn_paper_mode(mode, leaks, stacklevel + 1)
        return releases
    if sampler == "exact":
        raise ExactSamplingUnavailable(
            "The sequential scheme has no exact sampler (its footpoint stage is not covered by "
            "the sensitivity proof either); use scheme='joint' for an exact, private release.")
    if mode == "strict":
        caveats = [SEQUENTIAL_STRICT_CAVEAT]

    # --- footpoints and shooting vectors, all budgets in one sampler run per stage -------
    kng_p = [KNormGradient(manifold=m, epsilon=ep, sensitivity=delta_p, sigma_rule=sigma_rule,
                           chain_length=chain_length, burn_in=burn_in) for ep, _ in budgets]
    kng_v = [KNormGradient(manifold=m, epsilon=ev, sensitivity=delta_v, sigma_rule=sigma_rule,
                           chain_length=chain_length, burn_in=burn_in) for _, ev in budgets]
    foot_shape = (n_footpoints, *m.point_shape)
    exact_path = isinstance(m, Euclidean) and clip is None
    if exact_path or len(budgets) == 1:
        feet = [k.regression_footpoint(t, y, p_hat, v_start, size=n_footpoints, rng=gen,
                                       tau=clip, support=foot_support) for k in kng_p]
    else:
        ball = None if foot_support is None else Ball.make(m, *foot_support)
        feet = regression_footpoints_many(kng_p, t, y, p_hat, v_start, size=n_footpoints,
                                          rng=gen, tau=clip, support=ball)
    footpoints = [np.asarray(f.values).reshape(foot_shape) for f in feet]
    v_inits = [m.transport(np.broadcast_to(p_hat, fp.shape), fp, v_start) for fp in footpoints]
    if exact_path or len(budgets) == 1:
        vecs = [k.regression_vector(t, y, fp, vi, size=n_vectors, rng=gen, tau=clip,
                                    max_norm=speed_cap)
                for k, fp, vi in zip(kng_v, footpoints, v_inits, strict=True)]
    else:
        vecs = regression_vectors_many(kng_v, t, y, np.concatenate(footpoints),
                                       np.concatenate(v_inits), n_vectors, gen, tau=clip,
                                       max_norm=speed_cap)
    _warn_paper_mode(mode, leaks, stacklevel + 1)
    releases = []
    for (eps_p, eps_v), fp, kp, kv, foot, vec in zip(budgets, footpoints, kng_p, kng_v, feet,
                                                     vecs, strict=True):
        vectors = np.asarray(vec.values).reshape((n_footpoints, n_vectors, *m.point_shape))
        guarantee_p = kp.guarantee(exact=foot.exact)
        guarantee_v = kv.guarantee(exact=vec.exact)
        n_draws_v = n_footpoints * n_vectors
        releases.append(_regression_release(
            m, fp, vectors, eps_p=eps_p, eps_v=eps_v, mechanism="kng_sequential",
            epsilon=n_footpoints * eps_p + n_draws_v * eps_v,
            delta=n_footpoints * guarantee_p["delta"] + n_draws_v * guarantee_v["delta"],
            exact=bool(foot.exact and vec.exact),
            delta_note=guarantee_p["delta_note"] or guarantee_v["delta_note"],
            sensitivity={"footpoint": delta_p, "shooting_vector": delta_v},
            sigma={"footpoint": kp.sigma, "shooting_vector": kv.sigma},
            diagnostics={
                "footpoint": {**foot.diagnostics, "exact": foot.exact, "sampler": foot.sampler},
                "shooting_vector": {**vec.diagnostics, "exact": vec.exact,
                                    "sampler": vec.sampler},
            },
            caveats=list(caveats), sigma_rule=guarantee_p["sigma_rule"],
            draws=f"{n_footpoints} footpoint(s) x {n_vectors} vector(s)",
            coverage="sequential", **common,
        ))
    return releases


def _choose_exact(m, sampler, mode, *, clip, speed_cap, g_max, sigma, n, draws, what,
                  stacklevel, support_ok=True, predicted_work=None, refined=False, warn=True):
    """Exact or MCMC, decided before sampling from public inputs only (DESIGN §12).

    The uniform-proposal sampler's worst-case expected cost over all data sets is ``draws * n
    * exp(g_max / sigma)`` gradient terms (:func:`~dpcore.sampling.rejection.
    worst_case_proposals`); the refined-envelope sampler's cost is predicted from a public
    model target (``predicted_work``, :func:`~dpcore.sampling.envelope.predict_refined_cost`).
    ``"auto"`` goes exact when either is within the ``max_exact_work`` limit.
    """
    if sampler == "mcmc":
        return False
    possible = (support_ok and (exact_support_available(m) or refined) and clip is not None
                and speed_cap is not None and g_max is not None)
    if sampler == "exact":
        if not possible:
            if not warn:
                return False
            raise ExactSamplingUnavailable(
                f"No exact sampler for the {what} on {m!r} in {mode} mode (exact rejection "
                "sampling needs strict mode and uniform proposals on the support: Sphere, "
                "KendallShape, SPD(2), Euclidean, Hyperbolic). Pass sampler='mcmc' for an "
                "approximately private release.")
        return True
    if mode == "paper" or not possible:
        return False
    work = exact_work(g_max, sigma, n, draws)
    limit = get_limits().max_exact_work
    if work <= limit or (predicted_work is not None and predicted_work <= limit):
        return True
    if not warn:
        return False
    warnings.warn(
        f"Exact sampling of the {what} could need up to {work:.3g} gradient terms (worst "
        f"case over data sets: {draws} draw(s) x n = {n} x exp(g_max/sigma) = "
        f"{worst_case_proposals(g_max, sigma):.3g} proposals per draw), above the limit "
        f"max_exact_work = {limit:,}. Using MCMC: the release is only approximately private. "
        "Pass sampler='exact' to insist, or lower n x epsilon / the number of draws.",
        ApproximatePrivacyWarning, stacklevel=stacklevel)
    return False


def plan_regression_sampler(manifold, n, *, eps_p, eps_v, tau, tau_m=None, max_speed=None,
                            draws=1, mode="strict", scheme=None, sampler="auto"):
    """What :func:`private_geodesic_regression` will run, from public inputs only.

    Lets a page say *before* sampling whether the release will be exact (labelled private) or
    MCMC (approximately private), and why.

    Parameters
    ----------
    manifold : Manifold
    n : int
        Number of observations (public: the release states it).
    eps_p, eps_v, tau, tau_m, max_speed, mode, scheme, sampler
        As for :func:`private_geodesic_regression`.
    draws : int
        ``n_footpoints * n_vectors``.

    Returns
    -------
    dict
        ``scheme``, ``exact`` (bool: the sampler that will run), ``exact_possible`` (an exact
        sampler exists here), ``worst_case_proposals`` (per draw), ``work`` (worst-case gradient
        terms), ``limit`` (``max_exact_work``) and ``guarantee`` (what the label will say).
    """
    m = check_manifold(manifold)
    mode = _check_mode(mode)
    scheme = ("joint" if mode == "strict" else "sequential") if scheme is None else scheme
    out = {"scheme": scheme, "exact": False, "exact_possible": False,
           "worst_case_proposals": None, "work": None, "limit": get_limits().max_exact_work}
    if scheme == "sequential" or mode == "paper" or tau is None:
        out["guarantee"] = ("not private" if mode == "paper" else "not covered")
        return out
    if max_speed is None:
        max_speed = m.diameter if m.is_compact else 2.0 * (float(tau_m or 0.0) + tau)
    dp, dv = geodesic_regression_sensitivity(int(n), tau, m.curvature_bounds[0],
                                             tau_m if m.curvature_bounds[0] < 0 else None)
    sigma = 2.0 * float(np.hypot(dp, dv)) / (eps_p + eps_v)
    g_max = float(np.hypot(*regression_gradient_bounds(m, tau, max_speed)))
    out["exact_possible"] = bool(exact_support_available(m))
    out["worst_case_proposals"] = worst_case_proposals(g_max, sigma)
    out["work"] = exact_work(g_max, sigma, n, draws)
    refined = refined_joint_available(m) and tau_m is not None
    predicted = (predicted_joint_kng_work(m, float(tau_m) + tau, max_speed, tau, sigma, int(n),
                                          draws)
                 if refined and sampler == "auto" else None)
    if predicted is not None:
        out["predicted_work"] = predicted
    # The release's own decision rule (_choose_exact), without its warning or error.
    out["exact"] = out["exact_possible"] and _choose_exact(
        m, sampler, mode, clip=tau, speed_cap=max_speed, g_max=g_max, sigma=sigma, n=int(n),
        draws=draws, what="plan", stacklevel=2, warn=False, predicted_work=predicted,
        refined=refined)
    out["guarantee"] = "private" if out["exact"] else "approximately private"
    return out


#: Relative cost of one gradient term (one log map) against the sphere's closed form, for the
#: work predictions: SPD and Kendall logs need eigen- or complex decompositions.
_TERM_COST = {"Sphere": 1.0, "Euclidean": 1.0, "Hyperbolic": 2.0}


def predicted_frechet_kng_work(manifold, center, radius, sigma, n, draws):
    """Public prediction of an exact (refined-envelope) Fréchet KNG release's work, in
    sphere-equivalent gradient terms: (envelope cells + draws x proposals per draw) x n."""
    from .sampling.envelope import NormalChart, frechet_gradient_lipschitz, predict_refined_cost

    cells, per_draw = predict_refined_cost(NormalChart(manifold, center), radius,
                                           frechet_gradient_lipschitz(manifold, radius), sigma,
                                           draws=draws)
    weight = _TERM_COST.get(type(manifold).__name__, 10.0)
    return (cells + draws * per_draw) * float(n) * weight


def predicted_joint_kng_work(manifold, radius, max_norm, tau, sigma, n, draws):
    """Public prediction of an exact (refined-envelope) joint regression release's work in
    gradient terms, ``(envelope cells + draws x proposals per draw) x n``.

    The envelope is built for a model data set with the release's public inputs only: at most
    64 covariates evenly spread on [0, 1] and responses on a flat line through the ball's
    centre (a target as concentrated as real data's, whose gradient also vanishes at the
    fit). The data's own envelope differs (a timing side channel, not a change of the output's
    law); this only says before sampling whether the request is within reach.
    """
    from .sampling.envelope import (
        ProductBallDomain,
        RefinedEnvelope,
        regression_joint_lipschitz,
    )

    k = int(min(int(n), 64))
    t = (np.arange(k) + 0.5) / k
    y = np.zeros((k, *manifold.point_shape))

    def model(z):
        gp, gv = regression_gradient(manifold, z[:, 0], z[:, 1], t, y, tau=tau)
        return np.sqrt(manifold.norm(z[:, 0], gp) ** 2 + manifold.norm(z[:, 0], gv) ** 2)

    env = RefinedEnvelope(None, None, model, regression_joint_lipschitz(t), sigma,
                          domain=ProductBallDomain(np.zeros(manifold.dim), radius, max_norm),
                          n_terms=k, draws=draws)
    per_draw = 1.0 / max(env.acceptance_lower_bound(), 1e-300)
    return (env.centers.shape[0] + float(draws) * per_draw) * float(n)


def exact_work(g_max, sigma, n, draws):
    """Public worst-case expected work (gradient terms) of an exact KNG release."""
    return float(draws) * float(n) * worst_case_proposals(g_max, sigma)


def _public_start(m, foot_support):
    """A data-independent chain start ``(p, 0)`` for strict-mode MCMC: the public centre."""
    if foot_support is not None:
        p0 = np.asarray(foot_support[0], dtype=float)
    elif isinstance(m, Sphere):
        p0 = np.eye(m.dim + 1)[-1]
    else:
        p0 = m.random_point(rng=np.random.default_rng(0))
    return p0, np.zeros_like(p0)


def _warn_paper_mode(mode, leaks, stacklevel):
    if mode == "paper":
        warnings.warn(
            "Paper mode: " + (f"bounds taken from the data ({', '.join(leaks)}); " if leaks else "")
            + "KNG uses sigma = Delta/epsilon. The release is not differentially private.",
            PrivacyLeakWarning, stacklevel=stacklevel,
        )


def _joint_releases(m, budgets, t, y, p_hat, v_start, gen, *, delta_p, delta_v, sigma_rule,
                    clip, foot_support, speed_cap, n_draws, chain_length, burn_in, caveats,
                    exact=False, **common):
    """Releases of ``scheme="joint"``: one KNG over (p, v) per budget pair, all in one run."""
    delta_j = float(np.hypot(delta_p, delta_v))
    kng = [KNormGradient(manifold=m, epsilon=ep + ev, sensitivity=delta_j,
                         sigma_rule=sigma_rule, chain_length=chain_length, burn_in=burn_in)
           for ep, ev in budgets]
    ball = None if foot_support is None else Ball.make(m, *foot_support)
    if exact:
        draws = regression_joint_exact(kng, t, y, size=n_draws, rng=gen, tau=clip,
                                       support=ball, max_norm=speed_cap)
    elif isinstance(m, Euclidean) and clip is None and speed_cap is None and ball is None:
        draws = [k.regression_joint(t, y, p_hat, v_start, size=n_draws, rng=gen) for k in kng]
    else:
        draws = regression_joint_many(kng, t, y, p_hat, v_start, size=n_draws, rng=gen,
                                      tau=clip, support=ball, max_norm=speed_cap)
    releases = []
    for (eps_p, eps_v), k, res in zip(budgets, kng, draws, strict=True):
        values = np.asarray(res.values)
        g = k.guarantee(exact=res.exact)
        releases.append(_regression_release(
            m, values[:, 0], values[:, 1][:, None], eps_p=eps_p, eps_v=eps_v,
            mechanism="kng_joint", epsilon=n_draws * (eps_p + eps_v), delta=n_draws * g["delta"],
            exact=res.exact, delta_note=g["delta_note"],
            sensitivity={"joint": delta_j, "footpoint": delta_p, "shooting_vector": delta_v},
            sigma={"joint": k.sigma},
            diagnostics={"joint": {**res.diagnostics, "exact": res.exact,
                                   "sampler": res.sampler}},
            caveats=list(caveats), sigma_rule=g["sigma_rule"],
            draws=f"{n_draws} (footpoint, vector) pair(s)",
            coverage="proven" if res.exact else "mcmc", **common,
        ))
    return releases


def _regression_release(m, footpoints, vectors, *, eps_p, eps_v, mechanism, epsilon, delta,
                        exact, delta_note, sensitivity, sigma, diagnostics, caveats, sigma_rule,
                        draws, lo, hi, mode, seeded, assumptions, n, kappa_low, coverage):
    """The :class:`Release` of one budget pair from its footpoints ``(m, *ps)`` and vectors
    ``(m, r, *ps)`` (rescaled covariate units)."""
    n_footpoints, n_vectors = vectors.shape[:2]
    # --- back to the original covariate units (as GeodesicRegression does) ----------------
    fp_b = np.broadcast_to(footpoints[:, None], vectors.shape)
    intercepts = m.exp(fp_b, (-lo / (hi - lo)) * vectors)
    coefs = m.transport(fp_b, intercepts, vectors) / (hi - lo)
    if not exact:
        caveats.append(MCMC_CAVEAT)
        delta = None
        if coverage == "proven":
            coverage = "mcmc"
    if n_footpoints > 1 or n_vectors > 1:
        caveats.append(
            f"{draws} drawn: each geodesic costs epsilon_p + epsilon_v = {eps_p + eps_v:g}; "
            f"publishing all of them costs epsilon = {epsilon:g}."
        )
    if seeded:
        caveats.append(SEEDED_CAVEAT)
    if mode == "paper":
        caveats.append(PAPER_CAVEAT)
    return Release(
        values={
            "footpoint": footpoints,
            "shooting_vector": vectors,
            "intercept": intercepts,
            "coef": coefs,
        },
        mechanism=mechanism,
        epsilon=float(epsilon),
        delta=None if delta is None else float(delta),
        mu=None,
        sensitivity=sensitivity,
        sigma=sigma,
        assumptions=dict(assumptions),
        diagnostics=diagnostics,
        mode=mode,
        seeded=seeded,
        caveats=caveats,
        coverage=coverage,
        details={
            "scheme": "joint" if mechanism == "kng_joint" else "sequential",
            "epsilon_p": eps_p,
            "epsilon_v": eps_v,
            "epsilon_per_geodesic": eps_p + eps_v,
            "n": n,
            "n_footpoints": n_footpoints,
            "n_vectors": n_vectors,
            "sigma_rule": sigma_rule,
            "kappa_low": kappa_low,
            "manifold": repr(m),
        },
    )


# ---------------------------------------------------------------------- Fréchet mean
def private_frechet_mean(
    manifold,
    y,
    *,
    epsilon=None,
    mu=None,
    mechanism="laplace",
    radius=None,
    center=None,
    mode="strict",
    rng=None,
    n_draws=1,
    project=True,
    chain_length=2000,
    burn_in=1000,
    sampler="auto",
):
    r"""Private Fréchet mean of points in a ball :math:`B_r(m_0)`.

    Parameters
    ----------
    manifold : Manifold
    y : array-like, shape (n, *point_shape)
    epsilon : float
        Pure-DP budget (Laplace, KNG, ambient Laplace). For ``"gaussian"`` an ``epsilon`` is
        converted to the equivalent µ = eps_to_mu(ε) (paper 004 §5.2).
    mu : float
        GDP budget for ``"gaussian"``.
    mechanism : {"laplace", "kng", "gaussian", "ambient_laplace"}
    radius, center : public ball holding the data (strict mode: required; points outside are
        projected onto it). ``radius`` must be below r* (paper 001 Thm 2).
    mode : {"strict", "paper"}
    rng : None (OS entropy), seed or Generator.
    n_draws : int
        Number of independent private means (each costs the budget).
    project : bool
        Ambient Laplace only: map the noisy result back onto the manifold.
    chain_length, burn_in : int
        KNG's Metropolis-Hastings settings when it runs by MCMC.
    sampler : {"auto", "exact", "mcmc"}
        KNG only, as in :func:`private_geodesic_regression`: exact rejection sampling on the
        public ball (δ = 0; worst case :math:`e^{2r/\sigma}` proposals per draw), or MCMC
        (labelled approximately private).

    Returns
    -------
    Release
        ``values["mean"]`` has shape ``(n_draws, *point_shape)``; the ambient mechanism also
        gives ``ambient`` (before projection) and ``left_manifold``.
    """
    m = check_manifold(manifold)
    mode = _check_mode(mode)
    if sampler not in SAMPLERS:
        raise ValueError(f"`sampler` must be one of {SAMPLERS}, got {sampler!r}.")
    if mechanism not in FRECHET_MECHANISMS:
        raise ValueError(f"`mechanism` must be one of {FRECHET_MECHANISMS}, got {mechanism!r}.")
    n_draws = check_int(n_draws, "n_draws")
    check_limit("max_replicates", n_draws)
    if mechanism == "kng":
        check_limit("max_chain_length", check_int(chain_length, "chain_length"))
        check_limit("max_burn_in", check_int(burn_in, "burn_in", minimum=0))
    y = _check_responses(m, y)
    n = y.shape[0]
    gen, seeded = _resolve_rng(rng)
    assumptions, caveats, leaks = {}, [], []

    if mechanism == "gaussian":
        if (epsilon is None) == (mu is None):
            raise ValueError("The Gaussian mechanism needs exactly one of `mu` and `epsilon`.")
        if mu is None:
            from .privacy import eps_to_mu

            mu = float(eps_to_mu(check_positive(epsilon, "epsilon")))
            caveats.append("mu is the GDP equivalent of the given epsilon (paper 004 §5.2).")
        mu = check_positive(mu, "mu")
        epsilon = None
    else:
        if mu is not None:
            raise ValueError(f"`mu` applies to the Gaussian mechanism only, not {mechanism!r}.")
        if epsilon is None:
            raise ValueError(f"The {mechanism} mechanism needs `epsilon`.")
        epsilon = check_positive(epsilon, "epsilon")

    # --- public ball -------------------------------------------------------------------
    if center is None:
        if mode == "strict":
            raise ValueError("Strict mode needs the public `center` of the ball holding the data.")
        center = frechet_mean(m, y)
        leaks.append("center")
        assumptions["center"] = _assumption(center, "data")
    else:
        center = np.asarray(center, dtype=float)
        assumptions["center"] = _assumption(center, "public")
    if radius is None:
        if mode == "strict":
            raise ValueError("Strict mode needs the public `radius` of the ball holding the data.")
        radius = float(np.max(m.dist(y, center))) * (1 + 1e-9) + 1e-12
        leaks.append("radius")
        assumptions["radius"] = _assumption(radius, "data")
    else:
        radius = check_positive(radius, "radius")
        assumptions["radius"] = _assumption(radius, "public", "points projected onto the ball"
                                            if mode == "strict" else None)
    ball = Ball.make(m, center, radius)
    if mode == "strict":
        y = project_to_ball(m, y, center, radius)
    kappa_high = m.curvature_bounds[1]
    inj = m.injectivity_radius
    mean = frechet_mean(m, y)
    sensitivity, sigma, mu_out, delta = {}, {}, None, 0.0
    diagnostics, values = {}, {}
    coverage = "proven"

    if mechanism == "laplace":
        delta_m = frechet_mean_sensitivity(n, radius, kappa_high, inj)
        support = None
        sigma_free = delta_m / epsilon
        # Whole space only with a margin: the radial tail decays like exp(-(1/sigma - g) r)
        # (g the volume growth rate), and for 1/sigma near g the draws reach distances that
        # overflow float64 (non-SPD "means" found by the audit). Require 1/sigma >= 2 g, a
        # public condition; otherwise restrict to the public ball.
        if not _laplace_integrable(m, 2.0 * sigma_free):
            support = ball.as_tuple()
            caveats.append("Support restricted to the public ball (on the whole space the "
                           "density is not integrable, or its tail too heavy to sample in "
                           "float64, at this epsilon); sigma = 2 Delta/epsilon.")
        mech = RiemannianLaplace(manifold=m, epsilon=epsilon, sensitivity=delta_m,
                                 support=support)
        res = mech.release(mean, size=n_draws, rng=gen)
        sensitivity["mean"], sigma["mean"] = delta_m, mech.sigma
        diagnostics = {"exact": res.exact, "sampler": res.sampler}
        values["mean"] = res.values
        total_eps = n_draws * epsilon
        if not res.exact:
            coverage, delta = "mcmc", None
            caveats.append(MCMC_CAVEAT + " Here the eigen-radius vector of SPD(k >= 3) is "
                           "drawn by MCMC.")
    elif mechanism == "kng":
        delta_g = frechet_gradient_sensitivity(n, radius, kappa_high, inj)
        mech = KNormGradient(manifold=m, epsilon=epsilon, sensitivity=delta_g,
                             sigma_rule="rigorous" if mode == "strict" else "paper",
                             chain_length=chain_length, burn_in=burn_in)
        # Points and proposals lie in B_r(m0): |mean log_z y_i| <= max d(z, y_i) <= 2r.
        refined = refined_chart_available(m)
        predicted = (predicted_frechet_kng_work(m, center, radius, mech.sigma, n, n_draws)
                     if refined and mode == "strict" and sampler == "auto" else None)
        use_exact = _choose_exact(
            m, sampler, mode, clip=True, speed_cap=True, g_max=2.0 * radius,
            sigma=mech.sigma, n=n, draws=n_draws, what="Fréchet-mean KNG",
            stacklevel=3, support_ok=mode == "strict" or sampler == "exact",
            predicted_work=predicted, refined=refined)
        if use_exact:
            res = frechet_mean_exact([mech], y, size=n_draws, rng=gen, support=ball)[0]
        elif mode == "strict":
            # MCMC from the public centre, not from the data's mean.
            res = mech.frechet_mean(y, center, size=n_draws, rng=gen, support=ball.as_tuple())
        else:
            res = mech.frechet_mean(y, mean, size=n_draws, rng=gen, support=ball.as_tuple())
        delta = 0.0
        if not res.exact:
            coverage, delta = "mcmc", None
            caveats.append(MCMC_CAVEAT)
        sensitivity["gradient"], sigma["mean"] = delta_g, mech.sigma
        diagnostics = {**res.diagnostics, "exact": res.exact, "sampler": res.sampler}
        values["mean"] = res.values
        total_eps = n_draws * epsilon
    elif mechanism == "gaussian":
        delta_m = frechet_mean_sensitivity(n, radius, kappa_high, inj)
        mech = RiemannianGaussian(manifold=m, sensitivity=delta_m, mu=mu)
        res = mech.release(mean, size=n_draws, rng=gen)
        sensitivity["mean"], sigma["mean"] = delta_m, mech.sigma
        from .privacy import compose_gdp

        mu_out = float(compose_gdp([mu] * n_draws))
        delta = None
        diagnostics = {"exact": res.exact, "sampler": res.sampler,
                       "mu_accounting": mech.accounting}
        if not (isinstance(m, Euclidean) or (isinstance(m, Sphere) and m.dim == 1)):
            coverage = "monte_carlo"
            caveats.append(
                "sigma was calibrated to mu by Monte Carlo (paper 004 Algorithm 2, fixed seed, "
                "conservative by a few standard errors): a statistical estimate of the privacy "
                "profile, not a proof.")
        if not res.exact:
            coverage = "mcmc"
            caveats.append(MCMC_CAVEAT)
        values["mean"] = res.values
        total_eps = None
    else:  # ambient_laplace
        r_e = ambient_radius(m, center, radius)
        assumptions["ambient_radius"] = _assumption(r_e, "derived",
                                                    "Euclidean ball holding the geodesic ball")
        delta_e = 2.0 * r_e / n
        extrinsic = unembed(m, embed(m, y).mean(axis=0))
        mech = AmbientLaplace(manifold=m, epsilon=epsilon, sensitivity=delta_e, project=project)
        noisy = mech.release(extrinsic, size=n_draws, rng=gen)
        sensitivity["ambient_mean"], sigma["ambient"] = delta_e, mech.sigma
        diagnostics = {"exact": True, "sampler": noisy.sampler, **{
            k: v for k, v in noisy.diagnostics.items()
            if k not in ("left_manifold", "ambient_values")}}
        values["mean"] = noisy.values
        values["ambient"] = noisy.diagnostics["ambient_values"]
        values["left_manifold"] = noisy.diagnostics["left_manifold"]
        caveats.append("Ambient mechanism: releases the extrinsic (Euclidean) mean of the "
                       "embedded points plus Euclidean K-norm noise; sensitivity 2 r_E / n.")
        total_eps = n_draws * epsilon

    if n_draws > 1:
        caveats.append(f"{n_draws} independent draws: the budget is the total over all of them.")
    if seeded:
        caveats.append(SEEDED_CAVEAT)
    if mode == "paper":
        caveats.append(PAPER_CAVEAT)
        warnings.warn(
            "Paper mode: " + (f"bounds taken from the data ({', '.join(leaks)}); " if leaks else "")
            + "the release is not differentially private as stated.",
            PrivacyLeakWarning, stacklevel=2,
        )
    return Release(
        values=values,
        mechanism=mechanism,
        epsilon=None if total_eps is None else float(total_eps),
        delta=delta,
        mu=mu_out,
        sensitivity=sensitivity,
        sigma=sigma,
        assumptions=assumptions,
        diagnostics=diagnostics,
        mode=mode,
        seeded=seeded,
        caveats=caveats,
        coverage=coverage,
        details={"n": int(n), "n_draws": n_draws, "epsilon_per_draw": epsilon,
                 "mu_per_draw": mu, "manifold": repr(m)},
    )


__all__ = [
    "FRECHET_MECHANISMS",
    "MODES",
    "Release",
    "private_frechet_mean",
    "private_geodesic_regression",
    "private_geodesic_regression_budgets",
    "plan_regression_sampler",
    "project_to_ball",
]
