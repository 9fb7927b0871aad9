"""Chunked parallel maps and study plans (issue 13, point 4): jobs travel in strided chunks,
several maps share one joblib call, and studies written as plans run together; none of it may
change a result."""

from __future__ import annotations

import operator
import warnings

import numpy as np
import pandas as pd
import pytest

from dpcore.experiments import _parallel as P


def _draw(x, seed):
    """A job carrying its own seed (module level: picklable by reference)."""
    return x + float(np.random.default_rng(seed).random())


def _maps():
    return [P.Map(_draw, [(i, np.random.SeedSequence([7, i])) for i in range(101)], cost=1e-3),
            P.Map(operator.add, [(i, 1) for i in range(3)], cost=0.5),
            P.Map(operator.mul, [])]


def _serial(maps):
    return [[m.func(*job) for job in m.jobs] for m in maps]


@pytest.mark.parametrize("backend", ["loky", "threading"])
def test_parallel_maps_return_each_map_in_order(backend):
    import joblib

    with joblib.parallel_config(backend=backend):
        got = P.parallel_maps(_maps(), n_jobs=2)
    assert got == _serial(_maps())
    assert P.parallel_maps(_maps(), n_jobs=1) == _serial(_maps())


def test_tasks_are_strided_chunks_costliest_first():
    maps = _maps()
    tasks = P._tasks(maps, workers=2)
    # Every job of every map exactly once.
    seen = sorted((i, j) for _, i, idx in tasks for j in idx)
    assert seen == [(i, j) for i, m in enumerate(maps) for j in range(len(m.jobs))]
    # At most TASKS_PER_WORKER chunks per worker and map; the 101 jobs in 32 chunks of 3 or 4
    # jobs, each spread over the whole list (jobs are listed by sample size).
    first = [idx for _, i, idx in tasks if i == 0]
    assert len(first) == 2 * P.TASKS_PER_WORKER
    assert {len(idx) for idx in first} == {3, 4}
    assert all(idx.step == len(first) for idx in first)
    # The long jobs (0.5 s each, one per chunk) are dispatched before the short ones.
    assert [i for _, i, _ in tasks[:3]] == [1, 1, 1]
    assert all(i == 0 for _, i, _ in tasks[3:])
    # Fewer jobs than chunks: one job per chunk.
    assert sorted(len(idx) for _, i, idx in tasks if i == 1) == [1, 1, 1]


def _plan(values, twice):
    first = yield P.Map(operator.mul, [(v, 2) for v in values])
    if not twice:
        return first
    return (yield P.Map(operator.add, [(v, 1) for v in first]))


@pytest.mark.parametrize("n_jobs", [1, 2])
def test_plans_advance_together(monkeypatch, n_jobs):
    calls = []
    real = P.parallel_maps

    def counting(maps, n):
        calls.append(len(maps))
        return real(maps, n)

    monkeypatch.setattr(P, "parallel_maps", counting)
    got = P.run_plans([_plan([1, 2, 3], True), _plan([5], False), _plan([], True)], n_jobs)
    assert got == [[3, 5, 7], [10], []]
    # Step 1: the first maps of all three plans in one call; step 2: the two second maps.
    assert calls == [3, 2]


def test_a_plan_must_yield_maps():
    def bad():
        yield [operator.add, [(1, 2)]]

    with pytest.raises(TypeError, match="Map"):
        P.run_plan(bad(), 1)


def test_p001_section_equals_its_studies_run_one_by_one():
    """The section runs its six studies as plans in shared parallel calls; with the same seeds,
    its tables are bit-identical to those of the public study functions run one after the
    other in this process."""
    from dpcore.experiments.report import QUICK
    from dpcore.experiments.sections._common import _seed
    from dpcore.experiments.sections.p001 import sec_p001_fig1
    from dpcore.experiments.studies import frechet_mean_study, frechet_sensitivity_study
    from dpcore.manifolds import SPD, Sphere

    c = QUICK["p001"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sec = sec_p001_fig1(QUICK, 11, 2)
        seeds = _seed(11, "p001_fig1").spawn(6)
        for i, (key, m, radius) in enumerate([("spd", SPD(2), 1.5),
                                              ("sphere", Sphere(2), np.pi / 8)]):
            common = {"sample_sizes": c["sizes"], "radius": radius, "n_jobs": 1}
            sens = frechet_sensitivity_study(m, replicates=c["sens_replicates"],
                                             rng=seeds[3 * i], **common)
            util = frechet_mean_study(m, epsilon=c["epsilon"], replicates=c["replicates"],
                                      mechanisms=c["mechanisms"][key], rng=seeds[3 * i + 1],
                                      **common)
            kng = frechet_mean_study(m, epsilon=c["epsilon"], replicates=c["kng_replicates"],
                                     mechanisms=("kng",), rng=seeds[3 * i + 2],
                                     chain_length=c["kng_chain"][0],
                                     burn_in=c["kng_chain"][1], **common)
            pd.testing.assert_frame_equal(sec.tables[f"{key}_sensitivity"], sens,
                                          check_exact=True)
            pd.testing.assert_frame_equal(sec.tables[f"{key}_utility"],
                                          pd.concat([util, kng], ignore_index=True),
                                          check_exact=True)
