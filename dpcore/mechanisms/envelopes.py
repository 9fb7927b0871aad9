"""The refined envelopes of the exact KNG samplers, and what each exact sampler states about
float safety (DESIGN §12).

:func:`frechet_envelope` and :func:`joint_envelope` are the one construction
:mod:`dpcore.mechanisms.kng` samples from, exposed so that the float audit
(``tests/audit/test_float_safety.py``) decides reachability on the mechanism's own cells.
"""

from __future__ import annotations

import numpy as np

from ..learning.frechet import frechet_mean_gradient
from ..learning.regression import regression_gradient

#: How each exact sampler keeps a data set from emitting a float its neighbour cannot
#: (DESIGN §12; audited in tests/audit/test_float_safety.py).
LATTICE_NOTE = ("each output is the public lattice cell (lattice_spacing, in the sampler's "
                "normal coordinates) of an exact draw; which cells can be emitted does not "
                "depend on the data")
UNIFORM_NOTE = ("proposals are drawn independently of the data and each is accepted with "
                "positive probability for every data set (exact Bernoulli(exp(-x)))")


def frechet_envelope(mechanism, points, support, *, draws=1):
    """The refined envelope (and output lattice) of an exact Fréchet KNG draw on ``support``.

    The one construction :func:`frechet_mean_exact` samples from, exposed so that the float
    audit (``tests/audit/test_float_safety.py``) decides reachability on the mechanism's own
    cells.
    """
    from ..sampling.envelope import NormalChart, RefinedEnvelope, frechet_gradient_lipschitz

    m = mechanism.manifold
    points = np.asarray(points, dtype=float)

    def gradient_norm(z):
        return m.norm(z, frechet_mean_gradient(m, z, points))

    return RefinedEnvelope(NormalChart(m, support.center), support.radius, gradient_norm,
                           frechet_gradient_lipschitz(m, support.radius), mechanism.sigma,
                           n_terms=points.shape[0], draws=int(draws))


def joint_envelope(mechanism, t, y, *, tau, support, max_norm, draws=1):
    """The refined envelope (and output lattice) of an exact joint regression KNG draw.

    The one construction :func:`regression_joint_exact` samples from (on R^1), exposed for the
    float audit as :func:`frechet_envelope` is.
    """
    from ..sampling.envelope import ProductBallDomain, RefinedEnvelope, regression_joint_lipschitz

    m = mechanism.manifold
    t = np.asarray(t, dtype=float)
    y = np.asarray(y, dtype=float)

    def gradient_norm(z):
        p, v = z[:, 0], z[:, 1]
        gp, gv = regression_gradient(m, p, v, t, y, tau=tau)
        return np.sqrt(m.norm(p, gp) ** 2 + m.norm(p, gv) ** 2)

    domain = ProductBallDomain(support.center, support.radius, max_norm)
    return RefinedEnvelope(None, None, gradient_norm, regression_joint_lipschitz(t),
                           mechanism.sigma, domain=domain, n_terms=t.shape[0],
                           draws=int(draws))


__all__ = ["LATTICE_NOTE", "UNIFORM_NOTE", "frechet_envelope", "joint_envelope"]
