"""Cost of the MCMC diagnostics: rank-normalised (bulk-/tail-ESS, R-hat) against classic.

Issue 31 point 7b. The sampler now reports, for each scalar summary, min(bulk-ESS, tail-ESS)
and the rank-normalised split-R-hat (Vehtari et al. 2021) instead of the classic ESS and
split-R-hat (:func:`~dpcore.sampling.diagnostics.rank_diagnostics`): three ESS estimates, two
rank transforms of all draws and two R-hats instead of one ESS and one R-hat. ``ratio`` =
rank-normalised time / classic time, per summary, on AR(1) chains of the sizes the samplers
produce.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from dpcore.sampling.diagnostics import (
    effective_sample_size,
    ess_bulk,
    ess_tail,
    rank_diagnostics,
    rank_rhat,
    split_rhat,
)

from ._timing import per_call

SIZES = [(4, 1000), (16, 500), (64, 200), (512, 200), (4, 20_000)]


def _ar1(phi, n_chains, n_draws, rng):
    x = np.empty((n_chains, n_draws))
    x[:, 0] = rng.standard_normal(n_chains) / math.sqrt(1 - phi**2)
    noise = rng.standard_normal((n_chains, n_draws))
    for t in range(1, n_draws):
        x[:, t] = phi * x[:, t - 1] + noise[:, t]
    return x


def main():
    rng = np.random.default_rng(0)
    rows = []
    for m, n in SIZES:
        x = _ar1(0.8, m, n, rng)
        classic = per_call(lambda x=x: (effective_sample_size(x), split_rhat(x)))
        rank = per_call(lambda x=x: rank_diagnostics(x))  # what the sampler runs
        rows.append({"chains x draws": f"{m} x {n}", "classic_ms": 1e3 * classic,
                     "rank_normalised_ms": 1e3 * rank, "ratio": rank / classic,
                     "classic_ess": effective_sample_size(x),
                     "min_bulk_tail_ess": min(ess_bulk(x), ess_tail(x)),
                     "classic_rhat": split_rhat(x), "rank_rhat": rank_rhat(x)})
    return pd.DataFrame(rows).set_index("chains x draws").round(3)


if __name__ == "__main__":
    print(main().to_string())
