"""The ordered parallel maps of the sweeps and studies (joblib, any backend).

* :func:`parallel_map` -- ``[func(*job) for job in jobs]`` with joblib workers;
* :func:`parallel_maps` -- several such maps run as one joblib call (one pool of tasks, no
  barrier between the maps);
* :func:`run_plans` (:func:`run_plan`) -- studies written as plans (generators yielding
  :class:`Map` objects) advanced together, so that the maps of all the studies of a figure
  share each joblib call.

How the work is cut into tasks (the results never depend on it: each job carries its own seed,
and the jobs are returned in order):

* jobs are grouped into chunks, one joblib task each: the overhead of a task (dispatch,
  pickling, and above all :func:`threadpoolctl.threadpool_limits`, a scan of the loaded
  libraries costing about a millisecond) is paid per chunk, not per job, which matters for the
  studies made of thousands of millisecond jobs (paper 001 fig. 1);
* a map is cut into at most :data:`TASKS_PER_WORKER` chunks per worker, *strided* (chunk ``c``
  holds jobs ``c, c + k, c + 2k, ...``): jobs are listed by sample size, so every chunk gets the
  same mix of small and large sizes and the chunks take about equally long;
* with :func:`parallel_maps`, the chunks of the maps whose jobs are costlier (:attr:`Map.cost`)
  are dispatched first, so that the last tasks of the call are short (longest first).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

__all__ = ["TASKS_PER_WORKER", "Map", "parallel_map", "parallel_maps", "run_plan", "run_plans"]

#: Largest number of tasks (chunks of jobs) a map is cut into, per worker.
TASKS_PER_WORKER = 16


@dataclass(frozen=True)
class Map:
    """``[func(*job) for job in jobs]``, to be run by :func:`parallel_maps` or :func:`run_plans`.

    Attributes
    ----------
    func : callable
        A module-level function (it is pickled by reference).
    jobs : sequence of tuple
        Its arguments, one tuple per call; each job carries its own seed.
    cost : float, optional
        Rough seconds per job: only the order in which the chunks of several maps are
        dispatched depends on it (costlier first; unknown costs count as 0).
    """

    func: Any
    jobs: Any
    cost: float | None = None


def parallel_map(func, jobs, n_jobs):
    """``[func(*job) for job in jobs]``, in order, with joblib when ``n_jobs`` asks for it.

    In workers, BLAS and OpenMP pools are held to one thread (threadpoolctl), whatever the
    joblib backend: the jobs are the parallelism, and nested BLAS threads on top of them only
    oversubscribe the cores. Jobs are sent in chunks (see the module docstring).
    """
    return parallel_maps([Map(func, jobs)], n_jobs)[0]


def parallel_maps(maps, n_jobs):
    """Several ordered maps run together: ``[[m.func(*job) for job in m.jobs] for m in maps]``.

    Parameters
    ----------
    maps : sequence of Map
    n_jobs : int or None
        joblib workers; None or 1 runs every job in this process, in order.

    Returns
    -------
    list of list
        The results of each map, in the order of its jobs.
    """
    maps = [m if isinstance(m, Map) else Map(*m) for m in maps]
    n_total = sum(len(m.jobs) for m in maps)
    if n_jobs is None or int(n_jobs) == 1 or n_total <= 1:
        return [[m.func(*job) for job in m.jobs] for m in maps]
    from joblib import Parallel, delayed, effective_n_jobs

    tasks = _tasks(maps, max(1, effective_n_jobs(int(n_jobs))))
    chunks = Parallel(n_jobs=int(n_jobs), batch_size=1)(
        delayed(_run_chunk)(maps[i].func, [maps[i].jobs[j] for j in idx])
        for _, i, idx in tasks)
    out = [[None] * len(m.jobs) for m in maps]
    for (_, i, idx), results in zip(tasks, chunks, strict=True):
        for j, r in zip(idx, results, strict=True):
            out[i][j] = r
    return out


def _tasks(maps, workers):
    """The joblib tasks of :func:`parallel_maps`: ``(cost, map index, job indices)``, strided
    chunks of at most :data:`TASKS_PER_WORKER` per worker and map, the costliest first."""
    tasks = []
    for i, m in enumerate(maps):
        k = min(len(m.jobs), TASKS_PER_WORKER * workers)
        for c in range(k):
            idx = range(c, len(m.jobs), k)
            tasks.append(((m.cost or 0.0) * len(idx), i, idx))
    # Python's sort is stable: equal costs keep the maps' order.
    tasks.sort(key=lambda t: -t[0])
    return tasks


def _run_chunk(func, jobs):
    """``[func(*job) for job in jobs]`` with BLAS/OpenMP thread pools limited to one thread."""
    from threadpoolctl import threadpool_limits

    with threadpool_limits(limits=1):
        return [func(*job) for job in jobs]


def run_plans(plans, n_jobs):
    """Run study plans together; the value each plan returns, in order.

    A plan is a generator: each ``results = yield Map(func, jobs)`` asks for one ordered map and
    receives its results; the plan's ``return`` value is its result. The maps the plans ask for
    at the same step run as one :func:`parallel_maps` call, so a figure made of several studies
    has no barrier between them (a plan needing a first map's results before it can state its
    next, e.g. calibrated noise scales, simply yields twice). Whatever ``n_jobs``, every job runs
    exactly once with its own arguments, so the results are those of running each plan alone,
    provided the plans share no state (each has its own seed: a numpy Generator shared by two
    plans would be drawn from in another order).

    Parameters
    ----------
    plans : sequence of generator
    n_jobs : int or None

    Returns
    -------
    list
    """
    plans = list(plans)
    done = [False] * len(plans)
    values = [None] * len(plans)
    sends = [None] * len(plans)
    while not all(done):
        asked = []
        for i, plan in enumerate(plans):
            if done[i]:
                continue
            try:
                request = plan.send(sends[i])
            except StopIteration as stop:
                done[i], values[i] = True, stop.value
                continue
            if not isinstance(request, Map):
                raise TypeError(f"A plan must yield Map objects, got {type(request).__name__}.")
            asked.append((i, request))
        if not asked:
            break
        results = parallel_maps([m for _, m in asked], n_jobs)
        for (i, _), res in zip(asked, results, strict=True):
            sends[i] = res
    return values


def run_plan(plan, n_jobs):
    """The value of one plan (see :func:`run_plans`)."""
    return run_plans([plan], n_jobs)[0]
