"""Speed of the GDP accounting in dpcore.privacy, and paper 004's Figure 1 numbers.

Tables:

1. ``gdp_mu_monte_carlo`` (Algorithm 2) at the paper's sizes, n_samples = n_eps = 1000 and
   repeats = 100, split into sampling and estimation, against a baseline measured in the same
   run on the same losses: the naive form of the estimation step, a Python loop over ε that
   recomputes the same importance-sampling estimate of δ(ε) per ε and solves for µ_ε with
   ``scipy.optimize.brentq`` on the direct formula (and computes no standard error).
   Target (issue): the whole call on S^2 under 2 s.
2. Throughput of the closed forms (``delta_mu``, ``eps_to_mu``, ``privacy_profile_circle``,
   ``mu_from_delta``, ``gdp_mu_circle``) and the time of ``calibrate_sigma`` on S¹ (exact)
   and on S² (Monte Carlo bisection).
3. Figure 1 of paper 004: µ on S¹ for Δ = 1 and σ = k/4, exact (Algorithm 1) and Monte Carlo
   (Algorithm 2, mean ± jackknife standard error), next to the Euclidean Δ/σ.
"""

from __future__ import annotations

import math
import time

import numpy as np
import pandas as pd
from scipy import optimize, special, stats

from dpcore.manifolds import Euclidean, Sphere
from dpcore.privacy import gdp
from dpcore.privacy import profiles as privacy

from ._timing import per_call

N_SAMPLES, N_EPS, REPEATS = 1000, 1000, 100


def naive_mu(l1, l2, n_eps, eps_max):
    """Per-ε loop: the same MIS profile estimate and µ_ε by brentq, one ε at a time."""
    losses = np.concatenate([l1, l2], axis=1)
    n = l1.shape[1]
    best = 0.0
    for eps in np.linspace(0.0, eps_max, n_eps):
        parts = []
        for sign in (1.0, -1.0):
            loss = sign * losses
            above = loss > eps
            terms = np.where(above, (1 - np.exp(np.minimum(eps - loss, 0.0))), 0.0)
            parts.append(np.sum(terms * special.expit(loss), axis=1) / n)
        delta = float(np.mean(0.5 * (parts[0] + parts[1])))
        if delta <= 0:
            continue

        def gap(mu, eps=eps, delta=delta):
            a = stats.norm.cdf(-eps / mu + mu / 2)
            b = stats.norm.cdf(-eps / mu - mu / 2)
            return a - math.exp(eps) * b - delta

        best = max(best, optimize.brentq(gap, 1e-6, 50.0, xtol=1e-12))
    return best


def monte_carlo_table(rng):
    rows = []
    for name, manifold in [
        ("Sphere(2)", Sphere(2)),
        ("Sphere(1)", Sphere(1)),
        ("Euclidean(2)", Euclidean(2)),
    ]:
        sigma, sensitivity = 1.0, 1.0
        seed = int(rng.integers(2**32))
        t_total = per_call(
            lambda: privacy.gdp_mu_monte_carlo(manifold, sigma, sensitivity, rng=seed),
            min_time=0.0,
            repeats=3,
        )
        gen = np.random.default_rng(seed)
        t_sample = per_call(
            lambda: privacy._privacy_losses(manifold, sigma, sensitivity, N_SAMPLES, REPEATS, gen),
            min_time=0.0,
            repeats=3,
        )
        l1, l2 = privacy._privacy_losses(
            manifold, sigma, sensitivity, N_SAMPLES, REPEATS, np.random.default_rng(seed)
        )
        eps_max = privacy._default_eps_max(l1, l2)
        t_est = per_call(
            lambda: privacy._mu_from_losses(l1, l2, N_EPS, "mis", eps_max),
            min_time=0.0,
            repeats=3,
        )
        start = time.perf_counter()
        mu_naive = naive_mu(l1, l2, N_EPS, eps_max)
        t_naive = time.perf_counter() - start
        mu, se = privacy._mu_from_losses(l1, l2, N_EPS, "mis", eps_max)
        rows.append(
            {
                "manifold": name,
                "total s": t_total,
                "sampling s": t_sample,
                "estimation s": t_est,
                "naive loop s": t_naive,
                "ratio": t_naive / t_est,
                "mu": mu,
                "se": se,
                "|mu - naive mu|": abs(mu - mu_naive),
                "total < 2 s": t_total < 2.0,
            }
        )
    return pd.DataFrame(rows)


def closed_form_table(rng):
    eps = rng.uniform(0, 20, 1_000_000)
    mu = rng.uniform(0.05, 8, 1_000_000)
    rows = []
    cases = {
        "delta_mu, 1e6 points": (lambda: gdp.delta_mu(eps, mu), 1_000_000),
        "eps_to_mu, 1e6 points": (lambda: gdp.eps_to_mu(eps), 1_000_000),
        "privacy_profile_circle, 1e6 points": (
            lambda: privacy.privacy_profile_circle(eps, 1.0, 1.0),
            1_000_000,
        ),
        "mu_from_delta, 1e5 points": (
            lambda: gdp.mu_from_delta(eps[:100_000], gdp.delta_mu(eps[:100_000], 1.3)),
            100_000,
        ),
        "gdp_mu_circle, one sigma": (lambda: privacy.gdp_mu_circle(1.0, 1.0), 1),
        "calibrate_sigma on S^1": (lambda: privacy.calibrate_sigma(0.5, 1.0, Sphere(1)), 1),
    }
    slow = "calibrate_sigma on S^2 (Monte Carlo)"
    cases[slow] = (lambda: privacy.calibrate_sigma(0.5, 1.0, Sphere(2)), 1)
    for name, (fn, count) in cases.items():
        t = (
            per_call(fn, min_time=0.0, repeats=1)
            if name == slow
            else per_call(fn, min_time=0.05, repeats=3)
        )
        rows.append({"operation": name, "ms per call": t * 1e3, "Mpts/s": count / t / 1e6})
    return pd.DataFrame(rows)


def figure_1_table():
    rows = []
    for k in range(1, 17):
        sigma = k / 4
        mu_mc, se = privacy.gdp_mu_monte_carlo(Sphere(1), sigma, 1.0, rng=k)
        exact = privacy.gdp_mu_circle(sigma, 1.0)
        rows.append(
            {
                "sigma": sigma,
                "mu exact (Alg. 1)": exact,
                "mu MC (Alg. 2)": mu_mc,
                "MC se": se,
                "(MC - exact)/se": (mu_mc - exact) / se,
                "Euclidean 1/sigma": 1 / sigma,
            }
        )
    return pd.DataFrame(rows)


def main():
    rng = np.random.default_rng(2024)
    pd.set_option("display.float_format", lambda f: f"{f:.5g}")
    pd.set_option("display.width", 160)
    return "\n\n".join(
        [
            f"gdp_mu_monte_carlo, sigma = sensitivity = 1, n_samples = {N_SAMPLES}, "
            f"n_eps = {N_EPS}, repeats = {REPEATS} (ratio = naive loop / vectorized estimation)",
            monte_carlo_table(rng).to_string(index=False),
            "Closed forms",
            closed_form_table(rng).to_string(index=False),
            "Paper 004 Figure 1: mu on S^1, sensitivity 1",
            figure_1_table().to_string(index=False),
        ]
    )


if __name__ == "__main__":
    print(main())
