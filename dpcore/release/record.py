"""The release record (:class:`Release`), what a release may claim, and the label texts
(DESIGN §8, §12).
"""

from __future__ import annotations

import json
import numbers
from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from .. import __version__

MODES = ("strict", "paper")
FRECHET_MECHANISMS = ("laplace", "kng", "gaussian", "ambient_laplace")
SEQUENTIAL_CAVEAT = (
    "Sequential scheme (paper 002): the footpoint is drawn with the shooting vector fixed at its "
    "non-private estimate, which the sensitivity proof treats as fixed; the total is the sum "
    "epsilon_p + epsilon_v per geodesic."
)
#: Ways of splitting the budget of one private geodesic (DESIGN §8).
SCHEMES = ("sequential", "joint")
SEEDED_CAVEAT = "Seeded randomness: reproducible demo, not for publication."
#: What a release may claim (DESIGN §12), from :attr:`Release.guarantee`.
GUARANTEES = ("private", "approximately private", "not covered", "not private")
LABELS = {
    "private": "private",
    "not covered": "NOT PRIVATE (sequential scheme: not covered by the sensitivity proof)",
    "not private": "NOT PRIVATE (paper mode: bounds from the data)",
}
#: Strict mode with a bound marked as taken from the data (``bound_sources``): not private,
#: and not paper mode either.
DATA_BOUNDS_LABEL = "NOT PRIVATE (bounds from the data)"
#: Paper mode with every bound public: not private because of sigma = Delta/epsilon (KNG).
PAPER_PUBLIC_BOUNDS_LABEL = "NOT PRIVATE (paper mode: sigma = Delta/epsilon)"
APPROXIMATE_LABELS = {
    "mcmc": "approximately private (MCMC; δ not certified)",
    "monte_carlo": "approximately private (µ calibrated by Monte Carlo; not proven)",
    "float": "approximately private (exact law, but its floats depend on the data)",
}
#: Caveat of an exact release whose sampler is not float-safe (DESIGN §12, floating point).
FLOAT_CAVEAT = (
    "Not float-safe: the sampler computes its output floats from the data's statistic, so a "
    "data set can emit floats its neighbour cannot (Mironov, CCS 2012). The law is the "
    "mechanism's, but pure DP with delta = 0 is not proven for the floats released; no delta "
    "is certified."
)
SAMPLERS = ("auto", "exact", "mcmc")
MCMC_CAVEAT = (
    "MCMC sampler: the draws only approximate the mechanism's distribution; pure epsilon-DP "
    "holds only approximately and no delta is certified (paper 002 app. A.1 gives delta of "
    "order 1/chain length only if the chain has mixed, which no diagnostic proves)."
)
SEQUENTIAL_STRICT_CAVEAT = (
    "Not covered by the sensitivity proof: the footpoint stage evaluates the gradient at the "
    "data's own (non-private) shooting vector, which moves when one row is replaced; the "
    "audit in tests/audit measured log-density ratios of 5.1 epsilon_p at n = 20 and 8.5 "
    "epsilon_p at n = 40 on the sphere, growing with n. Use scheme='joint' for a private "
    "release."
)
DATA_BOUNDS_CAVEAT = (
    "Bounds taken from the data: at least one bound the guarantee relies on was supplied as "
    "taken from the data (see assumptions with source 'data'); the output is NOT "
    "differentially private. Replace them by public values (or estimate them privately)."
)
#: Caveat of a strict release on a positively curved compact space without a public footpoint
#: region (``docs/measurements.md``, session 38).
FAR_BASIN_CAVEAT = (
    "No public footpoint region: KNG's density depends only on the size of the clipped "
    "gradient, which also vanishes far from the fit, where every residual is clipped and their "
    "directions cancel (on the sphere near the geodesic pointwise antipodal to the fit, "
    "(-p, -v)). Exact draws can land there: one in five in a benchmark on S^2 (n = 250, "
    "residuals of about 0.14 rad, n epsilon = 1,000), none of nine on the Geodesic "
    "regression page's synthetic data at n = 250 (residuals of about 0.05 rad). "
    "A public footpoint region about where the data lie (or the two-stage design) removes "
    "those draws."
)
PAPER_CAVEAT = (
    "Paper mode: bounds were taken from the data and/or sigma = Delta/epsilon was used; the "
    "output is NOT differentially private as stated."
)


# ---------------------------------------------------------------------- the record
def _jsonable(value):
    if isinstance(value, Mapping):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_jsonable(v) for v in value]
    if isinstance(value, np.ndarray):
        return _jsonable(value.tolist())
    if isinstance(value, (np.bool_, bool)):
        return bool(value)
    if isinstance(value, numbers.Integral):
        return int(value)
    if isinstance(value, numbers.Real):
        value = float(value)
        return value if np.isfinite(value) else str(value)
    if value is None or isinstance(value, str):
        return value
    return str(value)


#: Diagnostics that describe the sampler's configuration or are post-processing of the private
#: outputs alone; everything else (acceptance rates, tuned step size, ESS, R-hat) is computed
#: from chain states driven by the private data and is not covered by epsilon.
PUBLIC_DIAGNOSTICS = frozenset({
    "exact", "sampler", "n_chains", "n_samples", "n_burn_in", "thin", "diagnostics_grouping",
    "mu_accounting", "projected", "ambient_dimension", "fraction_left_manifold",
    "lattice_spacing", "float_safety", "truncation_slack", "compute_path",
})
WITHHELD_NOTE = (
    "Chain diagnostics (acceptance, tuned step size, ESS, R-hat) are computed from the private "
    "data and are not covered by epsilon; they are kept out of this record (see Release."
    "diagnostics locally)."
)


def _public_diagnostics(diagnostics):
    out, withheld = {}, False
    for key, value in diagnostics.items():
        if isinstance(value, Mapping):
            sub, w = _public_diagnostics(value)
            out[key], withheld = sub, withheld or w
        elif key in PUBLIC_DIAGNOSTICS:
            out[key] = value
        else:
            withheld = True
    return out, withheld


class FrozenDict(dict):
    """A ``dict`` that refuses changes (a :class:`Release`'s fields): reading, iterating,
    ``json.dumps`` and pickling (``st.cache_data``) work as for a ``dict``; every mutating
    method raises :class:`TypeError`. Use ``dict(d)`` for a changeable copy."""

    __slots__ = ()

    def _refuse(self, *args, **kwargs):
        raise TypeError("A Release is immutable: copy it with dict(...) or "
                        "dataclasses.replace(release, ...) instead of changing it.")

    __setitem__ = __delitem__ = __ior__ = _refuse
    clear = pop = popitem = setdefault = update = _refuse

    def __reduce__(self):
        return (FrozenDict, (dict(self),))

    def __hash__(self):
        raise TypeError("unhashable type: 'FrozenDict'")


def freeze(value):
    """``value`` with every dict made a :class:`FrozenDict`, every list a tuple and every
    array a read-only copy (recursively); other values unchanged."""
    if isinstance(value, Mapping):
        return FrozenDict({k: freeze(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(freeze(v) for v in value)
    if isinstance(value, np.ndarray):
        frozen = np.array(value, copy=True)
        frozen.setflags(write=False)
        return frozen
    return value


@dataclass(frozen=True)
class Release:
    """A private release and everything needed to state its guarantee.

    Attributes
    ----------
    values : dict
        The private outputs (arrays).
    mechanism : str
    epsilon : float or None
        Total pure-DP budget of everything in ``values`` (None for Gaussian DP).
    delta : float or None
        0 for exact samplers; the approximate-DP δ (order 1 / chain length per draw) for MCMC;
        None for Gaussian DP (see ``mu``).
    mu : float or None
        GDP parameter (Gaussian mechanism only).
    sensitivity, sigma : dict
        Sensitivities and noise scales used, by parameter.
    assumptions : dict
        Every bound the guarantee relies on, with its value and its source (``"public"`` or
        ``"data"``).
    diagnostics : dict
        Sampler diagnostics (acceptance, ESS, R-hat) and exactness of the sampler.
    mode : {"strict", "paper"}
    seeded : bool
        Whether a seed or generator was supplied (reproducible, not for publication).
    version : str
    caveats : tuple of str
    details : dict
        Scenario facts (sample size, scheme, draws).
    coverage : {"proven", "mcmc", "monte_carlo", "sequential", "float"}
        Which proof covers the draw: ``"proven"`` (exact sampler, proven sensitivity),
        ``"mcmc"`` (MCMC sampler: δ not certified), ``"monte_carlo"`` (Gaussian µ calibrated by
        Monte Carlo), ``"sequential"`` (footpoint stage outside the sensitivity proof),
        ``"float"`` (exact law, but a sampler whose output floats depend on the data). With
        ``mode`` and the sources of the bounds it gives :attr:`guarantee` and :attr:`label`.
    """

    values: dict
    mechanism: str
    epsilon: float | None
    delta: float | None
    mu: float | None
    sensitivity: dict
    sigma: dict
    assumptions: dict
    diagnostics: dict
    mode: str
    seeded: bool
    version: str = __version__
    caveats: tuple = ()
    details: dict = field(default_factory=dict)
    coverage: str = "proven"

    def __post_init__(self):
        # Immutable (issue 29): the record a ledger holds can never change after the release.
        for name in ("values", "sensitivity", "sigma", "assumptions", "diagnostics", "details",
                     "caveats"):
            object.__setattr__(self, name, freeze(getattr(self, name)))

    @property
    def bounds_public(self):
        """Whether strict mode ran and no bound the guarantee relies on came from the data."""
        return self.mode == "strict" and all(
            a.get("source") != "data" for a in self.assumptions.values() if isinstance(a, dict)
        )

    @property
    def guarantee(self):
        """What is proven for this exact release (DESIGN §12), one of :data:`GUARANTEES`.

        ``"private"``: proven sensitivity, exact sampler, public bounds (ε-DP with δ = 0, or a
        µ-GDP proven in closed form). ``"approximately private"``: as before but drawn by MCMC
        (δ not certified) or with a µ calibrated by Monte Carlo (a statistical estimate).
        ``"not covered"``: the papers' sequential scheme, whose footpoint stage evaluates the
        gradient at the data's own shooting vector, outside the sensitivity proof.
        ``"not private"``: paper mode or bounds taken from the data.
        """
        if not self.bounds_public:
            return "not private"
        if self.coverage == "sequential":
            return "not covered"
        if self.coverage in ("mcmc", "monte_carlo", "float"):
            return "approximately private"
        return "private"

    @property
    def private(self):
        """True only where a proof covers this exact release (``guarantee == "private"``)."""
        return self.guarantee == "private"

    @property
    def label(self):
        """The release's label; it never claims more than :attr:`guarantee`."""
        base = LABELS[self.guarantee] if self.guarantee != "approximately private" else (
            APPROXIMATE_LABELS[self.coverage])
        if self.guarantee == "not private":
            from_data = any(a.get("source") == "data" for a in self.assumptions.values()
                            if isinstance(a, dict))
            if not from_data:
                base = PAPER_PUBLIC_BOUNDS_LABEL
            elif self.mode != "paper":
                base = DATA_BOUNDS_LABEL
        if self.seeded and self.guarantee != "not private":
            if self.guarantee == "private":
                return "private mechanism, seeded: not for publication"
            return base + ", seeded: not for publication"
        return base

    def to_dict(self):
        """JSON-safe dict: private outputs and metadata only (no input data).

        In strict mode, sampler diagnostics computed from the private data (acceptance, tuned
        step size, ESS, R-hat) are left out: they are not covered by the privacy budget.
        """
        diagnostics, caveats = self.diagnostics, list(self.caveats)
        if self.mode == "strict":
            diagnostics, withheld = _public_diagnostics(self.diagnostics)
            if withheld:
                caveats.append(WITHHELD_NOTE)
        out = {
            "values": self.values,
            "mechanism": self.mechanism,
            "epsilon": self.epsilon,
            "delta": self.delta,
            "mu": self.mu,
            "sensitivity": self.sensitivity,
            "sigma": self.sigma,
            "assumptions": self.assumptions,
            "diagnostics": diagnostics,
            "mode": self.mode,
            "seeded": self.seeded,
            "version": self.version,
            "label": self.label,
            "guarantee": self.guarantee,
            "private": self.private,
            "caveats": caveats,
            "details": self.details,
        }
        return _jsonable(out)

    def to_json(self, **kwargs):
        return json.dumps(self.to_dict(), **kwargs)

