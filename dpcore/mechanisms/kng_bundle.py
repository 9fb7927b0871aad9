r"""Exact joint KNG for geodesic regression at large :math:`n\epsilon`, in the releases: on
:math:`S^2` the sampler in the geodesic's own coordinates
(:class:`~dpcore.sampling.bundle_native.NativeSphereSampler`: boxes in frame rotation vector
and speed certified by per-datum caps, one public lattice), on a public footpoint ball or on the
whole sphere; on :math:`\mathbb{R}^2` and :math:`\mathbb{R}^3` the whitened-leaf sampler of
:mod:`dpcore.sampling.bundle_flat`.

Where it runs (public inputs only, :func:`bundle_joint_available`): on :math:`S^2` any public
footpoint ball of radius at most :math:`\pi` or none, a shooting-vector bound of at most
:math:`\pi`, up to :data:`SPHERE_MAX_N_EPS`; on R^2 and R^3 a public footpoint ball, up to
:data:`FLAT_MAX_N_EPS`. The covariates are the release's rescaled ones (in [0, 1]).

What a release states
---------------------
The target is the same as the uniform proposals' (density :math:`\exp(-g/\sigma)` w.r.t. the
Sasaki volume), restricted to the sampler's public support :math:`D_L`: the lattice cells
inside the footpoint ball and the speed ball (a public set, two lattice spacings inside their
boundaries). KNG restricted to any public support is :math:`\epsilon`-DP with the same
:math:`\sigma` (DESIGN §6), and the released value is the public lattice cell of an exact draw
(post-processing), so the release is private with :math:`\delta = 0`, float-safe by the
lattice argument of :mod:`dpcore.sampling.bundle_sampler`. The build of the envelope reads the
data: its run time is a timing side channel, not a change of the output's law.

Public cost (what ``sampler="auto"`` reads, :func:`bundle_joint_work`)
---------------------------------------------------------------------------
Uniform proposals run wherever their public worst case is within the ``max_exact_work`` limit
(:func:`bundle_preferred`); beyond it, the bundle sampler. The refinement splits leaves while
the draws' expected proposals cost more than the leaves (``box_cost`` proposals a leaf), up to
a public cap of leaves (:func:`bundle_leaf_cap`). Stopped by that rule, the draws cost at most
what the leaves cost, so the public prediction is twice the cap's cost, per budget pair,
whatever the number of draws: on :math:`S^2` ``2 x native_leaf_cap(n eps) x
NATIVE_LEAF_TERMS x n`` box terms (the cap a public function of :math:`n\epsilon`), on
R^2 and R^3 ``2 x cap x LEAF_TERMS x n``. Data whose envelope reaches the cap before the rule
stops it sample longer (the timing side channel again); the decision between exact and MCMC
never reads the data.

Measured on :math:`S^2` (``benchmarks/bench_bundle_native.py``, n = 250, tau = 0.2, 9 draws;
the issue's request is the whole sphere at n eps = 1,000). The samplers that ran here before
(far-field certificates in the normal coordinates of a public centre on balls, two such charts
on the whole sphere; replaced by the native sampler in session 35 and removed) stopped at
n eps = 150 on the whole sphere and 120 on balls outside two measured supports, and never
finished with a fit 0.35 outside the two-stage design's ball: their mean-value bound was 6-8
times g's true variation on the far field's leaves, while the native boxes' per-datum caps
follow the geodesic's own motion, and boxes that touch the zero speed need no special case. Beyond
:data:`SPHERE_MAX_N_EPS` requests keep the rule of :mod:`dpcore.release.planning` (uniform
proposals where their worst case is within the limit, else MCMC).
"""

from __future__ import annotations

import math

import numpy as np

from .._progress import report, stage, stages
from .base import MechanismResult
from .envelopes import LATTICE_NOTE

__all__ = ["ACCEPTANCE_GOAL", "FLAT3_MIN_LEAVES", "FLAT_DIMS", "FLAT_LEAF_TERMS",
           "FLAT_MAX_N_EPS", "FLAT_MIN_LEAVES", "LEAF_TERMS", "MAX_LEAVES", "NATIVE_BOX_COST",
           "NATIVE_LEAF_TERMS", "NATIVE_MAX_LEAVES", "NATIVE_MIN_LEAVES", "SPHERE_MAX_N_EPS",
           "native_leaf_cap",
           "bundle_joint_available",
           "bundle_joint_work", "bundle_leaf_cap", "bundle_preferred", "bundle_proposal_norm",
           "bundle_reach", "regression_joint_bundle"]

#: Largest number of leaves of one flat envelope (public; :func:`bundle_leaf_cap`).
MAX_LEAVES = 60_000
#: Certified acceptance at which the refinement would stop: 1, which no envelope certifies, so
#: the balance of leaves against draws (module docstring) alone stops it.
ACCEPTANCE_GOAL = 1.0
#: Cost of certifying one flat leaf, in proposals (each n gradient terms); also the flat
#: refinement's ``box_cost``.
LEAF_TERMS = 8.0

#: Largest n (eps_p + eps_v) of the sampler on :math:`S^2` (public), on the whole sphere and
#: on every public footpoint ball: the range measured by ``benchmarks/bench_bundle_native.py``
#: (n = 250, 9 draws; module docstring).
SPHERE_MAX_N_EPS = 1000.0
#: Cost of one native leaf in the public prediction, in box evaluations (each n terms, the
#: unit the time estimate prices the sphere's bundle terms in, :func:`bundle_proposal_norm`):
#: a leaf's two children are evaluated when it is split, and the refinement's bookkeeping
#: costs about as much again (measured on the issue's request at n = 250: 8-12 CPU
#: microseconds a leaf, 2.6-2.8 a box evaluation).
NATIVE_LEAF_TERMS = 4.0
#: The native refinement's ``box_cost``: a leaf (8-12 microseconds at n = 250) against the
#: sampler's own (compiled) proposals (about 2 microseconds each, the gradient norm 1.2 of
#: them), measured on the issue's request (``docs/measurements.md``).
NATIVE_BOX_COST = 5.0
#: Largest public leaf cap of the native envelope (:func:`native_leaf_cap`).
NATIVE_MAX_LEAVES = 300_000
#: Smallest public leaf cap of the native envelope.
NATIVE_MIN_LEAVES = 10_000


def native_leaf_cap(n_eps):
    """Public cap on the native envelope's leaves at ``n_eps`` = n (eps_p + eps_v):
    0.8 (n eps)^2, within [:data:`NATIVE_MIN_LEAVES`, :data:`NATIVE_MAX_LEAVES`]. The leaves
    its refinement needs grow about so (``benchmarks/bench_bundle_native.py``: 9,000 at 150,
    37,000 at 250, 140,000 at 500, 120,000-260,000 at 1,000 on the whole sphere), so the public
    prediction stays small where little is needed."""
    return int(min(NATIVE_MAX_LEAVES, max(NATIVE_MIN_LEAVES, 0.8 * float(n_eps) ** 2)))


#: Largest n (eps_p + eps_v) of the sampler on R^2 and R^3 (public): on R^2 9 draws measured
#: within 0.6 CPU s from 100 to 1e5 at n = 100 to 1,000, and within 4 s at n = 10,000; on R^3
#: within 30 s (most rows within 10 s), tau_m / tau from 1 to 20
#: (``benchmarks/bench_bundle_flat.py``); the leaves needed shrink as the target
#: concentrates, but nothing beyond was measured. (The public cost with
#: :func:`bundle_leaf_cap` keeps ``auto`` exact up to n of about 10,000 on R^2, 5,000 on R^3.)
FLAT_MAX_N_EPS = 1e5
#: Dimensions d of R^d with the flat bundle sampler (2d coordinates; R^1 has the refined
#: envelope of :mod:`dpcore.sampling.envelope`, R^4 and beyond were not measured).
FLAT_DIMS = (2, 3)


def _sphere_covers(manifold, support_radius, max_norm):
    return (manifold.dim == 2
            and (support_radius is None or 0.0 < float(support_radius) <= math.pi)
            and 0.0 < float(max_norm) <= math.pi)


def _flat_covers(manifold, support_radius, max_norm):
    return (manifold.dim in FLAT_DIMS and support_radius is not None
            and 0.0 < float(support_radius) < math.inf and 0.0 < float(max_norm) < math.inf)


#: Leaves x n of the flat envelope's public cap (:func:`bundle_leaf_cap`), and its floor.
FLAT_LEAF_TERMS = 60_000_000
FLAT_MIN_LEAVES = 6_000
#: The floor on R^3, whose six-dimensional envelopes need more leaves: 7,000-10,000 at
#: n = 1,000-10,000 (``benchmarks/bench_bundle_flat.py``; with 6,000 at n = 10,000 the draws ran
#: for minutes). With it the public cost keeps R^3 exact up to n of about 5,000.
FLAT3_MIN_LEAVES = 12_000


def _flat_reach(support_radius, max_norm):
    del support_radius, max_norm  # measured for every support tried
    return FLAT_MAX_N_EPS


def _flat_leaf_cap(n, manifold, n_eps=None):
    del n_eps  # the flat envelope's leaves fall with n at every n eps measured
    floor = FLAT3_MIN_LEAVES if manifold.dim == 3 else FLAT_MIN_LEAVES
    return int(min(MAX_LEAVES, max(floor, FLAT_LEAF_TERMS // max(int(n), 1))))


def _sphere_leaf_cap(n, manifold, n_eps=None):
    del n, manifold
    if n_eps is None:
        raise ValueError("The sphere's public leaf cap needs n_eps = n (eps_p + eps_v).")
    return native_leaf_cap(n_eps)


#: Manifold classes with a bundle sampler: (the test a space and its public support must pass,
#: the sampler's reach in n (eps_p + eps_v) for that support, the draws, the public leaf cap).
_SPACES = {}


def _registry():
    if not _SPACES:
        from ..manifolds import Euclidean, Sphere

        _SPACES[Sphere] = (_sphere_covers, _sphere_reach, _sphere_draws, _sphere_leaf_cap)
        _SPACES[Euclidean] = (_flat_covers, _flat_reach, _flat_draws, _flat_leaf_cap)
    return _SPACES


def _space(manifold):
    return next((entry for cls, entry in _registry().items() if isinstance(manifold, cls)),
                None)


def bundle_joint_available(manifold, support_radius, max_norm):
    """Whether :func:`regression_joint_bundle` covers this joint release (public inputs only).

    Parameters
    ----------
    manifold : Manifold
    support_radius : float or None
        Radius of the public footpoint ball (None: the whole sphere).
    max_norm : float or None
        The shooting-vector bound.

    Returns
    -------
    bool
    """
    if max_norm is None:
        return False
    entry = _space(manifold)
    return bool(entry is not None and entry[0](manifold, support_radius, max_norm))


def bundle_joint_work(n, draws, batches=1, manifold=None, n_eps=None):
    """Public prediction of an exact bundle-sampler release's work, in gradient terms:
    ``batches x 2 x leaves x leaf cost x n`` with the public leaf cap
    (:func:`bundle_leaf_cap`): on :math:`S^2` (``manifold`` None or a sphere) the native
    envelope's, :func:`native_leaf_cap` of ``n_eps`` leaves at :data:`NATIVE_LEAF_TERMS`; on
    R^2 and R^3 the flat envelope's at :data:`LEAF_TERMS` (module docstring, "Public cost";
    ``draws`` enters through the refinement's stop rule, not the prediction)."""
    del draws  # the stop rule balances the draws' cost against the leaves'
    flat = manifold is not None and getattr(manifold, "is_linear", False)
    cost = LEAF_TERMS if flat else NATIVE_LEAF_TERMS
    return float(batches) * 2.0 * bundle_leaf_cap(n, manifold, n_eps) * cost * float(n)


def bundle_proposal_norm(manifold):
    """The kernel whose time per gradient term prices a bundle release's terms
    (:mod:`dpcore.release.work`, kind ``"bundle"``), ``f(z, t, y, tau)`` on ``m`` points ``z``
    (m, 2d): on R^2 and R^3 the flat sampler's clipped-gradient norm (its proposals; ``y`` the
    responses minus the public centre); on :math:`S^2` the native leaf bound
    (:func:`~dpcore.sampling.sphere_native.cap_lower_bound`, compiled where numba is present)
    at boxes about ``z`` (native coordinates; ``y`` unit responses, or points of the plane
    mapped onto the sphere), the envelope's dominant cost, against which
    :data:`NATIVE_LEAF_TERMS` counts. None elsewhere."""
    if getattr(manifold, "is_linear", False) and manifold.dim in FLAT_DIMS:
        from ..sampling.bundle_flat import flat_norm

        return flat_norm
    if _space(manifold) is not None and manifold.dim == 2:
        return _native_leaf_kernel
    return None


def _native_leaf_kernel(z, t, y, tau):
    from ..sampling.bundle_native import _compiled_bound
    from ..sampling.sphere_native import cap_lower_bound

    y = np.asarray(y, dtype=float)
    if y.shape[1] != 3:  # points of the plane: onto the sphere about the north pole
        y = np.concatenate([y[:, :2], np.ones((y.shape[0], 1))], axis=1)
    y = np.ascontiguousarray(y / np.linalg.norm(y, axis=1, keepdims=True))
    z = np.ascontiguousarray(np.asarray(z, dtype=float).reshape(-1, 4))
    h = np.full(z.shape, 0.05)
    bound = _compiled_bound if _compiled_bound is not None else cap_lower_bound
    return bound(z, h, np.ascontiguousarray(t, dtype=float), y, float(tau))[0]


def bundle_leaf_cap(n, manifold=None, n_eps=None):
    """Public cap on one envelope's leaves: on :math:`S^2` (``manifold`` None or a sphere)
    :func:`native_leaf_cap` of ``n_eps`` = n (eps_p + eps_v); on R^2 and R^3 at most
    :data:`FLAT_LEAF_TERMS` / n, at least :data:`FLAT_MIN_LEAVES` (R^3:
    :data:`FLAT3_MIN_LEAVES`). The leaves a flat envelope needs fall as n grows
    (``benchmarks/bench_bundle_flat.py``: on R^2 up to 14,000 at n = 100 and 300-1,300 at
    n = 1,000-10,000; on R^3 up to the cap at n = 100 and 7,000-10,000 at n = 1,000-10,000),
    and the cap keeps the public prediction within the work limit for uploads up to n of
    about 10,000 on R^2 and 5,000 on R^3. (On R^2 at n = 100,000 and tau_m / tau = 5 the
    envelope needed 800 leaves; capped at 600 it certified an acceptance of e^-22: not
    offered.)"""
    if manifold is None:
        return _sphere_leaf_cap(n, None, n_eps)
    entry = _space(manifold)
    return MAX_LEAVES if entry is None else entry[3](n, manifold, n_eps)


def bundle_reach(support_radius, max_norm, manifold=None):
    """Largest n (eps_p + eps_v) at which the bundle sampler runs for this public support
    (public inputs only). On R^2 and R^3 (``manifold`` Euclidean): :data:`FLAT_MAX_N_EPS`. On
    :math:`S^2` (the default): :data:`SPHERE_MAX_N_EPS`, on the whole sphere and on every
    footpoint ball."""
    if manifold is not None:
        entry = _space(manifold)
        return 0.0 if entry is None else entry[1](support_radius, max_norm)
    return _sphere_reach(support_radius, max_norm)


def _sphere_reach(support_radius, max_norm):
    del support_radius, max_norm  # measured on the whole sphere and on balls (module docstring)
    return SPHERE_MAX_N_EPS


def bundle_preferred(manifold, support_radius, max_norm, *, g_max, sigma, n, draws,
                     batches=1):
    r"""Whether an exact joint release runs the bundle sampler rather than uniform proposals:
    where it is available, :math:`n(\epsilon_p + \epsilon_v) = 4 g_{max}/\sigma` is at most
    :func:`bundle_reach`, and the uniform
    proposals' public worst case (``batches x draws x n x`` the worst-case proposals per draw
    at the smallest ``sigma``) is above the ``max_exact_work`` limit (:mod:`dpcore.settings`):
    where uniform proposals are certainly practical they run (on typical data they need far
    fewer proposals than their worst case, and no envelope), beyond it the bundle sampler.
    Public inputs only."""
    if not bundle_joint_available(manifold, support_radius, max_norm):
        return False
    reach = bundle_reach(support_radius, max_norm, manifold)
    if 4.0 * float(g_max) / float(sigma) > reach * (1.0 + 1e-12):
        return False
    from ..sampling.rejection import worst_case_proposals
    from ..settings import get_limits

    uniform = float(batches) * float(draws) * float(n) * worst_case_proposals(g_max, sigma)
    return uniform > get_limits().max_exact_work


def regression_joint_bundle(mechanisms, t, y, size, rng=None, *, tau, support, max_norm,
                            progress=None):
    r"""Exact joint KNG draws :math:`(p, v)` from a certified bundle sampler, one per mechanism
    (module docstring): on :math:`S^2` the native sampler on a public footpoint ball or the
    whole sphere, on :math:`\mathbb{R}^2` and :math:`\mathbb{R}^3` the
    whitened-leaf sampler of :mod:`dpcore.sampling.bundle_flat` on the footpoint ball about
    the public centre.

    Parameters
    ----------
    mechanisms : list of KNormGradient
        One per budget pair (their ``sigma``; they share the manifold).
    t : array (n,)
        Covariates in [0, 1].
    y : array (n, *point_shape)
        Responses.
    size : int
        Draws per mechanism.
    rng : Generator or seed, optional
    tau : float
        The residual clip.
    support : Ball or None
        The public footpoint ball (``center``, ``radius``); None: the whole sphere.
    max_norm : float
        The shooting-vector bound.
    progress : callable, optional
        ``progress(fraction)`` after every round of each envelope's construction and every
        batch of its draws (it may raise to cancel).

    Returns
    -------
    list of MechanismResult
        One per mechanism, values ``(size, 2, *point_shape)``: lattice points of exact draws.
    """
    entry = _space(mechanisms[0].manifold)
    if entry is None:
        raise ValueError(f"No bundle sampler on {mechanisms[0].manifold!r}.")
    return entry[2](mechanisms, np.asarray(t, dtype=float), np.asarray(y, dtype=float),
                    int(size), np.random.default_rng(rng), tau=tau, support=support,
                    max_norm=max_norm, progress=progress)


def _lattice_draws(mechanisms, size, rng, make, lattice, sampler_text, progress):
    """One certified sampler per mechanism (``make(sigma, progress)``, reporting its envelope's
    construction), its draws as lattice points."""
    out = []
    for mech, part in zip(mechanisms, stages(progress, [1.0] * len(mechanisms)), strict=True):
        report(part, 0.0)
        # the construction reports every round too, so a Cancel stops it there
        sampler = make(float(mech.sigma), stage(part, 0.0, 0.5))
        report(part, 0.5)
        # after every batch of proposals: the bar moves, and a Cancel stops a long run there
        p, v, tried = sampler.sample(size, rng, progress=stage(part, 0.5, 1.0))
        report(part, 1.0)
        out.append(MechanismResult(
            values=np.stack([p, v], axis=1), exact=True, sampler=sampler_text,
            diagnostics={"proposals": int(tried), "acceptance": float(size / tried),
                         "envelope_cells": int(sampler.diagnostics["boxes"]),
                         "float_safety": LATTICE_NOTE, **lattice.record},
        ))
    return out


def _sphere_draws(mechanisms, t, y, size, rng, *, tau, support, max_norm, progress=None):
    """One :class:`~dpcore.sampling.bundle_native.NativeSphereSampler` per mechanism, on the
    public footpoint ball (``support``) or the whole sphere (None), its public leaf cap from
    n eps = 4 g_max / sigma; the released values its public lattice points."""
    from ..sampling.bundle_native import NativeSphereSampler
    from ..sampling.sphere_native import NativeLattice

    # g_max = |(tau, tau)| on S^2 (curvature >= 0: kng_exact.regression_gradient_bounds)
    g_max = math.sqrt(2.0) * float(tau)
    center = radius = None
    where = "over the whole sphere"
    if support is not None:
        center, radius = np.asarray(support.center, dtype=float), float(support.radius)
        where = f"on the footpoint ball of radius {radius:g}"
    lattice = NativeLattice(float(max_norm), center, radius)
    return _lattice_draws(
        mechanisms, size, rng,
        lambda sigma, built: NativeSphereSampler(
            t, y, float(tau), sigma, float(max_norm), center=center, radius=radius,
            draws=size, max_boxes=native_leaf_cap(4.0 * g_max / sigma),
            box_cost=NATIVE_BOX_COST, acceptance_goal=ACCEPTANCE_GOAL, progress=built),
        lattice, ("exact rejection sampling from an envelope certified on boxes in the "
                  "geodesic's own coordinates (frame rotation vector, speed) "
                  f"{where} x the shooting-vector ball of radius {float(max_norm):g}"),
        progress)


def _flat_draws(mechanisms, t, y, size, rng, *, tau, support, max_norm, progress=None):
    """The whitened-leaf sampler of :mod:`dpcore.sampling.bundle_flat` on R^2 or R^3,
    footpoints within the public ball about the public centre."""
    from ..sampling.bundle_flat import FlatBundleSampler
    from ..sampling.bundle_lattice import FlatLattice

    lattice = FlatLattice(np.asarray(support.center, dtype=float), float(support.radius),
                          float(max_norm))
    return _lattice_draws(
        mechanisms, size, rng,
        lambda sigma, built: FlatBundleSampler(
            t, y, float(tau), sigma, lattice, draws=size, box_cost=LEAF_TERMS,
            max_boxes=bundle_leaf_cap(t.size, mechanisms[0].manifold),
            acceptance_goal=ACCEPTANCE_GOAL, progress=built),
        lattice, ("exact rejection sampling from an envelope certified on whitened leaves "
                  "(affine and convexity bounds of the clipped gradient) on the footpoint "
                  f"ball of radius {float(support.radius):g} about the public centre x the "
                  f"shooting-vector ball of radius {float(max_norm):g}"), progress)


