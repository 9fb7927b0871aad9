"""Budget sweeps give bit-identical tables on every joblib backend (issue 13): in process,
loky, multiprocessing, threading, a Dask ``LocalCluster`` and a local Ray instance
(``dask[distributed]`` and ``ray`` are dev dependencies). Seeds travel with each job; inputs are
aligned copies."""

from __future__ import annotations

import warnings

import pandas as pd
import pytest

from dpcore.experiments import budget_sweep
from dpcore.manifolds import Sphere

SWEEP = dict(sample_sizes=[10, 20], split="equal", totals=[1.0, 4.0], replicates=2,
             rng=2024, mode="paper", n_footpoints=1, n_vectors=2, chain_length=30,
             burn_in=30)


def sweep(**kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return budget_sweep(Sphere(2), **SWEEP, **kw)


@pytest.fixture(scope="module")
def reference():
    return sweep(n_jobs=1)


@pytest.mark.parametrize("backend", ["loky", "multiprocessing", "threading"])
def test_joblib_backends_match_in_process(reference, backend):
    import joblib

    with joblib.parallel_config(backend=backend):
        got = sweep(n_jobs=2)
    pd.testing.assert_frame_equal(got, reference, check_exact=True)


@pytest.mark.slow
def test_dask_local_cluster_matches_in_process(reference, real_main):
    distributed = pytest.importorskip("dask.distributed",
                                      reason="dask[distributed] is a dev dependency")
    import joblib

    with (distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                   dashboard_address=None) as cluster,
          distributed.Client(cluster), joblib.parallel_config(backend="dask")):
        got = sweep(n_jobs=2)
    pd.testing.assert_frame_equal(got, reference, check_exact=True)


@pytest.mark.slow
def test_ray_matches_in_process(reference, real_main):
    ray = pytest.importorskip("ray", reason="ray is a dev dependency")
    import joblib
    from ray.util.joblib import register_ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False,
             configure_logging=False)
    try:
        register_ray()
        with joblib.parallel_config(backend="ray"):
            got = sweep(n_jobs=2)
    finally:
        ray.shutdown()
    pd.testing.assert_frame_equal(got, reference, check_exact=True)


def test_misaligned_inputs_give_identical_cells():
    """Dask may deliver arrays that are not 8-byte aligned; the cell runner copies them into
    aligned buffers, so its results are bit-identical to those of aligned inputs."""
    import numpy as np

    from dpcore.data import make_regression_data
    from dpcore.experiments.budget import _run_cells

    def misaligned(a):
        raw = np.zeros(a.nbytes + 1, dtype=np.uint8)
        out = raw[1:].view(np.float64).reshape(a.shape)
        out[...] = a
        assert not out.flags.aligned
        return out

    x, y = make_regression_data(Sphere(2), 15, rng=3)
    pairs = np.array([[0.5, 0.5], [2.0, 1.0]])
    seed = np.random.SeedSequence(7)
    args = ("paper", 1, 2, 30, 30, {})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = _run_cells(Sphere(2), x, y, pairs, seed, *args)
        b = _run_cells(Sphere(2), misaligned(x), misaligned(y), pairs, seed, *args)
    assert a == b


@pytest.mark.slow
def test_report_runs_on_a_scheduler_address(tmp_path, real_main):
    """`make reproduce` on an existing cluster: the report's --scheduler option (or
    DPCORE_DASK_SCHEDULER) connects to it; one quick section builds there."""
    distributed = pytest.importorskip("dask.distributed",
                                      reason="dask[distributed] is a dev dependency")
    from dpcore.experiments.report import main

    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=True,
                                  dashboard_address=None) as cluster:
        assert main(["--quick", "--out", str(tmp_path), "--only", "p002_fig1",
                     "--scheduler", cluster.scheduler_address]) == 0
    assert (tmp_path / "index.html").exists()


def _blas_threads():
    import numpy  # noqa: F401  (loads the BLAS pool)
    from threadpoolctl import threadpool_info

    return max(pool["num_threads"] for pool in threadpool_info())


@pytest.mark.parametrize("backend", ["loky", "multiprocessing"])
def test_workers_hold_blas_to_one_thread(backend):
    """Jobs are the parallelism: inside a worker process every BLAS/OpenMP pool has one thread.

    (Under the threading backend the pools belong to the whole process: one job leaving its
    limit restores them while another still runs, so only process backends are checked.)
    """
    import joblib

    from dpcore.experiments._parallel import parallel_map

    if _blas_threads() == 1:
        pytest.skip("this machine's BLAS runs one thread already: nothing to limit")
    with joblib.parallel_config(backend=backend):
        got = parallel_map(_blas_threads, [(), (), ()], n_jobs=2)
    assert got == [1, 1, 1]
