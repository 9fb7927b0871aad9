"""Shared pieces of the ambient-Laplace and Gaussian-DP Fréchet-mean audits
(``test_ambient_gaussian.py``, ``test_ambient_gaussian_gdp.py``; the audit and its error
budget are described in the former's docstring): the budget constants, the seeds and draw
counts, and the library's pooled strict draws with the records each call must carry.
"""

import numpy as np
import pytest
from scipy import stats

from dpcore.release import private_frechet_mean

from ._draws import PER_CALL

#: False-failure chance of one black-box certification (Bonferroni over its events and ε).
ALPHA_EACH = 1e-8
#: False-failure chance of one goodness-of-fit test.
GOF_ALPHA = 1e-8
N_DRAWS = 4000
SEED = 31_337
EPS = 1.0
RADIUS = 0.5


def _expected_guarantee(rel):
    """"private" for a float-safe exact release; a Gaussian on a non-compact space is drawn by
    the radial sampler, whose floats depend on the data (DESIGN §12): "approximately private",
    with its caveat and no delta. Laplace releases here must be float-safe."""
    safety = str(rel.diagnostics.get("float_safety", ""))
    if safety.startswith("not float-safe"):
        assert rel.mechanism == "gaussian" and rel.coverage == "float"
        assert rel.delta is None and any("Not float-safe" in c for c in rel.caveats)
        return "approximately private"
    return "private"


def library_draws(manifold, y, *, total, seed, **kwargs):
    """``total`` strict private means of ``y``, pooled over seeded calls of at most
    ``PER_CALL`` draws; every call must state the same per-draw guarantee and σ.

    Returns (means, ambient values or None, left-manifold flags or None, first release).
    """
    shape = tuple(manifold.point_shape)
    means, ambient, left, sigmas, releases = [], [], [], set(), []
    for k in range(int(np.ceil(total / PER_CALL))):
        count = min(PER_CALL, total - k * PER_CALL)
        rel = private_frechet_mean(manifold, y, rng=seed + k, n_draws=count, **kwargs)
        assert rel.mode == "strict" and rel.guarantee == _expected_guarantee(rel)
        if kwargs["mechanism"] == "ambient_laplace":
            assert rel.epsilon == pytest.approx(count * kwargs["epsilon"])
            assert rel.delta == 0.0 and rel.diagnostics["exact"]
            sigmas.add(rel.sigma["ambient"])
            ambient.append(np.asarray(rel.values["ambient"]).reshape((count, *shape)))
            left.append(np.asarray(rel.values["left_manifold"]).reshape(count))
        else:
            assert rel.details["mu_per_draw"] == kwargs["mu"]
            assert rel.mu == pytest.approx(np.sqrt(count) * kwargs["mu"])
            assert rel.diagnostics["exact"]
            sigmas.add(rel.sigma["mean"])
        means.append(np.asarray(rel.values["mean"]).reshape((count, *shape)))
        releases.append(rel)
    assert len(sigmas) == 1
    return (np.concatenate(means), np.concatenate(ambient) if ambient else None,
            np.concatenate(left) if left else None, releases[0])


def ks(sample, cdf):
    return float(stats.kstest(sample, cdf).pvalue)
