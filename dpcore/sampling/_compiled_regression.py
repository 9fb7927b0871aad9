r"""Which geodesic-regression targets run as a compiled (numba) Metropolis-Hastings chain.

The KNG mechanisms (:mod:`dpcore.mechanisms.kng`) describe their regression targets with
:func:`regression_target`; :func:`~dpcore.sampling._compiled_sphere.compiled_chain` then asks
:func:`compiled_space` for the kernels of the target's space. :data:`SPACES` is the registry,
one :class:`CompiledSpace` per manifold class:

- ``Sphere(d)``: :mod:`dpcore.sampling._sphere_numba` (no footpoint ball in the joint target);
- ``SPD(2)``: :mod:`dpcore.sampling._spd_numba` (affine-invariant metric, 2 x 2 closed forms;
  the joint target may carry the public footpoint ball of strict mode);
- ``KendallShape(k)``: :mod:`dpcore.sampling._kendall_numba` (planar shapes, complex
  arithmetic on preshapes).

Every compiled chain draws the same random numbers in the same order as the numpy path and
gives the same chains up to floating-point rounding (``tests/sampling/test_compiled_*.py``);
where a space's numpy kernel would hand over to the generic path for a reason other than
rounding (SPD(2) responses beyond the kernel's condition-number limit), no compiled chain runs.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, replace

import numpy as np


@dataclass(frozen=True)
class RegressionTarget:
    r"""Description of a KNG regression target, :math:`\exp(-\|g\|/\sigma)` (on the sphere
    first, hence its other name ``SphereRegressionTarget``).

    Attributes
    ----------
    kind : {"footpoint", "vector", "joint"}
        ``"joint"``: states ``(p, v)`` of the tangent bundle, ``g`` the stacked gradient;
        ``"footpoint"``: states ``p``, ``v`` the transport of ``v_hat`` from ``p_hat``,
        ``g = grad_p E``; ``"vector"``: states are coordinates ``c`` of ``v = c @ basis`` at
        each chain's fixed footpoint, ``g = grad_v E``.
    t, y : numpy.ndarray
        Covariates ``(n,)`` and responses ``(n, *point_shape)`` (on ``Sphere(d)``,
        ``(n, d + 1)``).
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
    center, radius : numpy.ndarray and float, or None
        ``"joint"``: the public ball the footpoint is restricted to (None: no ball; on the
        sphere the compiled chain runs without one only).
    space : str
        The key of the compiled kernels in :data:`dpcore.sampling._compiled_regression.SPACES`
        (``"sphere"``, ``"spd"``, ``"kendall"``); the shapes above are those of that space's
        points (``(n, *point_shape)`` responses, ``(n_chains, dim, *point_shape)`` bases).
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
    center: np.ndarray | None = None
    radius: float | None = None
    space: str = "sphere"

    def with_sigma(self, sigma):
        """The same target with the K-norm scale ``sigma`` (one value or one per chain)."""
        return replace(self, sigma=np.asarray(sigma, dtype=float))


def describe(function, target):
    """Attach ``target`` to ``function`` (a gradient norm or log density); returns it.

    It is stored as ``function.compiled_target``, and on the sphere also under its first name,
    ``function.sphere_target``, which :func:`attached_target` reads first.
    """
    function.compiled_target = target
    if target.space == "sphere":
        function.sphere_target = target
    return function


def attached_target(function):
    """The target description attached to ``function`` by :func:`describe`, or None."""
    target = getattr(function, "sphere_target", None)
    return getattr(function, "compiled_target", None) if target is None else target




@dataclass(frozen=True)
class CompiledSpace:
    """The compiled kernels of one manifold class.

    Attributes
    ----------
    name : str
        Key of the space (``RegressionTarget.space``).
    module : str
        The kernels' module in :mod:`dpcore.sampling` (imported on first use: numba is heavy).
    accepts : callable
        ``accepts(manifold) -> bool``: whether the kernels cover this instance of the class.
    arguments : callable
        ``arguments(target, copy)``: the kernels' data arguments (``None`` in the slot of
        ``sigma``), or None when the numpy path must run for this data.
    dim : callable
        ``dim(point_shape)``: the manifold's dimension.
    ball : bool
        Whether the joint kernels take a footpoint ball (``center``, ``radius``).
    """

    name: str
    module: str
    accepts: object
    arguments: object
    dim: object
    ball: bool = False

    def kernels(self):
        """The kernels' module (imports numba)."""
        return importlib.import_module(f"{__package__}.{self.module}")

    def gauss_shape(self, target):
        """Shape of one chain's Gaussians of one part: the tangent coordinates of the vector
        stage, else the ambient shape ``random_tangent`` draws."""
        shape = tuple(target.y.shape[1:])
        return (self.dim(shape),) if target.kind == "vector" else shape


def _spd_arguments(target, copy):
    from ..learning.kernels.spd import _unit_responses_2x2

    resp = _unit_responses_2x2(np.asarray(target.y, dtype=float))
    if resp is None:  # the numpy kernel hands such responses to the generic path
        return None
    return _flat_arguments(target, copy, (copy(target.t), copy(resp)), 4)


def _kendall_arguments(target, copy):
    y = np.asarray(target.y, dtype=float).reshape(target.y.shape[0], -1)
    return _flat_arguments(target, copy, (copy(target.t), copy(y), copy(y.T),
                                          copy(np.einsum("ij,ij->i", y, y))), y.shape[1])


def _flat_arguments(target, copy, data, size):
    """``(*data, tau, sigma slot, max_norm, p_hat, v_hat, chains_p, chains_b, center,
    radius)`` with points flattened to ``size`` entries."""
    def flat(a, shape):
        return np.zeros(shape) if a is None else copy(np.reshape(a, shape))

    n_chains = 1 if target.chains_p is None else target.chains_p.shape[0]
    dim = 1 if target.chains_b is None else target.chains_b.shape[1]
    return (*data, -1.0 if target.tau is None else float(target.tau), None,
            -1.0 if target.max_norm is None else float(target.max_norm),
            flat(target.p_hat, (size,)), flat(target.v_hat, (size,)),
            flat(target.chains_p, (n_chains, size)), flat(target.chains_b, (n_chains, dim, size)),
            flat(target.center, (size,)),
            -1.0 if target.radius is None else float(target.radius))


def _sphere_arguments(target, copy):
    """The kernels' data arguments on the sphere (after the state and before ``sigma``'s
    successors: see :func:`dpcore.sampling._sphere_numba.log_density`)."""
    k = target.y.shape[1]
    empty_point = np.zeros(k)
    return (
        copy(target.t), copy(target.y), copy(np.transpose(target.y)),
        -1.0 if target.tau is None else float(target.tau),
        None,  # sigma, one per chain (CompiledChain)
        -1.0 if target.max_norm is None else float(target.max_norm),
        empty_point if target.p_hat is None else copy(target.p_hat),
        empty_point if target.v_hat is None else copy(target.v_hat),
        np.zeros((1, k)) if target.chains_p is None else copy(target.chains_p),
        np.zeros((1, 1, k)) if target.chains_b is None else copy(target.chains_b),
    )


def _sphere_space():
    return CompiledSpace("sphere", "_sphere_numba", lambda m: True, _sphere_arguments,
                         lambda shape: shape[0] - 1)


#: The registry: manifold class name -> its compiled space (filled on first use).
SPACES = {}


def _registry():
    if not SPACES:
        from ..manifolds import SPD, KendallShape, Sphere

        SPACES.update({
            Sphere: _sphere_space(),
            SPD: CompiledSpace("spd", "_spd_numba", lambda m: m.k == 2, _spd_arguments,
                               lambda shape: 3, ball=True),
            KendallShape: CompiledSpace("kendall", "_kendall_numba", lambda m: True,
                                        _kendall_arguments,
                                        lambda shape: 2 * shape[0] - 4),
        })
    return SPACES


#: Spaces without a compiled chain whose clipped joint gradient norm (the uniform exact
#: proposals' evaluation) has a compiled kernel: manifold class -> (module, function), the
#: function taking ``(z, t, y, tau)`` with ``z = [p, v]`` flattened per proposal.
NORM_KERNELS = {}


def norm_kernel(manifold):
    """The compiled clipped gradient-norm kernel of ``manifold`` (:data:`NORM_KERNELS`, imports
    numba), or None."""
    if not NORM_KERNELS:
        from ..manifolds import Euclidean, Hyperbolic

        # R^d: Exp_p(tv) = p + tv, residuals y - p - tv, the adjoint Jacobi maps the identity
        NORM_KERNELS[Euclidean] = ("_flat_numba", "flat_joint_norms")
        NORM_KERNELS[Hyperbolic] = ("_hyperbolic_numba", "hyperbolic_joint_norms")
    entry = NORM_KERNELS.get(type(manifold))
    if entry is None:
        return None
    return getattr(importlib.import_module(f"{__package__}.{entry[0]}"), entry[1])


def _space_named(name):
    for space in _registry().values():
        if space.name == name:
            return space
    return None


def regression_target(manifold, function, kind, t, y, **fields):
    """Attach the description of a regression target on ``manifold`` to ``function`` when a
    compiled space covers it (:data:`SPACES`), so that the sampler runs its compiled chain.

    Parameters
    ----------
    manifold : Manifold
        The regression's manifold.
    function : callable
        The gradient norm or log density the sampler will be given.
    kind : {"footpoint", "vector", "joint"}
        The target (:class:`~dpcore.sampling._compiled_sphere.SphereRegressionTarget`).
    t, y : numpy.ndarray
        Covariates and responses.
    **fields
        The target's other fields.

    Returns
    -------
    callable
        ``function``.
    """
    space = _registry().get(type(manifold))
    if space is None or not space.accepts(manifold):
        return function
    if fields.get("radius") is not None and not space.ball:
        return function
    return describe(function, RegressionTarget(kind, t, y, space=space.name, **fields))


def sampler_target(log_density, target, support):
    """Attach ``target`` to the sampler's ``log_density`` with the footpoint ball ``support``
    (a :class:`~dpcore.mechanisms.base.Ball` or None) the log density restricts the states
    to, where the space's kernels take one; otherwise (a ball they do not take, or a second
    ball) attach nothing, so that the numpy path runs. Returns ``log_density``."""
    if support is None:
        return describe(log_density, target)
    space = _space_named(target.space)
    if space is None or not space.ball or target.radius is not None \
            or target.kind == "vector":
        return log_density
    return describe(log_density, replace(target, center=np.asarray(support.center, float),
                                         radius=float(support.radius)))


def compiled_space(manifold, target, n_chains):
    """The :class:`CompiledSpace` of ``target`` if ``manifold`` is the state space it lives on
    (the base manifold, its tangent bundle walk, or the vector stage's coordinates), else
    None."""
    space = _space_named(target.space)
    if space is None:
        return None
    shape = tuple(target.y.shape[1:])
    walk = getattr(manifold, "bundle_base", None) is not None
    base = manifold.bundle_base if walk else manifold
    if target.kind in ("footpoint", "joint"):
        registered = _registry().get(type(base))
        if registered is not space or not space.accepts(base) or base.point_shape != shape:
            return None
        return space if walk == (target.kind == "joint") else None
    if target.kind == "vector":
        dim = space.dim(shape)
        ok = (bool(getattr(manifold, "is_linear", False)) and manifold.point_shape == (dim,)
              and target.chains_b is not None
              and target.chains_b.shape == (n_chains, dim, *shape))
        return space if ok else None
    return None
