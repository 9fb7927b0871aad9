"""The public side of a geodesic regression release: its inputs validated, its bounds with
their sources, the supports and the sensitivities, fixed before anything is drawn (the first
half of :func:`dpcore.release.regression._geodesic_regression_releases`; paper 002, DESIGN §8).
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass

import numpy as np

from .._validation import check_bound_sources, check_int, check_manifold, check_positive
from ..exceptions import PrivacyLeakWarning
from ..learning import GeodesicRegression
from ..sensitivity import default_max_speed, geodesic_regression_sensitivity
from ..settings import check_limit
from ._common import (
    _assumption,
    _check_covariates,
    _check_mode,
    _check_responses,
    _resolve_rng,
    project_to_ball,
)
from ._regression_records import _data_note, _default_center
from .record import (
    DATA_BOUNDS_CAVEAT,
    FAR_BASIN_CAVEAT,
    SAMPLERS,
    SCHEMES,
    SEQUENTIAL_CAVEAT,
)

__all__ = ["BOUND_NAMES", "RegressionSetup", "regression_setup"]

#: The bounds whose source :func:`private_geodesic_regression`'s ``bound_sources`` may state.
BOUND_NAMES = ("covariate_range", "tau", "tau_m", "center")


@dataclass(frozen=True)
class RegressionSetup:
    """A regression release's public side, as :func:`regression_setup` fixes it.

    Attributes
    ----------
    m : Manifold
    t : ndarray
        The covariates clipped to the covariate range and mapped to [0, 1].
    y : ndarray
        The responses (projected onto the public response ball in strict mode, where the space
        needs one).
    gen : numpy.random.Generator
    seeded : bool
        Whether the caller passed a seed.
    mode, scheme : str
    lo, hi : float
        The covariate range.
    tau : float
        The residual bound; ``clip`` is it in strict mode, None in paper mode.
    clip : float or None
    kappa_low : float
        The lower curvature bound.
    delta_p, delta_v : float
        The sensitivities of the footpoint and the shooting vector's gradients.
    sigma_rule : str
        ``"rigorous"`` (strict) or ``"paper"``.
    foot_support : tuple or None
        (centre, radius) of the footpoints' public ball.
    speed_cap : float or None
        The shooting vectors' public norm bound (strict mode).
    p_hat, v_start : ndarray or None
        The non-private fit's footpoint and a shooting vector within the cap, where paper mode
        or the sequential scheme computed it.
    assumptions : dict
        Every bound with its value, source and note (the release record's).
    caveats, leaks : list
        The caveats so far; the bounds taken from the data (paper mode).
    n_footpoints, n_vectors, chain_length, burn_in : int
    """

    m: object
    t: np.ndarray
    y: np.ndarray
    gen: np.random.Generator
    seeded: bool
    mode: str
    scheme: str
    lo: float
    hi: float
    tau: float
    clip: float | None
    kappa_low: float
    delta_p: float
    delta_v: float
    sigma_rule: str
    foot_support: tuple | None
    speed_cap: float | None
    p_hat: np.ndarray | None
    v_start: np.ndarray | None
    assumptions: dict
    caveats: list
    leaks: list
    n_footpoints: int
    n_vectors: int
    chain_length: int
    burn_in: int

    @property
    def n(self):
        """The number of rows."""
        return int(self.y.shape[0])

    @property
    def common(self):
        """The fields every release record of this request shares."""
        return dict(lo=self.lo, hi=self.hi, mode=self.mode, seeded=self.seeded,
                    assumptions=self.assumptions, n=self.n, kappa_low=self.kappa_low)


def regression_setup(manifold, x, y, *, tau=None, covariate_range=None, tau_m=None,
                     n_vectors=1, mode="strict", rng=None, center=None, n_footpoints=1,
                     max_speed=None, chain_length=2000, burn_in=1000, scheme=None,
                     sampler="auto", footpoint_radius=None, bound_sources=None, stacklevel=2):
    """Validate a regression request and fix its public side (:class:`RegressionSetup`).

    The arguments are :func:`~dpcore.release.private_geodesic_regression`'s; ``stacklevel``
    is that of the caller's warnings. Raises ValueError on a bad input, in the order the
    arguments are checked; warns (PrivacyLeakWarning) when strict-mode bounds are marked as
    taken from the data.
    """
    m = check_manifold(manifold)
    mode = _check_mode(mode)
    sources = check_bound_sources(bound_sources, "bound_sources", BOUND_NAMES)
    supplied = {"covariate_range": covariate_range, "tau": tau, "tau_m": tau_m,
                "center": center}
    for name in sources:
        if supplied[name] is None:
            raise ValueError(f"`bound_sources` names {name!r}, which was not passed: only a "
                             "supplied bound has a source.")
    from_data = sorted(k for k, v in sources.items() if v == "data")
    if scheme is None:
        scheme = "joint" if mode == "strict" else "sequential"
    if scheme not in SCHEMES:
        raise ValueError(f"`scheme` must be one of {SCHEMES}, got {scheme!r}.")
    if sampler not in SAMPLERS:
        raise ValueError(f"`sampler` must be one of {SAMPLERS}, got {sampler!r}.")
    n_vectors = check_int(n_vectors, "n_vectors")
    n_footpoints = check_int(n_footpoints, "n_footpoints")
    check_limit("max_replicates", n_footpoints * n_vectors)
    check_limit("max_chain_length", check_int(chain_length, "chain_length"))
    check_limit("max_burn_in", check_int(burn_in, "burn_in", minimum=0))
    y = _check_responses(m, y)
    x = _check_covariates(x, y.shape[0])
    gen, seeded = _resolve_rng(rng)
    kappa_low = m.curvature_bounds[0]
    needs_ball = kappa_low < 0 or not m.is_compact
    assumptions, caveats, leaks = {}, [SEQUENTIAL_CAVEAT], []

    # --- covariate range -------------------------------------------------------------
    if covariate_range is None:
        if mode == "strict":
            raise ValueError("Strict mode needs a public `covariate_range=(low, high)`.")
        covariate_range = (float(x.min()), float(x.max()))
        leaks.append("covariate_range")
        source = "data"
    else:
        source = sources.get("covariate_range", "public")
    lo, hi = (float(c) for c in covariate_range)
    if not hi > lo:
        raise ValueError(f"`covariate_range` must satisfy low < high, got {(lo, hi)}.")
    assumptions["covariate_range"] = _assumption([lo, hi], source, _data_note(source))
    t = (np.clip(x, lo, hi) - lo) / (hi - lo)

    # --- public ball for the responses ------------------------------------------------
    if center is None:
        # Only a space that needs a ball needs its centre: by default the origin, if any.
        center = (_default_center(m) if needs_ball or footpoint_radius is not None else None)
        center_source = "public default"
    else:
        center = np.asarray(center, dtype=float)
        center_source = sources.get("center", "public")
    if needs_ball:
        if center is None:
            raise ValueError(f"Pass a public `center` for the response ball on {m!r}.")
        if tau_m is None:
            if mode == "strict":
                raise ValueError(
                    f"Strict mode on {m!r} needs `tau_m`, the radius of a public ball about "
                    "`center` holding the responses."
                )
            tau_m = float(np.max(m.dist(y, center)))
            leaks.append("tau_m")
            assumptions["tau_m"] = _assumption(tau_m, "data")
        else:
            tau_m = check_positive(tau_m, "tau_m")
            tau_m_source = sources.get("tau_m", "public")
            assumptions["tau_m"] = _assumption(tau_m, tau_m_source, _data_note(tau_m_source))
            if mode == "strict":
                y = project_to_ball(m, y, center, tau_m)
        assumptions["center"] = _assumption(np.asarray(center), center_source,
                                            _data_note(center_source))

    if tau is None and mode == "strict":
        raise ValueError("Strict mode needs a public residual bound `tau`.")
    # --- non-private fit: paper mode's chains and bounds start from it; a strict joint
    # release never touches it (no data-dependent refusal, no chain started at the estimate).
    p_hat = v_hat = None
    if mode == "paper" or scheme == "sequential":
        fit = GeodesicRegression(m, covariate_range=(0.0, 1.0), tol=1e-8).fit(t, y)
        p_hat, v_hat = fit.footpoint_, fit.shooting_vector_

    # --- residual bound -----------------------------------------------------------------
    if tau is None:
        tau = float(np.max(m.dist(m.exp(p_hat, m.pointwise(t) * v_hat), y)))
        tau = max(tau, 1e-12)
        leaks.append("tau")
        assumptions["tau"] = _assumption(tau, "data", "largest residual of the non-private fit")
    else:
        tau = check_positive(tau, "tau")
        tau_source = sources.get("tau", "public")
        assumptions["tau"] = _assumption(
            tau, tau_source, "; ".join(filter(None, (
                "residuals clipped to this norm" if mode == "strict" else None,
                _data_note(tau_source))))
        )
    clip = tau if mode == "strict" else None

    delta_p, delta_v = geodesic_regression_sensitivity(
        y.shape[0], tau, kappa_low, tau_m if kappa_low < 0 else None
    )
    sigma_rule = "rigorous" if mode == "strict" else "paper"

    # --- supports -----------------------------------------------------------------------
    max_speed, speed_source, foot_support = _supports(
        m, mode, needs_ball, center, center_source, tau, tau_m, max_speed, footpoint_radius,
        from_data, assumptions)
    if mode == "strict" and foot_support is None and m.is_compact and kappa_low > 0:
        caveats.append(FAR_BASIN_CAVEAT)
    if mode == "strict":
        assumptions["max_speed"] = _assumption(max_speed, speed_source,
                                               "shooting vectors restricted to this norm")
    speed_cap = max_speed if mode == "strict" else None
    v_start = None
    if p_hat is not None:
        v_norm = float(m.norm(p_hat, v_hat))
        v_start = v_hat if (speed_cap is None or v_norm <= speed_cap) else v_hat * (
            0.999 * speed_cap / v_norm)

    if mode == "strict" and from_data:
        warnings.warn(
            f"Bounds marked as taken from the data ({', '.join(from_data)}): the release is not "
            "differentially private and is labelled NOT PRIVATE (bounds from the data).",
            PrivacyLeakWarning, stacklevel=stacklevel + 1)
        caveats.append(DATA_BOUNDS_CAVEAT)
    return RegressionSetup(
        m=m, t=t, y=y, gen=gen, seeded=seeded, mode=mode, scheme=scheme, lo=lo, hi=hi, tau=tau,
        clip=clip, kappa_low=kappa_low, delta_p=delta_p, delta_v=delta_v, sigma_rule=sigma_rule,
        foot_support=foot_support, speed_cap=speed_cap, p_hat=p_hat, v_start=v_start,
        assumptions=assumptions, caveats=caveats, leaks=leaks, n_footpoints=n_footpoints,
        n_vectors=n_vectors, chain_length=chain_length, burn_in=burn_in)


def _supports(m, mode, needs_ball, center, center_source, tau, tau_m, max_speed,
              footpoint_radius, from_data, assumptions):
    """The shooting vectors' norm bound with its source, and the footpoints' public ball
    (centre, radius) or None; records the footpoint support (and a footpoint ball's centre)
    in ``assumptions``."""
    if max_speed is None:
        max_speed = default_max_speed(m, tau_m, tau)
        speed_source = ("derived" if mode == "strict" and not {"tau", "tau_m"} & set(from_data)
                        else "derived from data bounds")
    else:
        max_speed = check_positive(max_speed, "max_speed")
        speed_source = "public"
    foot_support = None
    if needs_ball:
        foot_support = (center, tau_m + tau)
        assumptions["footpoint_support"] = _assumption(
            tau_m + tau, "derived" if not {"tau", "tau_m", "center"} & set(from_data)
            else "derived from data bounds",
            "footpoints restricted to B_{tau_m + tau}(center), app. C"
        )
    if footpoint_radius is not None:
        footpoint_radius = check_positive(footpoint_radius, "footpoint_radius")
        if center is None:
            raise ValueError(f"Pass a public `center` for the footpoint ball on {m!r}.")
        if needs_ball and footpoint_radius > tau_m + tau:
            raise ValueError(
                f"`footpoint_radius` = {footpoint_radius:g} exceeds tau_m + tau = "
                f"{tau_m + tau:g}: on {m!r} the sensitivity proof covers footpoints within "
                "tau_m + tau of the centre only (paper 002 app. C).")
        if not needs_ball:
            assumptions["center"] = _assumption(np.asarray(center), center_source,
                                                _data_note(center_source))
        foot_support = (center, footpoint_radius)
        assumptions["footpoint_support"] = _assumption(
            footpoint_radius, "public", "footpoints restricted to B_r(center), a public region")
    return max_speed, speed_source, foot_support
