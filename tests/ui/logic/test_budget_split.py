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
