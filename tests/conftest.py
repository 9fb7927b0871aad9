"""Shared fixtures: a seeded generator per test so every randomized test is reproducible."""

import zlib

import numpy as np
import pytest


@pytest.fixture
def rng(request):
    """A generator seeded from the test's node id (stable across runs and processes)."""
    return np.random.default_rng(zlib.crc32(request.node.nodeid.encode()))
