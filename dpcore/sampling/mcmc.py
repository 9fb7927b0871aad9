r"""Batched multi-chain Riemannian random-walk Metropolis-Hastings (paper 002 app. A).

All chains move at once as one array ``(n_chains, *point_shape)``: the target log density is
evaluated once per step for the whole batch. The proposal from ``x`` is :math:`\exp_x(\eta\xi)`
with :math:`\xi` uniform in the unit ball of :math:`T_xM`. Its density with respect to the volume
is :math:`1/(c_\eta\, J_x(\log_x y))` with :math:`J_x` the volume factor of :math:`\exp_x`; on a
symmetric space the geodesic symmetry about the midpoint of ``x`` and ``y`` is an isometry
swapping them, so :math:`J_x(\log_x y) = J_y(\log_y x)` and, while :math:`\eta` stays below the
injectivity radius, the proposal is symmetric and needs no Hastings correction. Hence the
requirement ``manifold.is_homogeneous`` (all built-in manifolds are symmetric spaces) and the cap
of :math:`\eta` at half the injectivity radius.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._progress import steps
from .._validation import (
    as_float_array,
    check_int,
    check_manifold,
    check_positive,
    check_probability,
)
from ..manifolds.base import CutLocusError
from ._compiled_sphere import compiled_chain
from .diagnostics import _rank_diagnostics_many

#: Robbins-Monro gain on log(step size) at adaptation step t: _GAIN / (1 + t / 10) ** 0.6.
_GAIN = 3.0
#: At most this many tangent coordinates enter the ESS / R-hat summaries (largest variance).
_MAX_SUMMARIES = 10


@dataclass
class MCMCResult:
    """Output of :func:`metropolis_hastings`.

    Attributes
    ----------
    samples : numpy.ndarray
        Post-burn-in draws, shape ``(n_chains, n_samples, *point_shape)``.
    log_density : numpy.ndarray
        Target log density at the draws, shape ``(n_chains, n_samples)``.
    acceptance_rate : numpy.ndarray
        Fraction of accepted proposals per chain after burn-in, shape ``(n_chains,)``.
    step_size : float or numpy.ndarray
        The frozen proposal radius used after burn-in (one per group when the chains were run
        in several groups, shape ``(n_groups,)``).
    ess : float
        Smallest effective sample size over the scalar summaries (tangent coordinates at the
        first chain's starting point, and the log density): the smaller of the bulk-ESS and
        the tail-ESS of each (rank-normalised split chains, Vehtari et al. 2021;
        :mod:`dpcore.sampling.diagnostics`).
    rhat : float
        Largest rank-normalised split-R-hat over the same summaries (the larger of the bulk
        and the folded one for each).
    n_burn_in : int
        Number of discarded (adaptation) steps per chain.
    thin : int
        Steps between stored draws.
    groups : numpy.ndarray or None
        Group label of every chain (``None``: one group).
    reference : numpy.ndarray or None
        Point whose tangent coordinates enter the ESS / R-hat summaries.
    group_diagnostics : tuple or None
        ``(ess, rhat)`` of each group when the chains ran in several groups.
    compute_path : {"compiled (numba)", "numpy"}
        Which loop ran (:func:`~dpcore.sampling._compiled_sphere.compiled_chain`): public, it
        depends on the installed packages and the target's kind, never on the data.
    """

    samples: np.ndarray
    log_density: np.ndarray
    acceptance_rate: np.ndarray
    step_size: float
    ess: float
    rhat: float
    n_burn_in: int
    thin: int = 1
    groups: np.ndarray | None = None
    reference: np.ndarray | None = None
    group_diagnostics: tuple | None = None
    compute_path: str = "numpy"

    def subset(self, manifold, chains, *, group=None, diagnose=True):
        """The result restricted to the chains ``chains`` (an index array); ``group`` selects the
        step size of that group. ESS and R-hat are those of the group when ``chains`` are exactly
        its chains (computed once by the sampler), else recomputed on ``chains`` (NaN with
        ``diagnose=False``, for callers that diagnose otherwise)."""
        chains = np.asarray(chains)
        samples = self.samples[chains]
        log_values = self.log_density[chains]
        reference = samples[0, 0] if self.reference is None else self.reference
        if (group is not None and self.group_diagnostics is not None
                and np.array_equal(chains, np.flatnonzero(self.groups == group))):
            ess, rhat = self.group_diagnostics[group]
        elif diagnose:
            ess, rhat = _diagnostics(manifold, reference, samples, log_values)
        else:
            ess, rhat = math.nan, math.nan
        step = self.step_size
        if group is not None and np.ndim(step) > 0:
            step = float(np.asarray(step)[group])
        return MCMCResult(
            samples=samples, log_density=log_values,
            acceptance_rate=self.acceptance_rate[chains], step_size=step, ess=ess, rhat=rhat,
            n_burn_in=self.n_burn_in, thin=self.thin, groups=None, reference=self.reference,
            compute_path=self.compute_path,
        )

    @property
    def final(self):
        """Last draw of each chain, shape ``(n_chains, *point_shape)``."""
        return self.samples[:, -1]

    @property
    def n_chains(self) -> int:
        return int(self.samples.shape[0])

    @property
    def n_samples(self) -> int:
        return int(self.samples.shape[1])

    def to_dict(self):
        """JSON-safe diagnostics (floats, ints; ``None`` for undefined values)."""
        acc = np.asarray(self.acceptance_rate, dtype=float)
        return {
            "sampler": "riemannian random-walk metropolis-hastings",
            "n_chains": self.n_chains,
            "n_samples": self.n_samples,
            "n_burn_in": int(self.n_burn_in),
            "thin": int(self.thin),
            "step_size": (_json_float(self.step_size) if np.ndim(self.step_size) == 0
                          else [_json_float(v) for v in np.ravel(self.step_size)]),
            "acceptance_rate_mean": _json_float(np.mean(acc)),
            "acceptance_rate_min": _json_float(np.min(acc)),
            "acceptance_rate_max": _json_float(np.max(acc)),
            "ess": _json_float(self.ess),
            "rhat": _json_float(self.rhat),
            "compute_path": self.compute_path,
        }


def _json_float(value):
    value = float(value)
    return value if math.isfinite(value) else None


# ---------------------------------------------------------------------- validation
def _check_init(manifold, init, n_chains):
    x = as_float_array(init, "init")
    ps = tuple(manifold.point_shape)
    if x.shape == ps:
        x = np.broadcast_to(x, (n_chains, *ps)).copy()
    elif x.shape != (n_chains, *ps):
        raise ValueError(
            f"`init` must be one point of shape {ps} or one per chain, shape {(n_chains, *ps)}; "
            f"got {x.shape}."
        )
    if not np.all(np.isfinite(x)):
        raise ValueError("`init` contains NaN or infinite values.")
    return x


def _max_step(manifold):
    inj = float(manifold.injectivity_radius)
    return 0.5 * inj if math.isfinite(inj) and inj > 0 else math.inf


# ---------------------------------------------------------------------- one step
#: Uniforms (proposal radii and acceptance draws) are drawn this many steps at a time: one
#: generator call per block instead of two per step.
_BLOCK = 256


def _evaluate(log_density, points, n_chains):
    """Log density of a batch; points where it fails (cut locus, NaN) get ``-inf``.

    Called inside ``np.errstate(all="ignore")``: NaN and infinities are handled here.
    """
    try:
        values = np.asarray(log_density(points), dtype=float)
    except CutLocusError:
        values = np.array([_evaluate_one(log_density, points[i : i + 1]) for i in range(n_chains)])
    if values.shape != (n_chains,):
        raise ValueError(
            f"`log_density` must return an array of shape ({n_chains},) for a batch of "
            f"{n_chains} points, got shape {values.shape}."
        )
    # NaN or +inf -> -inf (NaN < inf is False); one ufunc call in place of three.
    values = np.where(values < np.inf, values, -np.inf)
    # A sum over each point is finite iff every coordinate is, except for finite coordinates
    # whose sum overflows: the exact check runs only when the fast one fails.
    if not np.isfinite(np.add.reduce(points.reshape(n_chains, -1), axis=1)).all():
        values[~np.isfinite(points.reshape(n_chains, -1)).all(axis=1)] = -np.inf
    return values


def _evaluate_one(log_density, point):
    try:
        return float(np.asarray(log_density(point), dtype=float).reshape(-1)[0])
    except CutLocusError:
        return -np.inf


class _Stepper:
    r"""The fused Metropolis step of one run: everything that does not change between steps
    (shapes, the proposal's flavour, the exponent of the radius law) is computed once, and the
    uniforms are drawn in blocks of :data:`_BLOCK` steps.

    The proposal is :math:`\exp_x(r\,\xi/\|\xi\|)` with :math:`\xi` a standard Gaussian
    tangent vector and :math:`r = \eta U^{1/\dim}`: uniform in the ball of radius η of
    :math:`T_xM`. On a linear manifold (flat :math:`\mathbb{R}^d`, ``exp(x, v) = x + v``) the
    Gaussian is drawn directly in the ambient coordinates, which are orthonormal there.
    """

    def __init__(self, manifold, log_density, n_chains, rng):
        self.manifold = manifold
        self.log_density = log_density
        self.n = n_chains
        self.rng = rng
        self.point_shape = tuple(manifold.point_shape)
        self.bcast = (n_chains,) + (1,) * len(self.point_shape)
        self.inv_dim = 1.0 / manifold.dim
        self.linear = bool(getattr(manifold, "is_linear", False))
        self._uniforms = None
        self._next = _BLOCK

    def _draw_uniforms(self):
        if self._next == _BLOCK:
            self._uniforms = self.rng.random((_BLOCK, 2, self.n))
            self._next = 0
        u = self._uniforms[self._next]
        self._next += 1
        return u[0], u[1]

    def propose(self, x, eta, u_radius):
        """``exp_x(eta * xi)`` with ``xi`` uniform in the unit ball of each tangent space."""
        radius = eta * u_radius ** self.inv_dim  # eta: scalar or one per chain
        if self.linear:
            v = self.rng.standard_normal((self.n, *self.point_shape))
            nv = np.sqrt(np.add.reduce(np.square(v).reshape(self.n, -1), axis=1))
        else:
            v = self.manifold.random_tangent(x, self.rng)
            nv = np.asarray(self.manifold.norm(x, v), dtype=float)
        scale = np.divide(radius, nv, out=np.zeros(self.n), where=nv > 0)
        v = v * scale.reshape(self.bcast)
        return x + v if self.linear else self.manifold.exp(x, v)

    def step(self, x, logp, eta):
        """One Metropolis step for all chains; returns ``(x, logp, accepted, accept_prob)``.

        Called inside ``np.errstate(all="ignore")``. From a zero-density state
        (``logp = -inf``) any proposal of positive density is accepted (ratio +inf); between
        two zero-density states the ratio is NaN and the move is rejected (``accept_prob`` 0).
        """
        u_radius, u_accept = self._draw_uniforms()
        y = self.propose(x, eta, u_radius)
        logq = _evaluate(self.log_density, y, self.n)
        diff = logq - logp
        # NaN (both -inf) -> probability 0; min(diff, 0) with exp gives the Metropolis ratio.
        accept_prob = np.exp(np.minimum(np.where(diff == diff, diff, -np.inf), 0.0))
        accepted = u_accept < accept_prob
        if accepted.all():
            return y, logq, accepted, accept_prob
        if accepted.any():
            x = np.where(accepted.reshape(self.bcast), y, x)
            logp = np.where(accepted, logq, logp)
        return x, logp, accepted, accept_prob


# ---------------------------------------------------------------------- sampler
def metropolis_hastings(
    manifold,
    log_density,
    init,
    *,
    n_samples,
    n_chains=4,
    burn_in=None,
    step_size=None,
    target_accept=0.4,
    thin=1,
    rng=None,
    adapt=True,
    groups=None,
    progress=None,
):
    r"""Riemannian random-walk Metropolis-Hastings with many chains in one array.

    Parameters
    ----------
    manifold : Manifold
        A homogeneous (symmetric) manifold, where the proposal is symmetric.
    log_density : callable
        ``log_density(points)`` maps a batch ``(n_chains, *point_shape)`` to ``(n_chains,)``
        unnormalised log densities (``-inf`` outside the support). A
        :class:`~dpcore.manifolds.CutLocusError` or NaN rejects the proposal.
    init : array
        One point (every chain starts there, e.g. the non-private estimate) or
        ``(n_chains, *point_shape)`` points.
    n_samples : int
        Stored draws per chain after burn-in.
    n_chains : int
        Number of chains.
    burn_in : int, optional
        Discarded steps per chain, during which the step size is tuned
        (default ``max(200, n_samples // 2)``).
    step_size : float or array, optional
        Initial proposal radius :math:`\eta` (default ``min(1, inj / 4)``), or one per group;
        always capped at half the injectivity radius.
    target_accept : float
        Acceptance rate the step size is tuned toward.
    thin : int
        Keep every ``thin``-th post-burn-in state.
    rng : None, int or numpy.random.Generator
        Source of randomness.
    adapt : bool
        Tune the step size during burn-in (Robbins-Monro on :math:`\log\eta` with the mean
        acceptance probability of the chains inside the support, then frozen at the average of
        the second half of burn-in).
    groups : array of int, optional
        Group label ``0 .. G-1`` of every chain, shape ``(n_chains,)``. Each group has its own
        step size, tuned on its chains' acceptance, so one run can serve targets of very
        different scales (e.g. one group per privacy budget); the ESS and R-hat reported are
        the worst over the groups. Default: all chains in one group.
    progress : callable, optional
        ``progress(fraction)`` with the finished fraction of the burn-in and sampling steps,
        called about a hundred times (:func:`dpcore._progress.steps`). It may raise to cancel
        the run; nothing here catches it.

    Returns
    -------
    MCMCResult

    Raises
    ------
    NotImplementedError
        If ``manifold.is_homogeneous`` is False: the proposal would need a Hastings correction
        (the volume distortion of ``exp`` at both ends), which is not implemented.

    Notes
    -----
    A release computed from MCMC draws is only approximately differentially private
    (:math:`\delta` of order 1 / chain length; paper 002 app. A.1).

    When ``log_density`` carries the description of a geodesic-regression KNG target on a
    space with compiled kernels (``Sphere``, ``SPD(2)``, ``KendallShape``; attached by
    :mod:`dpcore.mechanisms.kng`, registry in :mod:`dpcore.sampling._compiled_regression`),
    the loop runs compiled (:mod:`dpcore.sampling._compiled_sphere`, numba): same random
    numbers, same adaptation, same draws up to floating-point rounding. Without numba the
    numpy loop runs.
    """
    check_manifold(manifold)
    if not manifold.is_homogeneous:
        raise NotImplementedError(
            f"{manifold!r} is not homogeneous: the random-walk proposal exp_x(eta xi) is not "
            "symmetric there and needs a Hastings correction (ratio of the volume factors of "
            "exp at both ends), which is not implemented."
        )
    if not callable(log_density):
        raise TypeError("`log_density` must be callable.")
    n_samples = check_int(n_samples, "n_samples")
    n_chains = check_int(n_chains, "n_chains")
    thin = check_int(thin, "thin")
    if burn_in is None:
        burn_in = max(200, n_samples // 2)
    burn_in = check_int(burn_in, "burn_in", minimum=0)
    target_accept = check_probability(target_accept, "target_accept")
    eta_max = _max_step(manifold)
    labels, n_groups = _check_groups(groups, n_chains)
    if step_size is None:
        step_size = min(1.0, 0.5 * eta_max)
    if np.ndim(step_size) == 0:
        eta = np.full(n_groups, min(check_positive(step_size, "step_size"), eta_max))
    else:
        eta = np.asarray(step_size, dtype=float)
        if eta.shape != (n_groups,) or not np.all(eta > 0):
            raise ValueError(f"`step_size` must be positive, one value or one per group "
                             f"({n_groups}), got shape {eta.shape}.")
        eta = np.minimum(eta, eta_max)
    rng = np.random.default_rng(rng)

    x = _check_init(manifold, init, n_chains)
    reference = x[0].copy()
    samples = np.empty((n_chains, n_samples, *manifold.point_shape))
    log_values = np.empty((n_chains, n_samples))
    tick = steps(progress, burn_in + n_samples * thin)
    compiled = compiled_chain(manifold, log_density, n_chains)
    if compiled is not None:
        logp = compiled.evaluate(x)
        eta, x, logp, accepted_total = compiled.run(
            x, logp, eta, eta_max, burn_in=burn_in, n_samples=n_samples, thin=thin,
            target=target_accept, adapt=adapt, rng=rng, labels=labels, samples=samples,
            log_values=log_values, tick=None if progress is None else tick, block=_BLOCK)
    else:
        eta, accepted_total = _numpy_chain(
            manifold, log_density, x, eta, eta_max, n_chains=n_chains, burn_in=burn_in,
            n_samples=n_samples, thin=thin, target_accept=target_accept, adapt=adapt, rng=rng,
            labels=labels, n_groups=n_groups, samples=samples, log_values=log_values, tick=tick)
    per_group = None
    if n_groups == 1:
        ess, rhat = _diagnostics(manifold, reference, samples, log_values)
    else:
        per_group = tuple(_diagnostics(manifold, reference, samples[labels == g],
                                       log_values[labels == g]) for g in range(n_groups))
        ess_values = [e for e, _ in per_group if math.isfinite(e)]
        rhat_values = [r for _, r in per_group if math.isfinite(r)]
        ess = min(ess_values) if ess_values else math.nan
        rhat = max(rhat_values) if rhat_values else math.nan
    return MCMCResult(
        samples=samples,
        log_density=log_values,
        acceptance_rate=accepted_total / (n_samples * thin),
        step_size=float(eta[0]) if n_groups == 1 else eta,
        ess=ess,
        rhat=rhat,
        n_burn_in=burn_in,
        thin=thin,
        groups=None if n_groups == 1 else labels,
        reference=reference,
        group_diagnostics=per_group,
        compute_path="numpy" if compiled is None else "compiled (numba)",
    )


def _numpy_chain(manifold, log_density, x, eta, eta_max, *, n_chains, burn_in, n_samples, thin,
                 target_accept, adapt, rng, labels, n_groups, samples, log_values, tick):
    """The burn-in and sampling loops with numpy steps; fills ``samples`` and
    ``log_values`` and returns the frozen step sizes and the acceptance counts."""
    accepted_total = np.zeros(n_chains)
    stepper = _Stepper(manifold, log_density, n_chains, rng)
    with np.errstate(all="ignore"):
        logp = _evaluate(log_density, x, n_chains)
        eta, x, logp = _burn_in(stepper, x, logp, eta, eta_max, burn_in, target_accept, adapt,
                                labels, n_groups, tick=tick)
        eta_chain = eta[labels] if n_groups > 1 else float(eta[0])
        step = stepper.step
        for i in range(n_samples * thin):
            x, logp, accepted, _ = step(x, logp, eta_chain)
            accepted_total += accepted
            if (i + 1) % thin == 0:
                samples[:, i // thin] = x
                log_values[:, i // thin] = logp
            tick(burn_in + i + 1)
    return eta, accepted_total


def _check_groups(groups, n_chains):
    """Labels ``(n_chains,)`` in ``0 .. G-1`` and G (one group when ``groups`` is None)."""
    if groups is None:
        return np.zeros(n_chains, dtype=int), 1
    labels = np.asarray(groups)
    if labels.shape != (n_chains,) or not np.issubdtype(labels.dtype, np.integer):
        raise ValueError(f"`groups` must be integer labels, one per chain ({n_chains}), got "
                         f"{labels.dtype} array of shape {labels.shape}.")
    n_groups = int(labels.max()) + 1 if labels.size else 1
    if labels.min() < 0 or np.unique(labels).size != n_groups:
        raise ValueError("`groups` must use every label 0 .. G-1 (G groups).")
    return labels.astype(int), n_groups


def _burn_in(stepper, x, logp, eta, eta_max, n_steps, target, adapt, labels, n_groups,
             tick=None):
    """Run the burn-in, tuning one step size per group; returns ``(frozen etas, x, logp)``.

    The rate a group's step size is tuned on is the mean acceptance probability of its chains
    that started the step inside the support (finite log density): a chain still at a
    zero-density start accepts only jumps into the support, and counting its zeros would
    shrink the step until it can no longer reach it. A group with no such chain keeps its step.
    ``tick(t)`` is called after step ``t``.
    """
    if tick is None:
        tick = steps(None, 1)
    single = n_groups == 1
    step = stepper.step
    if not adapt:
        eta_chain = float(eta[0]) if single else eta[labels]
        for t in range(n_steps):
            x, logp, _, _ = step(x, logp, eta_chain)
            tick(t + 1)
        return eta, x, logp
    log_cap = math.log(eta_max) if math.isfinite(eta_max) else math.inf
    half = n_steps // 2
    if single:  # Python floats: no array call per step for the adaptation itself
        log_eta, inv_n, total = math.log(float(eta[0])), 1.0 / stepper.n, 0.0
        for t in range(n_steps):
            live = logp > -np.inf
            n_live = int(np.count_nonzero(live))
            x, logp, _, accept_prob = step(x, logp, math.exp(log_eta))
            if n_live == stepper.n:
                rate = float(np.add.reduce(accept_prob)) * inv_n
            else:
                rate = float(np.add.reduce(accept_prob[live])) / n_live if n_live else target
            log_eta = min(log_eta + _GAIN / (1.0 + t / 10.0) ** 0.6 * (rate - target), log_cap)
            if t >= half:
                total += log_eta
            tick(t + 1)
        if n_steps:
            log_eta = total / (n_steps - half)
        return np.minimum(np.exp(np.array([log_eta])), eta_max), x, logp
    log_eta = np.log(eta)
    total = np.zeros(n_groups)
    for t in range(n_steps):
        live = (logp > -np.inf).astype(float)
        counts = np.bincount(labels, weights=live, minlength=n_groups)
        x, logp, _, accept_prob = step(x, logp, np.exp(log_eta)[labels])
        sums = np.bincount(labels, weights=accept_prob * live, minlength=n_groups)
        rate = np.divide(sums, counts, out=np.full(n_groups, target), where=counts > 0)
        log_eta = np.minimum(log_eta + _GAIN / (1.0 + t / 10.0) ** 0.6 * (rate - target), log_cap)
        if t >= half:
            total += log_eta
        tick(t + 1)
    if n_steps:
        log_eta = total / (n_steps - half)
    return np.minimum(np.exp(log_eta), eta_max), x, logp


def _diagnostics(manifold, reference, samples, log_values):
    """Min ESS (bulk or tail) and max rank-normalised split-R-hat over tangent coordinates at
    ``reference`` and the log density."""
    return _diagnostics_many(manifold, [reference], samples, log_values, 1)[0]


def _summaries(manifold, reference, samples, log_values):
    """The scalar summaries :func:`_diagnostics` diagnoses: the log density and the tangent
    coordinates at ``reference`` with the largest variances (constant or non-finite ones
    left out)."""
    n_chains, n_samples = log_values.shape
    summaries = [log_values]
    flat = samples.reshape((n_chains * n_samples, *manifold.point_shape))
    try:
        with np.errstate(all="ignore"):
            coords = np.asarray(manifold.log(reference, flat), dtype=float)
        coords = coords.reshape(n_chains, n_samples, -1)
    except CutLocusError:
        coords = np.asarray(manifold.dist(reference, flat)).reshape(n_chains, n_samples, 1)
    variances = np.var(coords.reshape(-1, coords.shape[-1]), axis=0)
    scale = max(float(np.max(variances)), 0.0)
    order = np.argsort(variances)[::-1][:_MAX_SUMMARIES]
    summaries += [coords[..., j] for j in order if variances[j] > 1e-20 * scale and scale > 0]
    return [s for s in summaries if np.all(np.isfinite(s)) and np.ptp(s) != 0]


def _diagnostics_many(manifold, references, samples, log_values, n_groups):
    """:func:`_diagnostics` of each of ``n_groups`` consecutive, equal groups of chains (group
    ``g`` at ``references[g]``), with the rank diagnostics of all their summaries in one call
    (:func:`~dpcore.sampling.diagnostics._rank_diagnostics_many`); a list of ``(ess, rhat)``."""
    per = log_values.shape[0] // n_groups
    if log_values.shape[1] < 4:
        return [(math.nan, math.nan)] * n_groups
    summaries, owner = [], []
    for g in range(n_groups):
        rows = slice(g * per, (g + 1) * per)
        found = _summaries(manifold, references[g], samples[rows], log_values[rows])
        summaries += found
        owner += [g] * len(found)
    ess, rhat = [math.inf] * n_groups, [-math.inf] * n_groups
    for g, (bulk, tail, r) in zip(owner, _rank_diagnostics_many(summaries) if summaries
                                  else (), strict=True):
        ess[g] = min([ess[g], *(e for e in (bulk, tail) if not math.isnan(e))])
        rhat[g] = rhat[g] if math.isnan(r) else max(rhat[g], r)
    return [(math.nan, math.nan) if not math.isfinite(e)
            else (float(e), float(r) if math.isfinite(r) else math.nan)
            for e, r in zip(ess, rhat, strict=True)]
