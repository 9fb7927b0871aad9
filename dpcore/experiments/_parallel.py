"""The ordered parallel map of the sweeps and studies (joblib, any backend)."""

from __future__ import annotations

__all__ = ["parallel_map"]


def parallel_map(func, jobs, n_jobs):
    """``[func(*job) for job in jobs]``, in order, with joblib when ``n_jobs`` asks for it.

    In workers, BLAS and OpenMP pools are held to one thread (threadpoolctl), whatever the
    joblib backend: the jobs are the parallelism, and nested BLAS threads on top of them only
    oversubscribe the cores.
    """
    if n_jobs is None or int(n_jobs) == 1 or len(jobs) <= 1:
        return [func(*job) for job in jobs]
    from joblib import Parallel, delayed

    return Parallel(n_jobs=int(n_jobs))(delayed(_single_threaded)(func, job) for job in jobs)


def _single_threaded(func, job):
    """``func(*job)`` with BLAS/OpenMP thread pools limited to one thread."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):
        return func(*job)
