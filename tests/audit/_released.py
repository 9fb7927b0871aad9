"""The noise scale a release used, checked against the oracle's (DESIGN §12, float safety).

A float-safe Laplace release on a non-compact space truncates its law far outside the public
ball and keeps the truncation's slack inside ε by drawing with σ = Δ / (ε (1 − s)),
s = TRUNCATION_SHARE (:mod:`dpcore.sampling.lattice`); everywhere else σ = Δ / ε exactly.
"""

from __future__ import annotations

import pytest

from dpcore.sampling.lattice import TRUNCATION_SHARE


def released_sigma(rel, sigma, key="mean"):
    """The release's σ after checking it is the oracle's ``sigma`` (times 1 / (1 − s) when the
    release records a truncation, whose slack must then be at most s ε)."""
    got = rel.sigma[key]
    if "truncation_slack" in rel.diagnostics:
        assert got == pytest.approx(sigma / (1.0 - TRUNCATION_SHARE), rel=1e-12)
        per_draw = rel.epsilon / rel.details["n_draws"]
        assert 0 <= rel.diagnostics["truncation_slack"] <= TRUNCATION_SHARE * per_draw
    else:
        assert got == pytest.approx(sigma, rel=1e-12)
    return got
