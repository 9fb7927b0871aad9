"""Black-box access to the library's strict releases on R², SPD(2), Kendall Σ²₃, Σ⁴₂ and H².

As in :mod:`tests.audit._draws` (whose per-call limit and helpers are reused), many draws are
gathered over several seeded calls of ``dpcore.release``; each call is a separate release,
and the pooled draws are an i.i.d. sample of the one-draw mechanism. Every call must state the
same guarantee (mode, ε per draw, δ per draw).

Error budget of the extension. The sixteen privacy certifications added for these manifolds
(Laplace, KNG and joint regression on R²; unrestricted Laplace, ball-restricted Laplace,
KNG and joint regression on SPD(2); Laplace, KNG and joint regression on Kendall Σ²₃;
Laplace, KNG and joint regression on Kendall Σ⁴₂ = CP², tests/audit/test_kendall4.py;
Laplace, KNG and joint regression on H²) share a family-wise false-failure chance of 1e-6
by Bonferroni, shared with the sphere's certifications in :mod:`tests.audit._draws`. Their
goodness-of-fit tests (fewer than 50, Σ⁴₂'s 16 included) fail falsely with chance ≤ 1e-8
each.
"""

from __future__ import annotations

import numpy as np
import pytest

from dpcore.release import private_frechet_mean, private_geodesic_regression

from . import _oracle as O
from ._draws import ALPHA_EACH, ALPHA_TOTAL, N_PRIVACY_TESTS, PER_CALL  # noqa: F401

#: The audit family's budget is shared with the sphere audit (tests/audit/_draws.py counts
#: every certification of the suite, these 16 included), 1e-6 in all.
GOF_ALPHA = 1e-8
#: Draws per data set in the black-box tests.
N_DRAWS = 4000


def _check_guarantee(rel, per_draw_eps, count, mode="strict"):
    assert rel.mode == mode
    assert rel.epsilon == pytest.approx(count * per_draw_eps)


def frechet_draws(manifold, y, *, epsilon, mechanism, radius, center, total, seed, **kwargs):
    """``total`` strict private Fréchet means of ``y`` on ``manifold``, pooled over seeded
    calls. Returns draws (total, *point_shape), the per-draw δ and the first release."""
    out, deltas, releases = [], set(), []
    for k in range(int(np.ceil(total / PER_CALL))):
        count = min(PER_CALL, total - k * PER_CALL)
        rel = private_frechet_mean(manifold, y, epsilon=epsilon, mechanism=mechanism,
                                   radius=radius, center=center, rng=seed + k, n_draws=count,
                                   **kwargs)
        _check_guarantee(rel, epsilon, count, kwargs.get("mode", "strict"))
        out.append(np.asarray(rel.values["mean"]).reshape((count, *manifold.point_shape)))
        deltas.add(None if rel.delta is None else round(rel.delta / count, 15))
        releases.append(rel)
    assert len(deltas) == 1
    assert len({r.label for r in releases}) == 1
    return np.concatenate(out), deltas.pop(), releases[0]


def regression_draws(manifold, x, y, *, eps_p, eps_v, tau, covariate_range, total, seed,
                     **kwargs):
    """``total`` strict joint (footpoint, shooting vector) pairs, pooled over seeded calls.
    Returns footpoints, vectors, the per-draw δ and the first release."""
    feet, vecs, releases, deltas = [], [], [], set()
    shape = tuple(manifold.point_shape)
    for k in range(int(np.ceil(total / PER_CALL))):
        count = min(PER_CALL, total - k * PER_CALL)
        rel = private_geodesic_regression(
            manifold, x, y, eps_p=eps_p, eps_v=eps_v, tau=tau, covariate_range=covariate_range,
            scheme="joint", n_vectors=1, n_footpoints=count, rng=seed + k, **kwargs)
        _check_guarantee(rel, eps_p + eps_v, count)
        feet.append(np.asarray(rel.values["footpoint"]).reshape((count, *shape)))
        vecs.append(np.asarray(rel.values["shooting_vector"]).reshape((count, *shape)))
        deltas.add(None if rel.delta is None else round(rel.delta / count, 15))
        releases.append(rel)
    assert len(deltas) == 1
    return np.concatenate(feet), np.concatenate(vecs), deltas.pop(), releases[0]


def certify(name, stat_d, stat_e, thresholds, epsilon, alpha, delta):
    """Clopper–Pearson bounds of the pre-chosen events; prints them and returns them."""
    bounds = O.distinguishing_bounds(stat_d, stat_e, thresholds, epsilon, alpha)
    print(f"\n{name}: largest certified log-ratio {max(b.eps_lower for b in bounds):.3f} "
          f"(ε = {epsilon}); max certified excess {max(b.excess for b in bounds):+.4f} "
          f"(δ = {delta})")
    for b in bounds:
        print("  ", b)
    return bounds
