"""`python -m dpcore.release.warm` (run by `make venv`): every compiled path runs, and the numba
kernels it names are compiled afterwards."""

import importlib

import pytest

from dpcore.release import warm

numba = pytest.importorskip("numba", reason="the compiled path needs the `fast` extra (numba)")

#: The kernel modules of the compiled paths (dpcore/sampling/_*_numba.py, and the SPD(2)
#: squeeze's own kernels) whose kernels a release calls from Python (``_chain_numba``'s are
#: called only from these, inside compiled code).
KERNELS = ("_sphere_numba", "_spd_numba", "_kendall_numba", "_native_numba", "_series_numba",
           "spd2_squeeze")


def _compiled(module):
    mod = importlib.import_module(f"dpcore.sampling.{module}")
    dispatchers = [f for f in vars(mod).values()
                   if isinstance(f, numba.core.registry.CPUDispatcher)]
    assert dispatchers, module
    return sum(len(d.signatures) for d in dispatchers)


def test_every_path_runs_the_sampler_it_is_named_for_and_compiles_the_kernels():
    out = warm.warm_up(clock=lambda: 0.0)
    assert [name for name, _, _ in out] == [p[0] for p in warm.PATHS]
    samplers = dict((name, sampler) for name, _, sampler in out)
    for name, sampler in samplers.items():
        if "chain" in name:
            assert "Metropolis-Hastings" in sampler, (name, sampler)
        else:
            assert sampler.startswith("exact rejection sampling"), (name, sampler)
    assert "on the footpoint ball" in samplers["S² ball, native boxes"]
    assert "geodesic's own coordinates" in samplers["S² whole sphere, native boxes"]
    assert "certified squeeze" in samplers["SPD(2) squeeze, the page's design"]
    for module in KERNELS:
        assert _compiled(module) > 0, module


def test_the_kernels_no_release_calls_are_compiled_too():
    """The Budget split page's Kendall law scores cells by a kernel no release calls: the
    warm-up calls it, so no test worker or first visitor compiles it."""
    out = warm.warm_kernels(clock=lambda: 0.0)
    assert [(name, kind) for name, _, kind in out] == [(k[0], "compiled kernel")
                                                        for k in warm.KERNELS]
    kendall = importlib.import_module("dpcore.sampling._kendall_numba")
    assert kendall.mean_squared_distances.signatures


def test_command_line_prints_a_line_per_path(capsys, monkeypatch):
    # The releases themselves run in the tests above; here only what the command prints.
    monkeypatch.setattr(warm, "warm_up", lambda: [(p[0], 0.1, "sampler") for p in warm.PATHS])
    monkeypatch.setattr(warm, "warm_kernels",
                        lambda: [(k[0], 0.1, "compiled kernel") for k in warm.KERNELS])
    assert warm.main([]) == 0
    out = capsys.readouterr().out
    assert out.count("compiled: ") == len(warm.PATHS) + len(warm.KERNELS)
    assert "numba kernels compiled and cached" in out
