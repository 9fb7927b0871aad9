"""Private Fréchet means (papers 001, 004: Riemannian Laplace, KNG, Gaussian, ambient Laplace).
"""

from __future__ import annotations

import warnings

import numpy as np

from .._progress import report
from .._validation import check_int, check_manifold, check_positive
from ..exceptions import PrivacyLeakWarning
from ..learning import frechet_mean
from ..mechanisms import Ball
from ..privacy.gdp import compose_gdp
from ..settings import check_limit
from ._common import (
    _assumption,
    _check_mode,
    _check_responses,
    _resolve_rng,
    project_to_ball,
)
from .frechet_mechanisms import FrechetSetting, frechet_mechanism
from .record import (
    FLOAT_CAVEAT,
    PAPER_CAVEAT,
    SAMPLERS,
    SEEDED_CAVEAT,
    Release,
)
from .work import resolve_budget


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
    kind = frechet_mechanism(mechanism)
    n_draws = check_int(n_draws, "n_draws")
    check_limit("max_replicates", n_draws)
    resolve_budget(max_work)
    kind.check_settings(chain_length, burn_in)
    y = _check_responses(m, y)
    gen, seeded = _resolve_rng(rng)
    assumptions, leaks = {}, []
    epsilon, mu, sigma, caveats = kind.check_budget(epsilon, mu, sigma)

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
    setting = FrechetSetting(
        manifold=m, y=y, mean=frechet_mean(m, y), ball=ball, mode=mode, n_draws=n_draws,
        rng=gen, float_safe=float_safe, sampler=sampler, chain_length=chain_length,
        burn_in=burn_in, max_work=max_work, progress=progress, project=project)
    drawn = kind.draw_means(setting, epsilon=epsilon, mu=mu, sigma=sigma)
    assumptions.update(drawn.assumptions)
    caveats += drawn.caveats
    coverage, delta = drawn.coverage, drawn.delta
    diagnostics = {"compute_path": "numpy", **drawn.diagnostics}  # MCMC says if compiled
    mu = drawn.mu if drawn.mu is not None else mu
    mu_out = None if kind.pure else float(compose_gdp([mu] * n_draws))
    n = setting.n

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
        values=drawn.values,
        mechanism=kind.name,
        epsilon=kind.total_epsilon(epsilon, n_draws),
        delta=delta,
        mu=mu_out,
        sensitivity=drawn.sensitivity,
        sigma=drawn.sigma,
        assumptions=assumptions,
        diagnostics=diagnostics,
        mode=mode,
        seeded=seeded,
        caveats=caveats,
        coverage=coverage,
        details={"n": int(n), "n_draws": n_draws, "epsilon_per_draw": epsilon,
                 "mu_per_draw": mu, "manifold": repr(m)},
    )


