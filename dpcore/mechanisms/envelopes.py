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


def joint_envelope_draws(mechanisms, t, y, size, rng=None, *, tau, support, max_norm,
                         progress=None):
    """Exact joint regression draws from :func:`joint_envelope`, one envelope per mechanism
    (the ``refined`` sampler of :func:`~dpcore.mechanisms.kng.regression_joint_exact`).

    ``progress(fraction)``, if given, follows the accepted share of all draws (it may raise to
    cancel). Returns one :class:`~dpcore.mechanisms.base.MechanismResult` per mechanism, values
    ``(size, 2, *point_shape)``.
    """
    from .._progress import stages
    from .base import MechanismResult

    rng = np.random.default_rng(rng)
    out = []
    for mech, part in zip(mechanisms, stages(progress, [1.0] * len(mechanisms)), strict=True):
        env = joint_envelope(mech, t, y, tau=tau, support=support, max_norm=max_norm,
                             draws=int(size))
        vals, tried = env.sample(int(size), rng, n_terms=np.shape(t)[0], progress=part)
        out.append(MechanismResult(
            values=vals, exact=True,
            sampler=("exact rejection sampling from a refined Lipschitz envelope on the "
                     f"footpoint ball of radius {support.radius:g} x the shooting-vector "
                     f"ball of radius {float(max_norm):g}"),
            diagnostics={"proposals": int(tried), "acceptance": float(int(size) / tried),
                         "envelope_cells": int(env.centers.shape[0]),
                         "lattice_spacing": env.lattice["lattice_spacing"],
                         "float_safety": LATTICE_NOTE},
        ))
    return out


__all__ = ["LATTICE_NOTE", "UNIFORM_NOTE", "frechet_envelope", "joint_envelope",
           "joint_envelope_draws"]
