r"""Disclosure risk of one release: what an attacker who starts at a prior can conclude.

The setting (DESIGN §8): neighbouring data sets differ in one row replaced. An attacker knows
every row but one and hesitates between two data sets: :math:`D`, in which a given person's
row is present (or holds a given value), and its neighbour :math:`D'`, in which another row
stands in its place. They believe :math:`D` with probability ``prior`` :math:`p` before the
release :math:`Y`, then update by Bayes' rule. The release's guarantee bounds what they can
conclude; each bound below is *tight*: some mechanism with exactly that guarantee attains it,
so nothing better can be said from the guarantee alone.

**Trade-off curves.** A guarantee is a lower bound :math:`f` on the errors of every test of
:math:`D'` against :math:`D` from :math:`Y`: a test that says ":math:`D`" with probability
:math:`\alpha` under :math:`D'` (false alarm) misses :math:`D` with probability
:math:`\beta \ge f(\alpha)` (f-DP, Dong, Roth and Su 2022). For (ε, δ)-DP
:math:`f_{\varepsilon,\delta}(\alpha) = \max\{0,\ 1-\delta-e^\varepsilon\alpha,\
e^{-\varepsilon}(1-\delta-\alpha)\}` (:func:`tradeoff_dp`), for µ-GDP
:math:`G_\mu(\alpha) = \Phi(\Phi^{-1}(1-\alpha)-\mu)`
(:func:`~dpcore.privacy.gdp.tradeoff_gdp`). Both are symmetric, and each is the exact
trade-off of a *canonical pair*: randomized response with :math:`\delta` extra mass on two
revealing outcomes (four outcomes), resp. :math:`N(\mu, 1)` against :math:`N(0, 1)`. By
Blackwell's theorem every mechanism with the guarantee is a post-processing of its canonical
pair, so a quantity that post-processing cannot increase is largest at the canonical pair.

**(a) The belief after any one release** (:func:`posterior_bound`). After a release in an event
:math:`S`, the posterior is :math:`p P_D(S) / (p P_D(S) + (1-p) P_{D'}(S))`. Reading :math:`S`
as a test with :math:`\alpha = P_{D'}(S)`, :math:`1 - \beta = P_D(S) \le 1 - f(\alpha)`, the
largest posterior is :math:`pL / (pL + 1 - p)` with
:math:`L = \sup_\alpha (1 - f(\alpha))/\alpha = -f'(0^+)` (:math:`1 - f` is concave and 0 at 0).
For pure ε-DP :math:`L = e^\varepsilon`:

.. math:: \text{belief} \le \frac{p e^\varepsilon}{p e^\varepsilon + 1 - p},

for every release, attained by randomized response. For δ > 0 and for µ-GDP :math:`L = \infty`:
the guarantee allows rare releases that leave the attacker (nearly) certain, and this bound
is 1.

**(a') The average belief** (:func:`average_posterior`): the expectation of the posterior
:math:`\pi(Y)` when :math:`D` holds, :math:`E_D[\pi(Y)] = \int \varphi(dP_D/dP_{D'})\,dP_{D'}`
with :math:`\varphi(r) = p r^2 / (p r + 1 - p)` convex: an f-divergence, which post-processing
cannot increase, so its largest value is the canonical pair's. For (ε, δ)-DP, with
:math:`\pi_\pm = p e^{\pm\varepsilon} / (p e^{\pm\varepsilon} + 1 - p)` and
:math:`q = e^\varepsilon / (1 + e^\varepsilon)`:

.. math:: E_D[\pi] \le \delta + (1 - \delta)\,(q \pi_+ + (1 - q) \pi_-);

for µ-GDP, :math:`E_D[\pi] \le E\,[\operatorname{expit}(\mu Z + \mu^2/2 + \operatorname{logit}
p)]`, :math:`Z \sim N(0, 1)` (the log-likelihood ratio of :math:`N(\mu, 1)` to
:math:`N(0, 1)` at a draw of :math:`N(\mu, 1)`), computed by the trapezoidal rule on a fine
grid (error far below 1e-9).

**(b) The best guess** (:func:`success_bound`): the largest probability, over the prior and the
release, that the attacker's guess ":math:`D`" or ":math:`D'`" is right. A (randomized)
guess is a test; it errs with probability :math:`(1-p)\alpha + p\beta`, so

.. math:: \text{success} \le 1 - \min_{\alpha \in [0, 1]} \big[(1-p)\,\alpha + p\,f(\alpha)\big]

(the symmetric form with :math:`p` and :math:`1 - p` exchanged is equal, :math:`f` being
symmetric). The objective is convex. For :math:`f_{\varepsilon,\delta}` it is piecewise linear
with vertices at :math:`\alpha \in \{0,\ (1-\delta)/(1+e^\varepsilon),\ 1-\delta\}`, hence

.. math:: \text{success} \le 1 - (1 - \delta)\min\{p,\ 1 - p,\ 1/(1 + e^\varepsilon)\},

at most δ above the pure bound; at :math:`p = 1/2` it is
:math:`(e^\varepsilon + \delta)/(1 + e^\varepsilon)`. For :math:`G_\mu`, with
:math:`t = \Phi^{-1}(1-\alpha)`, :math:`dG_\mu/d\alpha = -e^{\mu t - \mu^2/2}`, the minimum is
at :math:`t = \mu/2 + c/\mu`, :math:`c = \log((1-p)/p)`:

.. math:: \text{success} \le p\,\Phi(\mu/2 - c/\mu) + (1 - p)\,\Phi(\mu/2 + c/\mu),

:math:`\Phi(\mu/2)` at :math:`p = 1/2`. Guessing without the release is right with
probability :math:`\max(p, 1 - p)`, which every bound contains.

**(c) One person, k rows.** Group privacy (:func:`dpcore.privacy.ledger.group`): kε,
(kε, k e^{(k-1)ε} δ), kµ; :func:`disclosure_risk` applies it before the bounds.

**What is assumed.** The bounds are those of the release's guarantee, so they hold as far as it
does: exactly for an exact sampler (``guarantee`` "private"); for an approximately private
release (MCMC, δ not certified, or µ calibrated by Monte Carlo) they are computed at the
stated ε or µ and are *not guaranteed* (:attr:`DisclosureRisk.certified`). They concern one
release alone; a session's releases compose (:mod:`dpcore.privacy.accountant`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._lazy import lazy_module
from .._validation import check_nonnegative_array, check_probability
from .accountant import COMPOSING, GUARANTEES
from .ledger import group

special = lazy_module("scipy.special")  # imported on first use

__all__ = [
    "DisclosureRisk",
    "average_posterior",
    "disclosure_risk",
    "posterior_bound",
    "success_bound",
    "tradeoff_dp",
]

#: The standard-normal grid (step 0.005 on [-12, 12]) of the µ-GDP average belief.
_Z = np.linspace(-12.0, 12.0, 4801)
_W = np.exp(-0.5 * _Z ** 2) / math.sqrt(2.0 * math.pi) * (_Z[1] - _Z[0])


def _prior(prior):
    return check_probability(prior, "prior")  # in (0, 1): 0 and 1 leave nothing to learn


def _delta(delta):
    d = float(check_nonnegative_array(0.0 if delta is None else delta, "delta"))
    if d > 1.0:
        raise ValueError(f"`delta` must lie in [0, 1], got {delta!r}.")
    return d


def _guarantee(epsilon, delta, mu):
    """``("eps", ε array, δ)`` or ``("mu", µ array, 0)``; exactly one of ε and µ."""
    if (epsilon is None) == (mu is None):
        raise ValueError("Give exactly one of `epsilon` (ε-DP, with `delta`) and `mu` (µ-GDP).")
    d = _delta(delta)
    if mu is not None:
        return "mu", check_nonnegative_array(mu, "mu"), 0.0
    return "eps", check_nonnegative_array(epsilon, "epsilon"), d


def _out(arr, like):
    return float(arr) if np.ndim(like) == 0 else arr


def tradeoff_dp(alpha, epsilon, delta=0.0):
    r"""Trade-off curve of (ε, δ)-DP,
    :math:`f(\alpha) = \max\{0, 1 - \delta - e^\varepsilon\alpha,
    e^{-\varepsilon}(1 - \delta - \alpha)\}`.

    Parameters
    ----------
    alpha : float or array_like
        Type I error(s) in [0, 1].
    epsilon : float
        ε ≥ 0.
    delta : float
        δ in [0, 1].

    Returns
    -------
    float or ndarray
        The smallest type II error of a test at type I error ``alpha``.
    """
    a = check_nonnegative_array(alpha, "alpha")
    if np.any(a > 1):
        raise ValueError("`alpha` must be at most 1.")
    e = float(check_nonnegative_array(epsilon, "epsilon"))
    d = _delta(delta)
    grow = math.exp(min(e, 700.0))
    out = np.maximum.reduce([np.zeros_like(a), 1.0 - d - grow * a,
                             (1.0 - d - a) / grow])
    return _out(out, alpha)


def posterior_bound(prior, *, epsilon=None, delta=0.0, mu=None):
    r"""Largest belief in :math:`D` after any one release, from prior ``prior``.

    :math:`p e^\varepsilon / (p e^\varepsilon + 1 - p)` for pure ε-DP (δ = 0), for every
    release; 1 for δ > 0 and for µ-GDP with µ > 0 (no bound below certainty; see the module
    notes, (a)). ``prior`` itself at ε = 0 or µ = 0.

    Parameters
    ----------
    prior : float
        The attacker's belief in :math:`D` before the release, in (0, 1).
    epsilon, delta : float or array_like, optional
        ε (array_like for a curve) and δ of (ε, δ)-DP.
    mu : float or array_like, optional
        µ of µ-GDP (instead of ε).

    Returns
    -------
    float or ndarray
    """
    p = _prior(prior)
    kind, value, d = _guarantee(epsilon, delta, mu)
    if kind == "eps" and d == 0.0:
        out = special.expit(value + special.logit(p))
    else:
        out = np.where(value > 0, 1.0, p)
    return _out(np.asarray(out, dtype=float), value)


def average_posterior(prior, *, epsilon=None, delta=0.0, mu=None):
    r"""Largest average belief in :math:`D` when :math:`D` holds, from prior ``prior``.

    :math:`\delta + (1-\delta)(q\pi_+ + (1-q)\pi_-)` for (ε, δ)-DP; the canonical Gaussian
    pair's :math:`E[\operatorname{expit}(\mu Z + \mu^2/2 + \operatorname{logit} p)]` for µ-GDP
    (module notes, (a')).

    Parameters
    ----------
    prior : float
        In (0, 1).
    epsilon, delta, mu : float or array_like, optional
        As :func:`posterior_bound`.

    Returns
    -------
    float or ndarray
    """
    p = _prior(prior)
    kind, value, d = _guarantee(epsilon, delta, mu)
    lp = special.logit(p)
    if kind == "eps":
        q = special.expit(value)
        out = d + (1.0 - d) * (q * special.expit(lp + value)
                               + (1.0 - q) * special.expit(lp - value))
    else:
        m = np.asarray(value, dtype=float)[..., None]
        with np.errstate(invalid="ignore"):  # µ = inf: replaced below
            out = np.sum(_W * special.expit(m * _Z + 0.5 * m ** 2 + lp), axis=-1)
        out = np.where(np.isposinf(value), 1.0, out)
    return _out(np.clip(out, p, 1.0), value)


def success_bound(prior, *, epsilon=None, delta=0.0, mu=None):
    r"""Largest chance that the attacker's guess, :math:`D` or :math:`D'`, is right.

    :math:`1 - (1-\delta)\min\{p, 1-p, 1/(1+e^\varepsilon)\}` for (ε, δ)-DP;
    :math:`p\Phi(\mu/2 - c/\mu) + (1-p)\Phi(\mu/2 + c/\mu)`, :math:`c = \log((1-p)/p)`, for
    µ-GDP (module notes, (b)).

    Parameters
    ----------
    prior : float
        In (0, 1).
    epsilon, delta, mu : float or array_like, optional
        As :func:`posterior_bound`.

    Returns
    -------
    float or ndarray
    """
    p = _prior(prior)
    kind, value, d = _guarantee(epsilon, delta, mu)
    if kind == "eps":
        out = 1.0 - (1.0 - d) * np.minimum(min(p, 1.0 - p), special.expit(-value))
    else:
        c = math.log((1.0 - p) / p)
        with np.errstate(divide="ignore", invalid="ignore"):
            m = np.asarray(value, dtype=float)
            out = (p * special.ndtr(m / 2.0 - c / m) + (1.0 - p) * special.ndtr(m / 2.0 + c / m))
        out = np.where(m == 0, max(p, 1.0 - p), out)
        out = np.where(np.isposinf(m), 1.0, out)
    return _out(np.maximum(out, max(p, 1.0 - p)), value)


@dataclass(frozen=True)
class DisclosureRisk:
    """What an attacker can conclude about one person from one release.

    Attributes
    ----------
    prior : float
        The attacker's belief before the release.
    rows : int
        Rows one person contributes (group privacy applied).
    epsilon, delta, mu : float or None
        The guarantee per person the bounds use (δ 0 where none is certified).
    posterior : float
        Largest belief after any one release (1: none below certainty).
    average_posterior : float
        Largest average belief when the person is in the data.
    success : float
        Largest chance that a guess at this prior is right.
    success_even : float
        The same for an attacker starting at 50:50.
    per_release : bool
        Whether :attr:`posterior` bounds every release (pure ε-DP); else only the average
        belief is bounded below certainty.
    certified : bool
        Whether the guarantee is proven (exact sampler); False for an approximately private
        release: the bounds then hold only as far as its chains mixed or its Monte Carlo
        calibration is right.
    """

    prior: float
    rows: int
    epsilon: float | None
    delta: float
    mu: float | None
    posterior: float
    average_posterior: float
    success: float
    success_even: float
    per_release: bool
    certified: bool


def disclosure_risk(prior, *, epsilon=None, delta=None, mu=None, rows=1, guarantee="private"):
    """The disclosure risk of one release for one person of ``rows`` rows.

    µ is used when given (the whole trade-off curve), else ε with δ (None: not certified,
    computed at δ = 0). Group privacy by :func:`dpcore.privacy.ledger.group`.

    Parameters
    ----------
    prior : float
        The attacker's belief before the release, in (0, 1).
    epsilon, delta, mu : float or None
        The release's guarantee per row, as its :class:`~dpcore.privacy.PrivacyEvent`
        states it.
    rows : int
        Rows one person contributes.
    guarantee : str
        "private" (proven) or "approximately private" (not certified).

    Returns
    -------
    DisclosureRisk

    Raises
    ------
    ValueError
        If the release carries no guarantee ("not private", "not covered") or neither ε nor µ.
    """
    if guarantee not in GUARANTEES or guarantee not in COMPOSING:
        raise ValueError(f"A release labelled {guarantee!r} carries no guarantee: nothing "
                         "bounds what an attacker concludes.")
    k = max(1, int(rows))
    if mu is not None:
        epsilon, delta = None, None
    elif epsilon is None:
        raise ValueError("Give `epsilon` or `mu`.")
    eps_k, delta_k, mu_k = group(epsilon, delta, mu, k)
    d = 0.0 if delta_k is None else min(float(delta_k), 1.0)
    kw = {"mu": mu_k} if mu_k is not None else {"epsilon": eps_k, "delta": d}
    return DisclosureRisk(
        prior=float(prior), rows=k, epsilon=eps_k, delta=d, mu=mu_k,
        posterior=posterior_bound(prior, **kw), average_posterior=average_posterior(prior, **kw),
        success=success_bound(prior, **kw), success_even=success_bound(0.5, **kw),
        per_release=mu_k is None and d == 0.0,
        certified=guarantee == "private",
    )
