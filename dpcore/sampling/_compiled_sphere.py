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

The same :class:`CompiledChain` runs the chains of ``SPD(2)`` and ``KendallShape(k)``
(:mod:`dpcore.sampling._spd_numba`, :mod:`dpcore.sampling._kendall_numba`): the target names
its space, and :mod:`dpcore.sampling._compiled_regression` holds the registry of compiled
spaces (which manifold classes, which kernels, their data arguments).

On S^2 the sum over the data runs as one branch-free loop that the compiler vectorizes
(polynomial sin, cos and theta / sin(theta); :func:`~dpcore.sampling._sphere_numba.
_weighted_sums_s2`), with a scalar loop for the terms outside the polynomials' ranges.
"""

from __future__ import annotations

import importlib.util
import math

import numpy as np

from ._compiled_regression import (  # noqa: F401  (the target's other name, re-exported)
    RegressionTarget,
    attached_target,
    compiled_space,
    describe,
)
from ._compiled_regression import RegressionTarget as SphereRegressionTarget  # noqa: F401

#: Whether numba can be imported (checked once, without importing it).
NUMBA_AVAILABLE = importlib.util.find_spec("numba") is not None

KINDS = ("footpoint", "vector", "joint")
#: Largest array of Gaussians drawn at once (bytes): large batches stay within memory.
_GAUSSIAN_BYTES = 1 << 23


def compiled_chain(manifold, log_density, n_chains):
    """A :class:`CompiledChain` for this run, or None when the numpy path must run.

    The compiled path runs when numba is importable, ``log_density`` carries a complete
    :class:`~dpcore.sampling._compiled_regression.RegressionTarget` (``sigma`` one value or
    one per chain) of a registered space and ``manifold`` is the state space that target
    lives on.
    """
    target = attached_target(log_density)
    if not NUMBA_AVAILABLE or target is None or target.sigma is None:
        return None
    if np.ndim(target.sigma) not in (0, 1) or np.size(target.sigma) not in (1, n_chains):
        return None
    space = compiled_space(manifold, target, n_chains)
    if space is None:
        return None
    args = space.arguments(target, _copy)
    return None if args is None else CompiledChain(manifold, target, n_chains, space, args)


def _copy(a):
    return np.array(a, dtype=float, order="C")


def _norm_kernel_norms(manifold, p, v, t, y, tau):
    """:func:`compiled_gradient_norms` by a norm-only kernel (spaces without a compiled chain,
    :data:`~dpcore.sampling._compiled_regression.NORM_KERNELS`; clipped only), or None."""
    if not NUMBA_AVAILABLE or tau is None:
        return None
    from ._compiled_regression import norm_kernel

    p = np.asarray(p, dtype=float)
    ok = (np.shape(y)[1:] == manifold.point_shape and np.ndim(p) == 2
          and np.shape(v) == p.shape and p.shape[1:] == manifold.point_shape)
    kernel = norm_kernel(manifold) if ok else None
    if kernel is None:
        return None
    z = _copy(np.concatenate([p, np.asarray(v, dtype=float)], axis=1))
    return kernel(z, _copy(t), _copy(y), float(tau))


def _batch_space(manifold, p, v, y):
    """The compiled space of ``manifold`` when numba is present and ``p``, ``v`` are one batch
    axis of points of the responses' shape; else None."""
    if not NUMBA_AVAILABLE:
        return None
    from ._compiled_regression import _registry

    space = _registry().get(type(manifold))
    ok = (space is not None and space.accepts(manifold)
          and np.shape(y)[1:] == manifold.point_shape
          and np.ndim(p) == manifold.point_ndim + 1 and np.shape(v) == np.shape(p))
    return space if ok else None


def compiled_gradient_norms(manifold, p, v, t, y, tau):
    r"""Norms :math:`\sqrt{|\nabla_p E_\tau|^2 + |\nabla_v E_\tau|^2}` of the clipped
    regression gradient at a batch of ``(p, v)`` by the space's compiled joint log density
    (with :math:`\sigma = 1` and no bound on the vector), or by a norm-only kernel on spaces
    without a compiled chain (R^d and the hyperboloid, clipped only:
    :data:`~dpcore.sampling._compiled_regression.NORM_KERNELS`), or None where no compiled
    kernel covers ``manifold`` (or numba is missing): the caller then uses
    :func:`~dpcore.learning.regression.regression_gradient`. The kernels follow the numpy
    formulas term by term (agreement tested in ``tests/sampling/test_compiled_norms.py``);
    a state the numpy kernel would reject (a response on the cut locus without clipping)
    gets ``inf``.

    Parameters
    ----------
    manifold : Manifold
    p, v : numpy.ndarray, shape ``(m, *point_shape)``
        Footpoints and tangent shooting vectors.
    t, y : numpy.ndarray
        Covariates ``(n,)`` and responses ``(n, *point_shape)``.
    tau : float or None

    Returns
    -------
    numpy.ndarray of shape ``(m,)``, or None
    """
    space = _batch_space(manifold, p, v, y)
    if space is None:
        return _norm_kernel_norms(manifold, p, v, t, y, tau)
    p, y = np.asarray(p, dtype=float), np.asarray(y, dtype=float)
    target = RegressionTarget("joint", np.asarray(t, dtype=float), y, tau=tau,
                              space=space.name)
    args = space.arguments(target, _copy)
    if args is None:
        return None
    m = p.shape[0]
    args = tuple(np.ones(m) if a is None else a for a in args)
    kernels = space.kernels()
    x = _copy(np.concatenate([p.reshape(m, -1), np.asarray(v, dtype=float).reshape(m, -1)],
                             axis=1))
    out = np.empty(m)
    kernels.evaluate(kernels.JOINT, x, *args, out)
    return -out


def compiled_mean_squared_distances(manifold, p, v, t, y):
    r"""Mean over the data of :math:`d(\mathrm{Exp}_p(t_i v), y_i)^2` (twice the regression
    energy) at a batch of ``(p, v)`` by the space's compiled kernel where it has one
    (``KendallShape``, whose numpy distance aligns every pair), else None (the caller uses
    :func:`~dpcore.learning.regression.regression_energy`). Agreement tested in
    ``tests/sampling/test_compiled_norms.py``."""
    space = _batch_space(manifold, p, v, y)
    if space is None:
        return None
    y = np.asarray(y, dtype=float)
    kernels = space.kernels()
    kernel = getattr(kernels, "mean_squared_distances", None)
    if kernel is None:
        return None
    m = np.shape(p)[0]
    out = np.empty(m)
    kernel(_copy(np.reshape(p, (m, -1))), _copy(np.reshape(v, (m, -1))),
           _copy(np.reshape(t, -1)), _copy(y.reshape(y.shape[0], -1)), out)
    return out


class CompiledChain:
    """Runs :func:`~dpcore.sampling.mcmc.metropolis_hastings`'s loop with numba kernels."""

    def __init__(self, manifold, target, n_chains, space, args):
        kernels = space.kernels()
        self.kernels = kernels
        self.manifold = manifold
        self.kind = {"footpoint": kernels.FOOTPOINT, "vector": kernels.VECTOR,
                     "joint": kernels.JOINT}[target.kind]
        sigma = np.broadcast_to(np.asarray(target.sigma, dtype=float).ravel(), (n_chains,))
        # fresh C-ordered copies (``args``, and sigma in its slot, marked None): aligned
        # whatever the caller handed over (a Dask worker's arrays may not be), so the kernels
        # keep one compiled signature
        self.args = tuple(_copy(sigma) if a is None else a for a in args)
        self.n_parts = 2 if target.kind == "joint" else 1
        self.vector_scale = float(getattr(manifold, "vector_scale", 1.0))
        self.gauss_shape = space.gauss_shape(target)

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
                gaussians = gaussians.reshape(stop - j, self.n_parts, n, -1)
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
