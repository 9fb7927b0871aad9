r"""Exact KNG samplers (rejection, δ = 0) of :mod:`dpcore.mechanisms.kng`: the Fréchet-mean
KNG on a public ball and joint geodesic regression, with the public facts the release planner
reads (where uniform proposals and the refined envelopes exist, the gradient bounds).

Three samplers, all rejection from a certified envelope: uniform proposals on the public
support (:mod:`dpcore.sampling.rejection`), refined Lipschitz envelopes
(:mod:`dpcore.mechanisms.envelopes`) and, on S² (the whole sphere or a public footpoint
ball), R² and R³, the certified bundle samplers (:mod:`dpcore.mechanisms.kng_bundle`). The
functions are re-exported by :mod:`dpcore.mechanisms.kng`.
"""

from __future__ import annotations

import numpy as np

from .._progress import stages
from ..learning.frechet import frechet_mean_gradient
from ..learning.regression import regression_gradient
from .base import MechanismResult, size_tuple
from .envelopes import LATTICE_NOTE, UNIFORM_NOTE, frechet_envelope, joint_envelope_draws
from .kng_bundle import bundle_preferred, regression_joint_bundle


def _check_batch(mechanisms):
    """KNG mechanisms of one release (they must share the manifold; each has its ``sigma``)."""
    mechanisms = list(mechanisms)
    if not mechanisms or not all(hasattr(k, "sigma") and hasattr(k, "manifold")
                                 for k in mechanisms):
        raise TypeError("`mechanisms` must be a non-empty sequence of KNormGradient.")
    first = mechanisms[0].manifold
    if any(k.manifold is not first and repr(k.manifold) != repr(first) for k in mechanisms):
        raise ValueError("Batched KNG mechanisms must share the manifold.")
    return mechanisms


def exact_support_available(manifold):
    """Whether uniform proposals (hence exact KNG by rejection) exist on ``manifold``.

    True for Euclidean, Sphere, KendallShape, Hyperbolic and SPD(k <= 2), the spaces with an
    exact truncated Laplace sampler; False for SPD(k >= 3) and geomstats spaces.
    """
    from ..sampling.radial import volume_profile

    return volume_profile(manifold) is not None


def regression_gradient_bounds(manifold, tau, max_speed):
    r"""Public bounds on :math:`\|\nabla_p E\|` and :math:`\|\nabla_v E\|` for every data set.

    With residuals clipped to norm τ, covariates in [0, 1] and :math:`\|v\| \le V`
    (``max_speed``), each term of :math:`\nabla_p E = -\frac1n\sum_i (d_p Exp)^\dagger
    \epsilon_i` is a clipped residual transported back (an isometry) and scaled by the Jacobi
    factors :math:`C(\lambda)` of DESIGN §3 along the eigen-directions of the curvature operator
    of :math:`t_i v`, :math:`\lambda = K t_i^2 \|v\|^2` with K a sectional curvature. For
    :math:`K \ge 0`, :math:`|C| = |\cos\sqrt\lambda| \le 1` and
    :math:`|S| = |\sin\sqrt\lambda/\sqrt\lambda| \le 1`; for :math:`K \ge \kappa_l < 0`,
    :math:`C \le \cosh(\sqrt{-\kappa_l} V)` and :math:`S \le \sinh(x)/x` with
    :math:`x = \sqrt{-\kappa_l} V` (both increasing in :math:`-\lambda`). Averaging terms of norm
    at most :math:`\tau C_{\max}` (and :math:`t_i \tau S_{\max}`, :math:`t_i \le 1`) gives

    .. math:: \|\nabla_p E\| \le \tau C_{\max}, \qquad \|\nabla_v E\| \le \tau S_{\max}.

    Returns
    -------
    (float, float)
    """
    kappa_low = manifold.curvature_bounds[0]
    if kappa_low >= 0:
        return float(tau), float(tau)
    x = float(np.sqrt(-kappa_low) * max_speed)
    return float(tau * np.cosh(x)), float(tau * (np.sinh(x) / x if x > 0 else 1.0))


def _uniform_support(manifold, ball):
    from ..sampling.rejection import UniformBall, WholeSpace

    if ball is None or ball.radius >= manifold.diameter:
        if not manifold.is_compact:
            raise ValueError(f"Exact KNG on {manifold!r} needs a bounded support ball.")
        return WholeSpace(manifold)
    return UniformBall(manifold, ball.center, ball.radius)


def _exact_results(mechanisms, values, tried, support, size, extra=None):
    n_per = 1 if size is None else int(np.prod(size_tuple(size)))
    out = []
    for vals, n_tried in zip(values, tried, strict=True):
        out.append(MechanismResult(
            values=vals[0] if size is None else vals, exact=True,
            sampler=f"exact rejection sampling from the {support.describe()}",
            diagnostics={"proposals": int(n_tried),
                         "acceptance": float(n_per / max(int(n_tried), 1)),
                         "float_safety": UNIFORM_NOTE, **(extra or {})},
        ))
    return out


def frechet_mean_exact(mechanisms, points, size=1, rng=None, *, support, refined=None,
                       progress=None):
    r"""Exact KNG draws on the Fréchet energy restricted to the public ball ``support``.

    Two exact samplers (both rejection, δ = 0):

    - ``refined`` (default where a normal chart exists: Sphere, KendallShape, Euclidean,
      Hyperbolic, SPD): a piecewise envelope built from the gradient norm's Lipschitz
      constant (:mod:`dpcore.sampling.envelope`), whose acceptance stays high however
      concentrated the target is;
    - uniform proposals on the ball (:mod:`dpcore.sampling.rejection`); the gradient norm
      :math:`\|\frac1n\sum_i \log_z y_i\|` is at most :math:`2r` there (points and proposals
      in :math:`B_r(m_0)`), so a draw needs at most :math:`e^{2r/\sigma}` proposals on average.

    ``progress(fraction)``, if given, follows the accepted share of all draws
    (:mod:`dpcore._progress`; it may raise to cancel).
    """
    from ..sampling.rejection import sample_kng_exact

    mechanisms = _check_batch(mechanisms)
    m = mechanisms[0].manifold
    points = np.asarray(points, dtype=float)
    n_per = 1 if size is None else int(np.prod(size_tuple(size)))

    def gradient_norm(z):
        return m.norm(z, frechet_mean_gradient(m, z, points))

    if refined is None:
        refined = refined_chart_available(m)
    if refined:
        rng = np.random.default_rng(rng)
        out = []
        for mech, part in zip(mechanisms, stages(progress, [1.0] * len(mechanisms)),
                              strict=True):
            env = frechet_envelope(mech, points, support, draws=n_per)
            vals, tried = env.sample(n_per, rng, n_terms=points.shape[0], progress=part)
            if size is not None:
                vals = vals.reshape((*size_tuple(size), *m.point_shape))
            out.append(MechanismResult(
                values=vals[0] if size is None else vals, exact=True,
                sampler=("exact rejection sampling from a refined Lipschitz envelope on the "
                         f"ball of radius {support.radius:g}"),
                diagnostics={"proposals": int(tried), "acceptance": float(n_per / tried),
                             "envelope_cells": int(env.centers.shape[0]),
                             "lattice_spacing": env.lattice["lattice_spacing"],
                             "float_safety": LATTICE_NOTE},
            ))
        return out
    base = _uniform_support(m, support)
    values, tried = sample_kng_exact(gradient_norm, np.array([k.sigma for k in mechanisms]),
                                     base, n_per, rng, n_terms=points.shape[0],
                                     progress=progress)
    if size is not None:
        values = values.reshape((len(mechanisms), *size_tuple(size), *m.point_shape))
    return _exact_results(mechanisms, values, tried, base, size)


def refined_chart_available(manifold):
    """Whether :func:`frechet_mean_exact` can use the refined envelope on ``manifold``.

    It needs a normal chart (:class:`~dpcore.sampling.envelope.NormalChart`), i.e. a closed-form
    bound of the volume density of ``exp``
    (:meth:`~dpcore.manifolds.Manifold.log_volume_density_max`): every built-in manifold has
    one, a wrapped geomstats space does not.
    """
    try:
        manifold.log_volume_density_max(0.0, 0.0)
    except NotImplementedError:
        return False
    return True


def refined_joint_available(manifold):
    r"""Whether :func:`regression_joint_exact` can use the refined envelope on ``manifold``.

    True on :math:`\mathbb{R}^1`, whose tangent bundle is 2-dimensional. The envelope's cells
    are cubes in :math:`2d` dimensions with a global Lipschitz constant
    (:func:`~dpcore.sampling.envelope.regression_joint_lipschitz`); measured on the Linear
    regression example, :math:`d = 2` already fills 60,000 cells at n = 100 and needs millions
    of proposals at n = 1000, so larger d keep the uniform proposals (or MCMC). On curved spaces
    the clipped residual :math:`\log_{\hat y} y` jumps where :math:`\hat y` crosses the cut
    locus of :math:`y` (the antipode on the sphere), so no Lipschitz constant exists there.
    """
    # The Lipschitz constant is proven for the affine gradient of R^1 only.
    return manifold.is_linear and manifold.dim == 1


def joint_gradient_norms(manifold, p, v, t, y, tau, *, compiled=True):
    """Norms of the clipped joint regression gradient at proposals ``(p, v)``, as the
    uniform-proposal sampler evaluates them, and the path taken: the compiled kernels where
    one covers the space (:func:`~dpcore.sampling._compiled_sphere.compiled_gradient_norms`;
    not with ``compiled=False``), else the library's numpy gradient.

    The compiled kernels follow the numpy formulas term by term (within 1e-14 relative,
    ``tests/sampling/test_compiled_norms.py``); with clipping both are finite everywhere, so
    every proposal stays acceptable for every data set (DESIGN §12).

    Returns
    -------
    (ndarray of shape (m,), str)
        The norms and ``"compiled (numba)"`` or ``"numpy"``.
    """
    if compiled and tau is not None:
        from ..sampling._compiled_sphere import compiled_gradient_norms

        fast = compiled_gradient_norms(manifold, p, v, t, y, tau)
        if fast is not None and np.all(np.isfinite(fast)):
            return fast, "compiled (numba)"
    gp, gv = regression_gradient(manifold, p, v, t, y, tau=tau)
    return np.sqrt(manifold.norm(p, gp) ** 2 + manifold.norm(p, gv) ** 2), "numpy"


def regression_joint_exact(mechanisms, t, y, size=1, rng=None, *, tau, support=None,
                           max_norm, refined=None, bundle=None, squeeze=None, progress=None):
    r"""Exact joint KNG draws :math:`(p, v)` (``scheme="joint"``), several budgets in one run.

    The support is :math:`K \times \{\|v\| \le V\}` with :math:`K` the whole compact
    manifold or the public footpoint ball. Three exact samplers (all rejection, δ = 0):

    - ``refined`` (default where :func:`refined_joint_available`): a piecewise envelope from
      the gradient norm's Lipschitz constant on the product of balls
      (:class:`~dpcore.sampling.envelope.ProductBallDomain`), whose acceptance stays high
      however concentrated the target is;
    - ``bundle`` (default where :func:`~dpcore.mechanisms.kng_bundle.bundle_preferred`: S²,
      R² and R³, where its public cost is below the uniform proposals'):
      the certified bundle envelope of :mod:`dpcore.mechanisms.kng_bundle`;
    - proposals uniform on the support for the Sasaki volume, accepted with probability
      :math:`\exp(-\|\nabla_{(p,v)} E\|/\sigma)`. Residuals are clipped to ``tau``, which
      bounds the gradient by :func:`regression_gradient_bounds`. With ``squeeze`` (SPD(2)
      with a footpoint ball: :func:`~dpcore.release.uniform_cost.squeeze_plan`) a
      certified lower bound of the gradient norm decides most proposals without it; the law
      is the same (:mod:`dpcore.sampling.spd2_squeeze`).

    ``progress(fraction)``, if given, follows the accepted share of all draws
    (:mod:`dpcore._progress`; it may raise to cancel).

    Returns
    -------
    list of MechanismResult
        One per mechanism, values ``(size, 2, *point_shape)``.
    """
    from ..sampling.rejection import BundleBall, sample_kng_exact

    mechanisms = _check_batch(mechanisms)
    m = mechanisms[0].manifold
    t = np.asarray(t, dtype=float)
    y = np.asarray(y, dtype=float)

    paths = set()

    def gradient_norm(z):
        g, path = joint_gradient_norms(m, z[:, 0], z[:, 1], t, y, tau)
        paths.add(path)
        return g

    if refined is None:
        refined = refined_joint_available(m) and support is not None
    if refined:
        return joint_envelope_draws(mechanisms, t, y, size, rng, tau=tau, support=support,
                                    max_norm=max_norm, progress=progress)
    if bundle is None:
        bundle = bundle_preferred(
            m, None if support is None else support.radius, max_norm,
            g_max=float(np.hypot(*regression_gradient_bounds(m, tau, max_norm))),
            sigma=min(k.sigma for k in mechanisms), n=t.shape[0], draws=int(size))
    if bundle:
        return regression_joint_bundle(mechanisms, t, y, int(size), rng, tau=tau,
                                       support=support, max_norm=max_norm, progress=progress)
    if squeeze and support is not None and tau is not None:
        from ..sampling.spd2_squeeze import SPD2Squeeze, sample_squeezed, squeeze_available

        if squeeze_available(m):
            gen = np.random.default_rng(rng)
            sigmas = np.array([k.sigma for k in mechanisms])
            sq = SPD2Squeeze(support.center, support.radius, max_norm, t, y, tau,
                             float(sigmas.min()), max_leaves=int(squeeze["max_leaves"]),
                             proposals=squeeze["proposals"], rng=gen, progress=progress)
            values, tried, evaluated = sample_squeezed(sq, gradient_norm, sigmas, int(size),
                                                       gen, progress=progress)
            return _exact_results(mechanisms, values, tried, sq, size, {
                "compute_path": " and ".join(sorted(paths)), "squeeze_leaves": sq.n_leaves,
                "gradients_evaluated": int(evaluated)})
    bundle = BundleBall(_uniform_support(m, support), max_norm)
    values, tried = sample_kng_exact(gradient_norm, np.array([k.sigma for k in mechanisms]),
                                     bundle, int(size), rng, n_terms=t.shape[0],
                                     progress=progress)
    return _exact_results(mechanisms, values, tried, bundle, size,
                          {"compute_path": " and ".join(sorted(paths))})


__all__ = ["exact_support_available", "frechet_mean_exact", "joint_gradient_norms",
           "refined_chart_available", "refined_joint_available", "regression_gradient_bounds",
           "regression_joint_exact"]
