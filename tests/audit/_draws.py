"""Black-box access to the library's strict releases for the audit (``dpcore.release`` only).

The library caps one request at ``max_replicates`` draws, so many draws are gathered over
several seeded calls. Each call is a separate release; the audit uses the pooled draws as an
i.i.d. sample of the one-draw mechanism and checks that every call states the same guarantee.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from dpcore.manifolds import Sphere
from dpcore.release import private_frechet_mean, private_geodesic_regression

S2 = Sphere(2)
#: Draws per library call (at most the default ``max_replicates`` limit of 400).
PER_CALL = 400
#: Family-wise false-failure budget of all black-box privacy certifications of the audit
#: (Laplace, KNG and joint), shared by Bonferroni.
ALPHA_TOTAL = 1e-6
#: One family-wise budget for the whole audit: 3 certifications on S² (this module), 1 with a
#: footpoint ball (tests/audit/test_regression_joint_ball.py), 16 on the other manifolds
#: (tests/audit/_manifold_draws.py) and 2 of the quantile mechanism (tests/audit/test_quantile.py).
#: (The far-field black box, tests/audit/test_farfield_blackbox.py, is outside this family: its
#: certification has a false-failure chance of its own below 1e-6, all of which its ceiling
#: needs; with it the audit's black boxes fail falsely with chance below 2e-6 in all.)
N_PRIVACY_TESTS = 22
ALPHA_EACH = ALPHA_TOTAL / N_PRIVACY_TESTS
#: Goodness-of-fit tests (draws vs the oracle's density) each fail falsely with chance ≤ this;
#: fewer than ten of them run, so together they stay below 1e-6 as well.
GOF_ALPHA = 1e-7


def require_sampler_keyword(function):
    """Skip unless ``function`` accepts ``sampler=`` (exact sampling is requested with it)."""
    if "sampler" not in inspect.signature(function).parameters:
        pytest.skip(f"{function.__name__} has no `sampler` keyword yet: exact KNG sampling "
                    "cannot be requested, and MCMC draws would only audit an approximation.")


def record_only(function):
    """Keyword arguments for a cheap call whose draw is not used (only the record is read):
    a 2-step chain, requested explicitly where the ``sampler`` keyword exists."""
    kw = {"chain_length": 2, "burn_in": 0}
    if "sampler" in inspect.signature(function).parameters:
        kw["sampler"] = "mcmc"
    return kw


def _check_guarantee(rel, per_draw_eps, count, mode):
    assert rel.mode == mode
    assert rel.epsilon == pytest.approx(count * per_draw_eps)


def frechet_draws(y, *, epsilon, mechanism, radius, center, total, seed, **kwargs):
    """``total`` private means of ``y`` (strict mode unless ``mode`` is passed), pooled over
    seeded calls.

    Returns the draws (total, 3) and the per-draw δ (``Release.delta`` / draws of the call,
    the same in every call).
    """
    out, deltas, releases = [], set(), []
    for k in range(int(np.ceil(total / PER_CALL))):
        count = min(PER_CALL, total - k * PER_CALL)
        rel = private_frechet_mean(S2, y, epsilon=epsilon, mechanism=mechanism, radius=radius,
                                   center=center, rng=seed + k, n_draws=count, **kwargs)
        _check_guarantee(rel, epsilon, count, kwargs.get("mode", "strict"))
        out.append(np.asarray(rel.values["mean"]).reshape(count, 3))
        deltas.add(round(rel.delta / count, 15))
        releases.append(rel)
    assert len(deltas) == 1
    return np.concatenate(out), deltas.pop(), releases[0]


def regression_draws(x, y, *, eps_p, eps_v, tau, covariate_range, scheme, total, seed,
                     **kwargs):
    """``total`` private (footpoint, shooting vector) pairs, pooled over seeded calls.

    Returns footpoints (total, 3), vectors (total, 3), the per-draw δ (``Release.delta`` /
    draws of the call; None if the release states none) and the first release. For
    ``scheme="joint"`` every call draws ``count`` independent pairs; for ``"sequential"`` it
    draws ``count`` footpoints with one vector each.
    """
    feet, vecs, releases, deltas = [], [], [], set()
    for k in range(int(np.ceil(total / PER_CALL))):
        count = min(PER_CALL, total - k * PER_CALL)
        rel = private_geodesic_regression(
            S2, x, y, eps_p=eps_p, eps_v=eps_v, tau=tau, covariate_range=covariate_range,
            scheme=scheme, n_vectors=1, n_footpoints=count, rng=seed + k, **kwargs)
        _check_guarantee(rel, eps_p + eps_v, count, kwargs.get("mode", "strict"))
        feet.append(np.asarray(rel.values["footpoint"]).reshape(count, 3))
        vecs.append(np.asarray(rel.values["shooting_vector"]).reshape(count, 3))
        deltas.add(None if rel.delta is None else round(rel.delta / count, 15))
        releases.append(rel)
    assert len(deltas) == 1
    return np.concatenate(feet), np.concatenate(vecs), deltas.pop(), releases[0]
