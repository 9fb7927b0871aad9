"""How a budget sweep batches its budget pairs: one rule read by the sweep
(:func:`~dpcore.experiments.budget_sweep`) and by its work estimate
(:func:`~dpcore.release.work.estimate_budget_sweep_work`)."""

from __future__ import annotations

#: At most this many vector chains (budget pairs x footpoints x vectors) share one batched
#: sampler run of :func:`~dpcore.experiments.budget_sweep`; larger groups of budget pairs are
#: split into batches of this size.
MAX_BATCH_CHAINS = 2000


def budget_pair_batches(n_pairs, chains_per_pair):
    """Index ranges splitting ``n_pairs`` budget pairs into the batches a budget sweep samples
    in one run each (at most :data:`MAX_BATCH_CHAINS` chains per batch)."""
    per = max(1, MAX_BATCH_CHAINS // max(chains_per_pair, 1))
    return [range(a, min(a + per, n_pairs)) for a in range(0, n_pairs, per)]


__all__ = ["MAX_BATCH_CHAINS", "budget_pair_batches"]
