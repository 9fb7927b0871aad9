r"""Public prediction of the uniform-proposal exact sampler's work for a joint regression
release, from public inputs only (issue 28: "the switch to MCMC comes about 4x too early").

The exact joint sampler of :mod:`dpcore.sampling.rejection` proposes :math:`z = (p, v)`
uniformly on the public support :math:`K = B_R(c) \times \{|v| \le V\}` and accepts with
probability :math:`e^{-g(z)/\sigma}`, so it needs :math:`\mathrm{vol}(K) / Z_K` proposals per
draw on average, :math:`Z_K = \int_K e^{-g/\sigma}`. Its public worst case over data sets,
:math:`e^{g_{\max}/\sigma}`, grows like :math:`e^{n\epsilon/4}`; on data that fit inside the
support the measured cost grows far more slowly (a power of :math:`n\epsilon` once the
target is concentrated), because :math:`Z_K` is then the mass of one basin.

**The prediction** (no data involved). A public model data set: ``min(n, 64)`` covariates
evenly spread on [0, 1] and responses exactly on the geodesic from a base point of the space
with speed :math:`V/2` (by homogeneity of the spaces here, any base point gives the same
figures). Its clipped gradient vanishes at that geodesic, with Jacobian :math:`H` there
(:func:`~dpcore.release.asymptotic.bundle_hessian`; the gradient is a mean, so :math:`H`
does not depend on the number of terms). The linearized target
:math:`e^{-|H\delta|/\sigma}` has mass :math:`Z_* = |S^{2d-1}|\Gamma(2d)\sigma^{2d}/|\det H|`
(the asymptotic law of :mod:`dpcore.release.asymptotic`), of which a share :math:`s` lies in
:math:`K` (Monte Carlo from that law with a fixed seed). The prediction is

.. math:: \text{proposals per draw} = B\,\mathrm{vol}(K) / (s Z_*),

with :math:`B` = :data:`BOUNDARY_FACTOR`: the model's fit sits at the centre of both balls;
a data set's fit may lie anywhere in them, and at the boundary of each ball about half of a
concentrated basin is inside. :math:`\mathrm{vol}(K) = \mathrm{vol}(B_R)\,\omega_d V^d`
(Sasaki volume: base ball times the fibre's Euclidean ball, :class:`~dpcore.sampling.
rejection.BundleBall`), the base ball's volume integrated from the space's radial law
(:meth:`~dpcore.manifolds.Manifold.radial_log_volume`, normalized by its Euclidean limit at
:math:`r \to 0`).

**What it is not.** A bound: a data set whose fit lies outside the support, or whose basin is
thinner than the model's, needs more proposals (a timing side channel, not a change of the
output's law; the pages say so and a run can be cancelled). Measured against exact releases
on the pages' demonstration designs in ``docs/measurements.md`` ("Uniform proposals priced by
a public model").
"""

from __future__ import annotations

import math

import numpy as np

from .._lazy import lazy_module

integrate = lazy_module("scipy.integrate")  # imported on first use

__all__ = ["BOUNDARY_FACTOR", "log_ball_volume", "log_support_volume",
           "predicted_squeeze_terms", "predicted_uniform_joint_proposals",
           "predicted_uniform_joint_work", "squeeze_offered", "squeeze_plan"]

#: Allowance for where a data set's fit lies in the support (module docstring).
BOUNDARY_FACTOR = 4.0
#: Covariates of the public model data set (at most).
MODEL_TERMS = 64
#: Draws of the linearized law that estimate its share inside the support (fixed seed).
SHARE_DRAWS = 4000
#: Largest condition number of the model's Jacobian for which a prediction is given.
MAX_CONDITION = 1e10

_MODELS = {}
#: predicted_uniform_joint_proposals by its public inputs (the same request is planned,
#: estimated and released; the share is a seeded Monte Carlo of SHARE_DRAWS points).
_PROPOSALS = {}


def _log_unit_sphere(d):
    """Log of the area of the unit sphere in R^d."""
    return math.log(2.0) + 0.5 * d * math.log(math.pi) - math.lgamma(0.5 * d)


def log_ball_volume(manifold, radius):
    r"""Log of the Riemannian volume of a geodesic ball of ``radius`` (any centre).

    :math:`|S^{d-1}|\int_0^R J(r)\,dr` with the radial law :math:`J` of
    :meth:`~dpcore.manifolds.Manifold.radial_log_volume`, normalized so that
    :math:`J(r) \sim r^{d-1}` as :math:`r \to 0`; a radius beyond the diameter of a compact
    space gives the whole space.

    Parameters
    ----------
    manifold : Manifold
        One with a radial law.
    radius : float

    Returns
    -------
    float
    """
    d = int(manifold.dim)
    radius = min(float(radius), float(manifold.diameter))
    r0 = 1e-6 * min(1.0, radius)
    shift = float(manifold.radial_log_volume(np.array(r0))) - (d - 1) * math.log(r0)

    def density(r):
        return math.exp(float(manifold.radial_log_volume(np.array(r))) - shift) if r > 0 else 0.0

    value, _ = integrate.quad(density, 0.0, radius, limit=200, epsrel=1e-10)
    return _log_unit_sphere(d) + math.log(value)


def log_support_volume(manifold, radius, max_speed):
    r"""Log Sasaki volume of :math:`B_R \times \{|v| \le V\}` (``radius`` None: the whole of
    a compact space)."""
    from ..sampling.radial import log_euclidean_ball_volume

    return (log_ball_volume(manifold, math.inf if radius is None else radius)
            + log_euclidean_ball_volume(manifold.dim, float(max_speed)))


def _model(manifold, radius, max_speed, tau, k):
    """(Jacobian H, log vol K, base speed vector coordinates) of the public model, cached by
    the space's description and the public inputs."""
    key = (type(manifold).__name__, repr(manifold), radius, float(max_speed), float(tau), k)
    if key not in _MODELS:
        from .asymptotic import bundle_hessian

        p0 = np.asarray(manifold.origin, dtype=float)
        e1 = manifold.orthonormal_basis(p0)[0]
        v0 = 0.5 * float(max_speed) * e1
        t = (np.arange(k) + 0.5) / k
        base = np.broadcast_to(p0, (k, *p0.shape))
        y = manifold.exp(base, manifold.pointwise(t) * v0[None])
        jac, _ = bundle_hessian(manifold, t, y, p0, v0, tau=tau)
        h = 0.5 * (jac + jac.T)
        _MODELS[key] = (h, log_support_volume(manifold, radius, max_speed))
    return _MODELS[key]


def predicted_uniform_joint_proposals(manifold, radius, max_speed, tau, sigma, n):
    """Predicted proposals per draw of the uniform-proposal joint sampler (module docstring),
    or None where the model's Jacobian is singular (no basin to price).

    Parameters
    ----------
    manifold : Manifold
    radius : float or None
        Public footpoint radius (None: the whole of a compact space).
    max_speed : float
        Public speed bound V.
    tau : float
        Residual clip.
    sigma : float
        KNG scale of the release.
    n : int
        Rows (the model takes at most :data:`MODEL_TERMS` of them).

    Returns
    -------
    float or None
    """
    key = (type(manifold).__name__, repr(manifold), radius, float(max_speed), float(tau),
           float(sigma), int(min(int(n), MODEL_TERMS)))
    if key not in _PROPOSALS:
        if len(_PROPOSALS) >= 4096:  # bounded: a long session of many budgets
            _PROPOSALS.clear()
        _PROPOSALS[key] = _predicted_proposals(manifold, radius, max_speed, tau, sigma, key[-1])
    return _PROPOSALS[key]


def _predicted_proposals(manifold, radius, max_speed, tau, sigma, k):
    h, log_vol = _model(manifold, radius, max_speed, tau, k)
    sv = np.linalg.svd(h, compute_uv=False)
    if not np.all(np.isfinite(sv)) or sv[-1] <= sv[0] / MAX_CONDITION:
        return None
    from ..sampling.radial import log_kfnorm_mass
    from .asymptotic import _Law

    # the linearized target's law delta = H^-1 w, w ~ e^{-|w|/sigma} (asymptotic._Law)
    law = _Law(np.linalg.inv(h))
    d = int(manifold.dim)
    log_z = float(log_kfnorm_mass(law.k, float(sigma))) + law.logdet_a
    delta = law.sample(float(sigma), SHARE_DRAWS, np.random.default_rng(20261130))
    speed = delta[:, d:].copy()
    speed[:, 0] += 0.5 * float(max_speed)
    inside = np.linalg.norm(speed, axis=1) <= float(max_speed)
    if radius is not None and radius < manifold.diameter:
        inside &= np.linalg.norm(delta[:, :d], axis=1) <= float(radius)
    share = max(float(inside.mean()), 1.0 / SHARE_DRAWS)
    log_acceptance = min(0.0, log_z + math.log(share) - log_vol)
    return BOUNDARY_FACTOR * math.exp(-log_acceptance)


#: The squeeze's work per proposal and its passing share, for the prediction
#: (:func:`predicted_squeeze_terms`): a proposal's draw, leaf lookup and bound cost about 13
#: gradient terms (190 ns against 14.5 ns a term of the compiled SPD(2) gradient in a release
#: at n = 250, n·ε = 500; 270 ns against 31 ns measured the day before); 6-15% of the
#: proposals needed their gradient in the measured releases (n·ε = 500, n = 100 and 250,
#: 2026-12-02).
SQUEEZE_PROPOSAL_TERMS = 13.0
SQUEEZE_PASS_SHARE = 0.15


#: Predicted proposals of a release (all draws) from which the squeeze is built where the plain
#: proposals' prediction is within S²'s limit (:func:`squeeze_plan` with ``cheaper_only``):
#: below, its leaves cost more than the gradients they save (at n = 100, n·ε = 200 and 300,
#: with 0.13-1.9 million proposals, 60-90% of them still needed their gradient and the squeeze
#: took 1.0-2.5 times the plain proposals' time, 2026-12-02).
SQUEEZE_MIN_PROPOSALS = 2e6
#: A plain uniform proposal's draw and the fixed part of its evaluation, in gradient terms
#: (0.92 us against 10-14.5 ns a term on SPD(2), 2026-12-02), for the comparison of
#: :func:`squeeze_plan` only (the prediction the limit reads counts n terms a proposal).
PLAIN_PROPOSAL_TERMS = 60.0


#: Leaves of the squeeze: one per this many predicted proposals, within the limits below.
SQUEEZE_PROPOSALS_PER_LEAF = 5000.0
SQUEEZE_LEAVES = (500, 3000)
#: Largest public footpoint radius and speed bound for which the squeeze is built: its affine
#: enclosures are void on wide leaves (docs/measurements.md, session 26). The share of
#: proposals that still need their gradient, measured at each design's reach (n = 100,
#: 2026-12-02): 4-9% on the Geodesic regression page's SPD(2) design (0.1, 0.55), 33-60% at
#: (0.15, 0.65) (releases there 5.5-24 s), 77-100% at (0.2, 0.8) (one draw took 45 s) and
#: about 100% at (0.25, 1.0): beyond (0.15, 0.65) the squeeze saves nothing and its
#: prediction (:data:`SQUEEZE_PASS_SHARE`) would be several times low.
SQUEEZE_MAX_RADIUS = 0.15
SQUEEZE_MAX_SPEED = 0.65


def squeeze_offered(manifold, radius, max_speed, tau):
    """Whether an exact uniform joint release on this public design may build the certified
    squeeze: a space with one (SPD(2)), a public footpoint ball and speed bound within
    :data:`SQUEEZE_MAX_RADIUS` and :data:`SQUEEZE_MAX_SPEED`, and a clip. Public inputs only."""
    from ..sampling.spd2_squeeze import squeeze_available

    return (radius is not None and tau is not None and max_speed is not None
            and squeeze_available(manifold) and radius <= SQUEEZE_MAX_RADIUS
            and max_speed <= SQUEEZE_MAX_SPEED)


def squeeze_plan(manifold, radius, max_speed, tau, sigma, n, draws, batches=1, *,
                 cheaper_only=True):
    """``{"max_leaves", "proposals"}`` of a certified squeeze for an exact uniform joint
    release (:class:`~dpcore.sampling.spd2_squeeze.SPD2Squeeze`: its leaf cap and the
    predicted proposals that steer its refinement), or None: where it is not offered
    (:func:`squeeze_offered`), or, with ``cheaper_only``, below
    :data:`SQUEEZE_MIN_PROPOSALS` or where it is not predicted to halve the plain uniform
    proposals' gradient terms (with few terms a gradient costs little more than the squeeze's
    own work per proposal). Which one a release builds is
    :func:`~dpcore.release.planning.release_squeeze`. Public inputs only."""
    if not squeeze_offered(manifold, radius, max_speed, tau):
        return None
    per_draw = predicted_uniform_joint_proposals(manifold, radius, max_speed, tau, sigma, n)
    if per_draw is None:
        return None
    total = float(per_draw) * float(draws) * float(batches)
    low, high = SQUEEZE_LEAVES
    plan = {"max_leaves": int(min(high, max(low, total / SQUEEZE_PROPOSALS_PER_LEAF))),
            "proposals": total}
    if cheaper_only and (total < SQUEEZE_MIN_PROPOSALS
                         or predicted_squeeze_terms(plan, n)
                         > 0.5 * total * (float(n) + PLAIN_PROPOSAL_TERMS)):
        return None
    return plan


def predicted_squeeze_terms(plan, n):
    """Predicted gradient terms (the space's own) of an exact uniform joint release with the
    certified squeeze ``plan`` (:func:`squeeze_plan`): the leaf cap's enclosures
    (:data:`~dpcore.sampling.spd2_squeeze.LEAF_GRADIENTS` gradients each), the proposals'
    draws and bounds, and the gradients of the share that passes. Public inputs only."""
    from ..sampling.spd2_squeeze import LEAF_GRADIENTS

    n = float(n)
    return (plan["max_leaves"] * n * LEAF_GRADIENTS
            + plan["proposals"] * (SQUEEZE_PROPOSAL_TERMS + SQUEEZE_PASS_SHARE * n))


def predicted_uniform_joint_work(manifold, radius, max_speed, tau, sigma, n, draws,
                                 batches=1):
    """Predicted gradient terms of an exact joint release by uniform proposals,
    ``batches x draws x n x`` :func:`predicted_uniform_joint_proposals` (None where there is
    no prediction)."""
    per_draw = predicted_uniform_joint_proposals(manifold, radius, max_speed, tau, sigma, n)
    if per_draw is None:
        return None
    return float(batches) * float(draws) * float(n) * per_draw
