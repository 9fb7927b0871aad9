"""Private Fréchet means (papers 001, 004: Riemannian Laplace, KNG, Gaussian, ambient Laplace).
"""

from __future__ import annotations

import warnings

import numpy as np

from .._progress import report
from .._validation import check_int, check_manifold, check_positive
from ..exceptions import (
    PrivacyLeakWarning,
)
from ..learning import frechet_mean
from ..mechanisms import (
    AmbientLaplace,
    Ball,
    KNormGradient,
    RiemannianGaussian,
    RiemannianLaplace,
    ambient_radius,
    embed,
)
from ..mechanisms.kng import (
    frechet_mean_exact,
    refined_chart_available,
)
from ..mechanisms.laplace import _laplace_integrable, unembed
from ..sensitivity import (
    frechet_gradient_sensitivity,
    frechet_mean_sensitivity,
)
from ..settings import check_limit
from ._common import (
    _assumption,
    _check_mode,
    _check_responses,
    _resolve_rng,
    project_to_ball,
)
from .planning import (
    _choose_exact,
    exact_work,
    frechet_exact_bound,
    predicted_frechet_kng_work,
    within_limit,
)
from .record import (
    FLOAT_CAVEAT,
    FRECHET_MECHANISMS,
    MCMC_CAVEAT,
    PAPER_CAVEAT,
    SAMPLERS,
    SEEDED_CAVEAT,
    Release,
)
from .work import check_work, frechet_kng_work, resolve_budget


# ---------------------------------------------------------------------- Fréchet mean
def _float_safety(result):
    """The public float-safety facts of a mechanism result (DESIGN §12)."""
    keep = ("float_safety", "lattice_spacing", "truncation_slack")
    return {k: result.diagnostics[k] for k in keep if k in result.diagnostics}


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
    sigma=None,
    max_work=None,
    progress=None,
    float_safe=True,
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
    sigma : float, optional
        ``"gaussian"`` only, instead of ``mu`` or ``epsilon``: the rate σ of the noise. Its µ
        is then computed for the proven sensitivity (exactly on R^d and S¹; elsewhere by
        Monte Carlo, paper 004 Algorithm 2, recorded as the estimate plus 3 standard errors,
        the margin :func:`~dpcore.privacy.calibrate_sigma` uses).
    max_work : float, optional
        KNG only: work budget in seconds of estimated run time (:mod:`dpcore.release.work`);
        a request estimated above it is refused before sampling with a
        :class:`~dpcore.exceptions.WorkBudgetError`. None: the default budget
        (:data:`~dpcore.release.work.DEFAULT_WORK_BUDGET`); ``float("inf")``: no limit.
    progress : callable, optional
        ``progress(fraction)`` with the finished fraction of the release, in ``[0, 1]``
        (:mod:`dpcore._progress`): KNG reports as its exact sampler accepts draws or as its
        chains step; the other mechanisms, which draw in closed form or by one-dimensional
        radial samplers, report at the end. It ends at 1.0; an exception it raises (a user
        interface's cancel) propagates, and nothing is released.
    float_safe : bool
        Laplace, Gaussian and ambient Laplace: draw on a public lattice where that sampler
        applies (:mod:`dpcore.sampling.lattice`; default). ``False`` uses the faster radial
        samplers, whose output floats depend on the data: the law is the same, the release is
        labelled approximately private (for Monte Carlo studies, never for publication).

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
    resolve_budget(max_work)
    if mechanism == "kng":
        check_limit("max_chain_length", check_int(chain_length, "chain_length"))
        check_limit("max_burn_in", check_int(burn_in, "burn_in", minimum=0))
    y = _check_responses(m, y)
    n = y.shape[0]
    gen, seeded = _resolve_rng(rng)
    assumptions, caveats, leaks = {}, [], []

    if sigma is not None and mechanism != "gaussian":
        raise ValueError(f"`sigma` applies to the Gaussian mechanism only, not {mechanism!r}.")
    if mechanism == "gaussian" and sigma is not None:
        if epsilon is not None or mu is not None:
            raise ValueError("Give the Gaussian mechanism one of `mu`, `epsilon` and `sigma`.")
        sigma_in = check_positive(sigma, "sigma")
    elif mechanism == "gaussian":
        sigma_in = None
        if (epsilon is None) == (mu is None):
            raise ValueError("The Gaussian mechanism needs exactly one of `mu` and `epsilon`.")
        if mu is None:
            from ..privacy import eps_to_mu

            mu = float(eps_to_mu(check_positive(epsilon, "epsilon")))
            caveats.append("mu is the GDP equivalent of the given epsilon (paper 004 §5.2).")
        mu = check_positive(mu, "mu")
    if mechanism == "gaussian":
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
        # The mean of data in the public ball lies in it: a public ball for a float-safe
        # (lattice) release on non-compact spaces (dpcore.sampling.lattice).
        mech = RiemannianLaplace(manifold=m, epsilon=epsilon, sensitivity=delta_m,
                                 support=support, public_ball=ball.as_tuple())
        res = mech.release(mean, size=n_draws, rng=gen, float_safe=float_safe)
        sensitivity["mean"], sigma["mean"] = delta_m, mech.sigma
        diagnostics = {"exact": res.exact, "sampler": res.sampler, **_float_safety(res)}
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
        # A forced exact release is refused in _choose_exact, before any sampling, when the
        # public worst-case work of its sampler is above the limit and the refined envelope's
        # public prediction (the one "auto" reads) is not within it (public inputs only).
        forced_bound = (frechet_exact_bound(m, center=center, radius=radius, sigma=mech.sigma,
                                            n=n, draws=n_draws)
                        if sampler == "exact" else None)
        predicted = (predicted_frechet_kng_work(m, center, radius, mech.sigma, n, n_draws)
                     if refined and mode == "strict" and (
                         sampler == "auto" or forced_bound is not None
                         and not within_limit(forced_bound.terms)) else None)
        use_exact = _choose_exact(
            m, sampler, mode, clip=True, speed_cap=True, g_max=2.0 * radius,
            sigma=mech.sigma, n=n, draws=n_draws, what="Fréchet-mean KNG",
            stacklevel=3, support_ok=mode == "strict" or sampler == "exact",
            predicted_work=predicted, refined=refined, exact_bound=forced_bound)
        check_work(frechet_kng_work(
            m, n, draws=n_draws, chain_length=chain_length, burn_in=burn_in,
            exact_terms=None if not use_exact else (
                predicted if predicted is not None
                else exact_work(2.0 * radius, mech.sigma, n, n_draws)),
            exact_worst_case=predicted is None), max_work)
        if use_exact:
            res = frechet_mean_exact([mech], y, size=n_draws, rng=gen, support=ball,
                                     progress=progress)[0]
        elif mode == "strict":
            # MCMC from the public centre, not from the data's mean.
            res = mech.frechet_mean(y, center, size=n_draws, rng=gen, support=ball.as_tuple(),
                                    progress=progress)
        else:
            res = mech.frechet_mean(y, mean, size=n_draws, rng=gen, support=ball.as_tuple(),
                                    progress=progress)
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
        if sigma_in is None:
            mech = RiemannianGaussian(manifold=m, sensitivity=delta_m, mu=mu)
        else:
            mech = RiemannianGaussian(manifold=m, sensitivity=delta_m, sigma=sigma_in)
            mu = float(mech.mu + 3.0 * mech.mu_standard_error)
            if not np.isfinite(mu):
                raise ValueError(
                    f"At sigma = {sigma_in:g} and sensitivity {delta_m:.4g} the Monte Carlo "
                    "estimate of mu does not resolve (the neighbouring outputs never overlap "
                    "in its samples): raise sigma.")
            if mech.mu_standard_error:
                caveats.append(f"mu = {mech.mu:.4g} + 3 x {mech.mu_standard_error:.2g} "
                               "(Monte Carlo estimate at the given sigma plus 3 standard "
                               "errors).")
        res = mech.release(mean, size=n_draws, rng=gen, float_safe=float_safe)
        sensitivity["mean"], sigma["mean"] = delta_m, mech.sigma
        from ..privacy import compose_gdp, exact_gdp_accounting

        mu_out = float(compose_gdp([mu] * n_draws))
        delta = None
        diagnostics = {"exact": res.exact, "sampler": res.sampler,
                       "mu_accounting": mech.accounting, **_float_safety(res)}
        if exact_gdp_accounting(m) is None:
            coverage = "monte_carlo"
            caveats.append(
                ("sigma was calibrated to mu" if sigma_in is None else "mu was estimated at sigma")
                + " by Monte Carlo (paper 004 Algorithm 2, fixed seed, conservative by a few "
                "standard errors): a statistical estimate of the privacy profile, not a proof.")
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
        mech = AmbientLaplace(manifold=m, epsilon=epsilon, sensitivity=delta_e, project=project,
                              public_ball=(embed(m, center), r_e))
        noisy = mech.release(extrinsic, size=n_draws, rng=gen, float_safe=float_safe)
        sensitivity["ambient_mean"], sigma["ambient"] = delta_e, mech.sigma
        diagnostics = {"exact": True, "sampler": noisy.sampler, **{
            k: v for k, v in noisy.diagnostics.items()
            if k not in ("left_manifold", "ambient_values")}}
        sigma_rule_note = ("sigma = Delta_E / (epsilon (1 - 1e-9)): the truncation slack of the "
                           "float-safe draw stays inside epsilon"
                           if "truncation_slack" in noisy.diagnostics else None)
        if sigma_rule_note:
            caveats.append(sigma_rule_note)
        values["mean"] = noisy.values
        values["ambient"] = noisy.diagnostics["ambient_values"]
        values["left_manifold"] = noisy.diagnostics["left_manifold"]
        caveats.append("Ambient mechanism: releases the extrinsic (Euclidean) mean of the "
                       "embedded points plus Euclidean K-norm noise; sensitivity 2 r_E / n.")
        total_eps = n_draws * epsilon

    report(progress, 1.0)
    if coverage in ("proven", "monte_carlo") and str(
            diagnostics.get("float_safety", "")).startswith("not float-safe"):
        # DESIGN §12: an exact law whose floats depend on the data is not private at delta = 0.
        coverage, delta = ("float" if coverage == "proven" else coverage), None
        caveats.append(FLOAT_CAVEAT)
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


