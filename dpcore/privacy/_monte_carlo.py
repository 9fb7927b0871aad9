r"""Monte Carlo GDP parameter of the Riemannian Gaussian mechanism (paper 004, Algorithm 2).

:func:`gdp_mu_monte_carlo` draws privacy losses at samples from two centres at distance Δ
(:func:`_privacy_losses`), estimates the privacy profile δ(ε) on a grid of ε by multiple
importance sampling or by the paper's difference of tails (:func:`_mc_profile`), solves µ_ε
for each ε and reports µ = max_ε µ_ε with its delete-one-repeat jackknife standard error
(:func:`_mu_from_losses`). A statistical estimate, not a proof; part of
:mod:`dpcore.privacy.profiles`, which re-exports it.
"""

from __future__ import annotations

import math

import numpy as np

from .._lazy import lazy_module
from .._validation import check_int, check_manifold, check_positive
from ..settings import check_limit
from .gdp import _check_sensitivity, _solve_mu

special = lazy_module("scipy.special")  # on first use

__all__ = ["gdp_mu_monte_carlo"]


def _mc_profile(losses_eta, losses_eta2, eps, estimator):
    """Per-repeat estimates of δ(ε) on the grid ``eps``, shape ``(repeats, len(eps))``.

    Each loss is placed into its cell of the sorted ε grid once with :func:`numpy.searchsorted`
    (cell c holds ε_c < L ≤ ε_{c+1}; losses ≤ ε_0 never enter a tail {L > ε_k}); per-cell sums
    over (repeat, cell) come from one :func:`numpy.bincount`, and the tail sums over
    {L > ε_k} are reverse cumulative sums over cells. There is no loop over ε.
    """
    repeats, n = losses_eta.shape
    n_eps = eps.size

    def cells(losses):
        cell = np.searchsorted(eps, losses, side="left") - 1
        keep = cell >= 0
        rows = np.broadcast_to(np.arange(repeats)[:, None], losses.shape)[keep]
        return rows * n_eps + cell[keep], cell[keep], losses[keep]

    def cell_sums(index, weights=None):
        sums = np.bincount(index, weights=weights, minlength=repeats * n_eps)
        return sums.reshape(repeats, n_eps)

    def tail(sums):
        return np.cumsum(sums[:, ::-1], axis=1)[:, ::-1]

    if estimator == "tails":
        # Paper 004, Algorithm 2, line 6: empirical P_η(L > ε) − e^ε P_η'(L > ε).
        t1 = tail(cell_sums(cells(losses_eta)[0]))
        t2 = tail(cell_sums(cells(losses_eta2)[0]))
        with np.errstate(over="ignore"):
            penalty = np.where(t2 > 0, np.exp(np.minimum(eps, 700.0)) * t2, 0.0)
        penalty = np.where((t2 > 0) & (eps > 700.0), np.inf, penalty)
        return (t1 - penalty) / n

    # Multiple importance sampling with the balance heuristic: the 2n losses are draws from the
    # mixture (P_η + P_η')/2, whose densities relative to it are 2 sigmoid(±L) because the
    # normalising constants agree on a homogeneous manifold (paper 004, Proposition 4.1). So
    #   δ(ε) = E_mix[1(L > ε) 2(sigmoid(L) − e^ε sigmoid(−L))],
    # estimated by (1/n) Σ_{L_i > ε} sigmoid(L_i)(1 − e^{ε − L_i}), each term in [0, 1).
    index, cell, losses = cells(np.concatenate([losses_eta, losses_eta2], axis=1))
    w = special.expit(losses)
    # e^{ε_k} Σ_{L_i > ε_k} sigmoid(−L_i) = Σ_{c ≥ k} e^{ε_k − ε_c} Σ_{i in c} e^{ε_c − L_i} w_i,
    # every exponent ≤ 0; the sum over cells is a reverse log-cumsum-exp.
    sv = cell_sums(index, w * np.exp(eps[cell] - losses))
    with np.errstate(divide="ignore"):
        log_terms = np.log(sv) - eps
    log_tail = np.logaddexp.accumulate(log_terms[:, ::-1], axis=1)[:, ::-1]
    with np.errstate(under="ignore"):
        return np.maximum(tail(cell_sums(index, w)) - np.exp(log_tail + eps), 0.0) / n


def _mu_of_profile(eps, delta, mu0=None):
    """µ_ε for profile estimates ``delta`` (shape ``(rows, n_eps)``), row by row."""
    with np.errstate(divide="ignore"):
        log_delta = np.log(np.clip(delta, 0.0, 1.0))  # the "tails" estimate can be negative
    return _solve_mu(np.broadcast_to(eps, delta.shape), log_delta, mu0=mu0)


#: The default top of the ε grid leaves this many losses per repeat beyond it (in |L|), but
#: never more than ``_TAIL_FRACTION`` of all losses.
_TAIL_PER_REPEAT = 20
_TAIL_FRACTION = 0.05


def _privacy_losses(manifold, sigma, sensitivity, n_samples, repeats, rng):
    """Privacy losses at samples from η and from η', each of shape ``(repeats, n_samples)``."""
    from ..sampling import sample_gaussian

    eta = manifold.random_point(rng=rng)
    u = manifold.random_tangent(eta, rng)
    eta2 = manifold.exp(eta, u * (sensitivity / manifold.norm(eta, u)))
    size = (repeats, n_samples)
    # Radii by numerical inversion (within 1e-10 of the exact law, far below the Monte Carlo
    # error; dpcore.sampling.inversion): several times faster than the exact sampler.
    y1 = sample_gaussian(manifold, eta, sigma, size, rng=rng, radial="inversion")
    y2 = sample_gaussian(manifold, eta2, sigma, size, rng=rng, radial="inversion")
    scale = 1.0 / (2 * sigma**2)
    l1 = (manifold.squared_dist(eta2, y1) - manifold.squared_dist(eta, y1)) * scale
    l2 = (manifold.squared_dist(eta2, y2) - manifold.squared_dist(eta, y2)) * scale
    return l1, l2


def _default_eps_max(l1, l2):
    """The ε with ``_TAIL_PER_REPEAT`` losses per repeat beyond it in |L| (see above)."""
    size = np.abs(np.concatenate([l1, l2], axis=1)).ravel()
    k = max(1, min(_TAIL_PER_REPEAT * l1.shape[0], int(_TAIL_FRACTION * size.size)))
    return float(np.partition(size, size.size - k)[size.size - k])


def _jackknife_candidates(eps, loo):
    """Grid points where some leave-one-out curve µ_ε can attain its maximum over ε.

    µ_ε increases with δ(ε), so the curves of the pointwise largest and smallest leave-one-out
    profiles bound every leave-one-out curve from above and below. Every curve's maximum is
    at least the largest value of the lower envelope, so only the ε where the upper envelope
    reaches that value can hold a maximum (a small slack absorbs the solver's tolerance).
    Solving the 2 envelopes first and then the leave-one-out curves at these ε alone gives the
    same maxima as solving them everywhere, at a fraction of the cost.
    """
    envelopes = _mu_of_profile(eps, np.stack([loo.max(axis=0), loo.min(axis=0)]))
    floor = float(np.max(envelopes[1]))
    keep = envelopes[0] >= floor - 1e-9 * (1.0 + abs(floor))
    return keep if keep.any() else np.ones(eps.shape, dtype=bool)


def _mu_from_losses(l1, l2, n_eps, estimator, eps_max):
    """µ and its jackknife standard error from the losses (see :func:`gdp_mu_monte_carlo`)."""
    repeats = l1.shape[0]
    if eps_max is None:
        eps_max = _default_eps_max(l1, l2)
    eps = np.linspace(0.0, eps_max, n_eps) if eps_max > 0 else np.zeros(1)
    if estimator == "tails":
        per_repeat = _mc_profile(l1, l2, eps, "tails")
    else:
        # With an isometry exchanging η and η', the loss at a sample from η' is distributed as
        # minus the loss at a sample from η, so the reverse profile estimate (losses negated,
        # roles swapped) estimates the same δ(ε); averaging the two reduces the variance.
        per_repeat = 0.5 * (_mc_profile(l1, l2, eps, "mis") + _mc_profile(-l2, -l1, eps, "mis"))
    total = per_repeat.sum(axis=0)
    curve = _mu_of_profile(eps, total[None, :] / repeats)[0]
    mu = float(np.max(curve))
    loo = (total[None, :] - per_repeat) / (repeats - 1)
    candidates = _jackknife_candidates(eps, loo)
    mu_loo = np.max(_mu_of_profile(eps[candidates], loo[:, candidates],
                                   mu0=curve[None, candidates]), axis=1)
    if not np.all(np.isfinite(mu_loo)):
        # A leave-one-out estimate that is unbounded (no repeat resolves µ at this σ) leaves
        # the spread unbounded too: an infinite standard error, never inf − inf = nan.
        return mu, math.inf
    se = math.sqrt((repeats - 1) / repeats * float(np.sum((mu_loo - mu_loo.mean()) ** 2)))
    return mu, se


def gdp_mu_monte_carlo(
    manifold,
    sigma,
    sensitivity,
    *,
    n_samples: int = 1000,
    n_eps: int = 1000,
    repeats: int = 100,
    eps_max=None,
    estimator: str = "mis",
    rng=None,
):
    r"""Monte Carlo GDP parameter µ of the Riemannian Gaussian mechanism (paper 004, Alg. 2).

    Fix a centre η and a neighbour η' = exp_η(Δ u) at distance Δ (u a random unit tangent
    vector), draw ``n_samples`` exact samples from the Riemannian Gaussian at each of them in
    each of ``repeats`` independent repeats, and evaluate the privacy loss
    L(y) = [d(η', y)² − d(η, y)²]/(2σ²) at every sample; on a homogeneous manifold the
    normalising constants cancel, so L is the exact log-likelihood ratio (paper 004,
    Proposition 4.1). The profile δ(ε) is estimated on a grid of ``n_eps`` values of ε and
    averaged over the repeats (Algorithm 2, line 9); µ_ε solves δ_{µ_ε}(ε) = δ(ε) and
    µ = max_ε µ_ε.

    Two estimators of δ(ε) are offered:

    - ``"mis"`` (default): multiple importance sampling. Because the likelihood ratio is known,
      both samples are draws from the mixture (P_η + P_η')/2 and
      δ̂(ε) = (1/n) Σ_{L_i > ε} sigmoid(L_i)(1 − e^{ε − L_i}) over all 2n losses: unbiased, each
      term in [0, 1), and far less variable at large ε than a difference of tails. The estimate
      is averaged with the same estimate for the reversed pair (η', η), which has the same
      profile when an isometry exchanges η and η'.
    - ``"tails"``: the paper's estimator, empirical P_η(L > ε) − e^ε P_η'(L > ε). Its e^ε factor
      amplifies the noise in the η' tail, so µ comes out too large for small σ (as paper 004
      reports for its Figure 1).

    The ε grid is evenly spaced on [0, ``eps_max``] and includes ε = 0 (on S¹ the maximum sits
    there). By default ``eps_max`` is where only 20 losses per repeat remain beyond it (the
    (20·repeats)-th largest |L|; at most the top 5 % of all |L| are cut off). Further out δ̂(ε)
    rests on a handful of samples, and the maximum over ε would pick up their noise
    (overestimating µ by several standard errors when µ_ε is flat, as on R^d) in a way the
    jackknife cannot see. The price: the profile beyond that point (δ of order 10/n_samples)
    is not examined, so a µ_ε that peaked only there would be missed. Pass ``eps_max`` to
    choose the range yourself, e.g. the largest possible loss Δ(2 diam M − Δ)/(2σ²) on a
    compact manifold.

    The standard error is the delete-one-repeat jackknife of the whole estimator (average the
    profiles of all repeats but one, take µ, and repeat for each left-out repeat). The maximum
    over ε of a noisy curve is biased upwards — the safe direction — by about one standard
    error where µ_ε is flat in ε; averaging the profiles before maximising keeps that bias
    small, whereas averaging per-repeat maxima would bias µ by many standard errors.

    Parameters
    ----------
    manifold : Manifold
        A homogeneous manifold (``manifold.is_homogeneous``) on which some isometry exchanges
        any two points at distance Δ, so that one pair (η, η') determines the guarantee
        (paper 004, Theorem 4.1). This holds on every Riemannian symmetric space, hence on all
        built-in homogeneous manifolds.
    sigma : float
        Rate σ > 0 of the mechanism.
    sensitivity : float
        Distance Δ > 0 between neighbouring outputs, at most the injectivity radius.
    n_samples : int, optional
        Samples per centre per repeat (n in the paper).
    n_eps : int, optional
        Number of ε values in the grid.
    repeats : int, optional
        Independent repeats (m in the paper), at least 2.
    eps_max : float, optional
        Top of the ε grid; default as described above.
    estimator : {"mis", "tails"}, optional
        Estimator of δ(ε), see above.
    rng : None, int or numpy.random.Generator, optional
        Randomness for the centre, the direction and the samples.

    Returns
    -------
    mu : float
        Estimated µ.
    standard_error : float
        Jackknife standard error of ``mu``.

    Notes
    -----
    Samples come from :func:`dpcore.sampling.sample_gaussian` with ``radial="inversion"``: the
    radius by numerical inversion of its CDF, within 1e-10 of the exact law in Kolmogorov
    distance (far below the Monte Carlo error) and several times faster than exact rejection.
    """
    check_manifold(manifold)
    if not manifold.is_homogeneous:
        raise ValueError(
            f"`manifold` must be homogeneous for the Monte Carlo GDP estimate, got {manifold!r}."
        )
    sigma = check_positive(sigma, "sigma")
    sensitivity = _check_sensitivity(sensitivity, float(manifold.injectivity_radius))
    n_samples = check_int(n_samples, "n_samples", minimum=1)
    n_eps = check_int(n_eps, "n_eps", minimum=2)
    repeats = check_int(repeats, "repeats", minimum=2)
    check_limit("max_mc_samples", n_samples * repeats)
    if eps_max is not None:
        eps_max = check_positive(eps_max, "eps_max")
    if estimator not in ("mis", "tails"):
        raise ValueError(f"`estimator` must be 'mis' or 'tails', got {estimator!r}.")
    rng = np.random.default_rng(rng)
    l1, l2 = _privacy_losses(manifold, sigma, sensitivity, n_samples, repeats, rng)
    return _mu_from_losses(l1, l2, n_eps, estimator, eps_max)
