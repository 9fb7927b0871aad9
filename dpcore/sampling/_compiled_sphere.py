r"""The compiled (numba) Metropolis-Hastings chain of geodesic regression on ``Sphere(d)``.

The KNG mechanisms (:mod:`dpcore.mechanisms.kng`) attach a :class:`SphereRegressionTarget` to
the log densities of the regression targets on the sphere (the joint target on the tangent
bundle, the footpoint stage and the vector stage). :func:`metropolis_hastings
<dpcore.sampling.mcmc.metropolis_hastings>` recognises it through :func:`compiled_chain` and
then runs the whole chain, proposal, log density, acceptance and burn-in adaptation, as one
compiled loop (:mod:`dpcore.sampling._sphere_numba`) instead of about 60 us of numpy calls per
step.

The law of the chain does not change. All random numbers are still drawn by numpy from the
run's Generator, in the order the numpy path draws them (a block of uniforms every
``_BLOCK`` steps, then the tangent Gaussians of each step), and the compiled loop consumes
them; step-size adaptation and diagnostics are those of the numpy path. Both paths give the
same chains up to floating-point rounding (``tests/sampling/test_compiled_sphere.py``).

numba is imported only when a compiled chain runs. Without numba (it is a pinned dependency,
but an environment may lack it) :func:`compiled_chain` returns None and the numpy path runs:
the results are the same up to rounding, only slower. The kernels are cached on disk
(``cache=True``): the first run in a fresh environment compiles them (about 4 s on the 2-core
development machine), later processes import numba (about 1 s) and load them (0.2 s);
``benchmarks/bench_single_call.py`` measures both.

On S^2 the sum over the data runs as one branch-free loop that the compiler vectorizes
(polynomial sin, cos and theta / sin(theta); :func:`~dpcore.sampling._sphere_numba.
_weighted_sums_s2`), with a scalar loop for the terms outside the polynomials' ranges.
"""

from __future__ import annotations

import importlib.util
import math
from dataclasses import dataclass, replace

import numpy as np

#: Whether numba can be imported (checked once, without importing it).
NUMBA_AVAILABLE = importlib.util.find_spec("numba") is not None

KINDS = ("footpoint", "vector", "joint")
#: Largest array of Gaussians drawn at once (bytes): large batches stay within memory.
_GAUSSIAN_BYTES = 1 << 23


@dataclass(frozen=True)
class SphereRegressionTarget:
    r"""Description of a KNG regression target on ``Sphere(d)``, :math:`\exp(-\|g\|/\sigma)`.

    Attributes
    ----------
    kind : {"footpoint", "vector", "joint"}
        ``"joint"``: states ``(p, v)`` of the tangent bundle, ``g`` the stacked gradient;
        ``"footpoint"``: states ``p``, ``v`` the transport of ``v_hat`` from ``p_hat``,
        ``g = grad_p E``; ``"vector"``: states are coordinates ``c`` of ``v = c @ basis`` at
        each chain's fixed footpoint, ``g = grad_v E``.
    t, y : numpy.ndarray
        Covariates ``(n,)`` and responses ``(n, d + 1)``.
    tau : float or None
        Residual clipping bound (None: no clipping).
    sigma : float, numpy.ndarray or None
        Scale of the K-norm density, one value or one per chain (set by the sampler front
        end).
    max_norm : float or None
        Bound on the shooting vector's norm (``"joint"``, ``"vector"``).
    p_hat, v_hat : numpy.ndarray or None
        ``"footpoint"``: the point and vector transported to every proposal.
    chains_p, chains_b : numpy.ndarray or None
        ``"vector"``: every chain's footpoint ``(n_chains, d + 1)`` and orthonormal basis
        ``(n_chains, d, d + 1)`` of its tangent space.
    """

    kind: str
    t: np.ndarray
    y: np.ndarray
    tau: float | None = None
    sigma: float | None = None
    max_norm: float | None = None
    p_hat: np.ndarray | None = None
    v_hat: np.ndarray | None = None
    chains_p: np.ndarray | None = None
    chains_b: np.ndarray | None = None

    def with_sigma(self, sigma):
        """The same target with the K-norm scale ``sigma`` (one value or one per chain)."""
        return replace(self, sigma=np.asarray(sigma, dtype=float))


def describe(function, target):
    """Attach ``target`` to ``function`` (a gradient norm or log density); returns it."""
    function.sphere_target = target
    return function


def compiled_chain(manifold, log_density, n_chains):
    """A :class:`CompiledChain` for this run, or None when the numpy path must run.

    The compiled path runs when numba is importable, ``log_density`` carries a complete
    :class:`SphereRegressionTarget` (``sigma`` one value or one per chain) and ``manifold`` is
    the state space that target lives on.
    """
    target = getattr(log_density, "sphere_target", None)
    if not NUMBA_AVAILABLE or target is None or target.sigma is None:
        return None
    if np.ndim(target.sigma) not in (0, 1) or np.size(target.sigma) not in (1, n_chains):
        return None
    if not _state_space_matches(manifold, target, n_chains):
        return None
    return CompiledChain(manifold, target, n_chains)


def _state_space_matches(manifold, target, n_chains):
    from ..manifolds import Sphere
    from ..mechanisms.bundle import TangentBundleWalk

    k = target.y.shape[1]
    if target.kind == "footpoint":
        return type(manifold) is Sphere and manifold.point_shape == (k,)
    if target.kind == "joint":
        return (type(manifold) is TangentBundleWalk and type(manifold.base) is Sphere
                and manifold.point_shape == (2, k))
    if target.kind == "vector":
        return (bool(getattr(manifold, "is_linear", False)) and manifold.point_shape == (k - 1,)
                and target.chains_b is not None and target.chains_b.shape == (n_chains, k - 1, k))
    return False


def _copy(a):
    return np.array(a, dtype=float, order="C")


class CompiledChain:
    """Runs :func:`~dpcore.sampling.mcmc.metropolis_hastings`'s loop with numba kernels."""

    def __init__(self, manifold, target, n_chains):
        from . import _sphere_numba as kernels

        self.kernels = kernels
        self.manifold = manifold
        self.kind = {"footpoint": kernels.FOOTPOINT, "vector": kernels.VECTOR,
                     "joint": kernels.JOINT}[target.kind]
        k = target.y.shape[1]
        empty_point = np.zeros(k)
        sigma = np.broadcast_to(np.asarray(target.sigma, dtype=float).ravel(), (n_chains,))
        # fresh C-ordered copies: aligned whatever the caller handed over (a Dask worker's
        # arrays may not be), so the kernels keep one compiled signature
        self.args = (
            _copy(target.t), _copy(target.y), _copy(np.transpose(target.y)),
            -1.0 if target.tau is None else float(target.tau),
            _copy(sigma),
            -1.0 if target.max_norm is None else float(target.max_norm),
            empty_point if target.p_hat is None else _copy(target.p_hat),
            empty_point if target.v_hat is None else _copy(target.v_hat),
            np.zeros((1, k)) if target.chains_p is None else _copy(target.chains_p),
            np.zeros((1, 1, k)) if target.chains_b is None else _copy(target.chains_b),
        )
        self.n_parts = 2 if target.kind == "joint" else 1
        self.vector_scale = float(getattr(manifold, "vector_scale", 1.0))
        self.gauss_shape = (k - 1,) if target.kind == "vector" else (k,)

    def evaluate(self, x):
        """Log density of a batch ``(n_chains, *point_shape)``."""
        n = x.shape[0]
        out = np.empty(n)
        self.kernels.evaluate(self.kind, _copy(x.reshape(n, -1)), *self.args, out)
        return out

    def run(self, x, logp, eta, eta_max, *, burn_in, n_samples, thin, target, adapt, rng,
            labels, samples, log_values, tick, block):
        """The burn-in and sampling loops of the numpy path, compiled; returns the frozen
        step sizes (one per group of ``labels``), the final states and their log densities,
        and the acceptances.

        ``samples`` and ``log_values`` are filled in place. Random numbers are drawn from
        ``rng`` exactly as the numpy path draws them: ``rng.random((block, 2, n))`` at every
        ``block``-th step, then each step's Gaussians (one ``(n, *shape)`` array per part).
        """
        n = x.shape[0]
        state = _copy(x.reshape(n, -1))
        logp = _copy(logp)
        flat_samples = samples.reshape(n, samples.shape[1], -1)
        accepted = np.zeros(n)
        total = burn_in + n_samples * thin
        log_cap = math.log(eta_max) if math.isfinite(eta_max) else math.inf
        half = burn_in // 2
        eta = np.asarray(eta, dtype=float)
        labels = np.ascontiguousarray(labels, dtype=np.int64)
        eta_state = np.stack([np.log(eta), np.zeros_like(eta), eta.copy()])
        inv_dim = 1.0 / self.manifold.dim
        every = max(1, total // 100) if tick is not None else total
        start = 0
        step_bytes = 8 * self.n_parts * n * int(np.prod(self.gauss_shape))
        max_steps = max(1, _GAUSSIAN_BYTES // step_bytes)
        while start < total:
            stop_block = min(start + block, total)
            uniforms = rng.random((block, 2, n))
            j = start
            while j < stop_block:
                # chunk ends: the block's end, the end of burn-in, the next progress report,
                # and a bounded array of Gaussians
                stop = min(stop_block, (j // every + 1) * every, j + max_steps)
                if j < burn_in:
                    stop = min(stop, burn_in)
                phase = 0 if j < burn_in else 1
                if phase == 1 and j == burn_in:
                    eta = self._freeze(eta, eta_state, burn_in, half, adapt, eta_max)
                # consecutive draws: the same numbers as one draw per step
                gaussians = rng.standard_normal((stop - j, self.n_parts, n, *self.gauss_shape))
                self.kernels.run_steps(
                    self.kind, state, logp, uniforms, gaussians, j - start, stop - start,
                    j, phase, labels, eta_state, adapt, target, log_cap, half, inv_dim, thin,
                    burn_in, flat_samples, log_values, accepted, *self.args, self.vector_scale)
                j = stop
                if tick is not None:
                    tick(j)
            start = stop_block
        if total == burn_in:
            eta = self._freeze(eta, eta_state, burn_in, half, adapt, eta_max)
        return eta, state.reshape(x.shape), logp, accepted

    @staticmethod
    def _freeze(eta, eta_state, burn_in, half, adapt, eta_max):
        """The step sizes after burn-in, as ``mcmc._burn_in`` freezes them."""
        if adapt:
            log_eta = eta_state[1] / (burn_in - half) if burn_in else eta_state[0]
            eta = np.minimum(np.exp(log_eta), eta_max)
        eta_state[2] = eta
        return eta
