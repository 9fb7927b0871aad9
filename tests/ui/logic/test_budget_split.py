"""Page logic of the budget split page (ui.logic.budget_split)."""

import numpy as np
import pandas as pd

from dpcore import visualization as V
from ui.logic import budget_split as B


def test_chunks_share_data_across_views_and_are_deterministic():
    config = B.SweepConfig(sample_sizes=(10,), replicates=1, n_footpoints=1, n_vectors=1,
                            chain_length=5, burn_in=5, n_unequal=3, n_equal=2, n_grid=2,
                            grid_n=10)
    a = B.run_chunk(config, "unequal", 10, 0)
    b = B.run_chunk(config, "equal", 10, 0)
    np.testing.assert_allclose(a["nonprivate_mse"].iloc[0], b["nonprivate_mse"].iloc[0])
    pd.testing.assert_frame_equal(a, B.run_chunk(config, "unequal", 10, 0))
    assert B.n_releases(config) == 3 + 2 + 4
    fig, best = V.budget_heatmap_figure(B.run_chunk(config, "grid", 10, 0), 100.0, n=config.grid_n,
                                        replicates=config.replicates)
    assert best is not None and fig.data
    _, none = V.budget_heatmap_figure(B.run_chunk(config, "grid", 10, 0), 0.01, n=config.grid_n,
                                      replicates=config.replicates)
    assert none is None


def test_the_page_chunks_are_the_one_call_sweep_seed_for_seed():
    """The page runs a view cell by cell (progress, stop); concatenated, its rows are exactly
    the rows of one budget_sweep call of that view with the same seed (issue 12: a study is
    computed in one place), in paper and strict mode."""
    for mode, tau in (("paper", None), ("strict", 0.2)):
        config = B.SweepConfig(sample_sizes=(10, 12), replicates=2, n_footpoints=1,
                               n_vectors=2, chain_length=5, burn_in=5, n_unequal=3, n_equal=2,
                               n_grid=2, grid_n=10, mode=mode, tau=tau, seed=7)
        for view in config.views:
            whole = B.view_sweep(config, view)
            parts = pd.concat([B.run_chunk(config, v, n, rep)
                               for v, n, rep in B.sweep_chunks(config) if v == view])
            parts = parts.sort_values(["n", "eps_p", "eps_v", "replicate"], kind="stable",
                                      ignore_index=True)
            pd.testing.assert_frame_equal(parts, whole)
            assert len(whole) == B.n_releases(B.SweepConfig(**{**config.as_dict(),
                                                               "views": (view,)}))
