"""The page's sentence on how far a release stays exact (``ui.logic.gr_request``)."""

from __future__ import annotations

import math
import re

from dpcore.manifolds import KendallShape, Sphere
from dpcore.release.requests import GeodesicRegressionRequest
from ui.logic.gr_request import exact_reach_text


def test_the_sentence_names_an_exact_total_rounded_down():
    request = GeodesicRegressionRequest(KendallShape(4), 100, eps_p=2.0, eps_v=3.0, tau=0.25,
                                        covariate_range=(0.0, 1.0), max_speed=0.55,
                                        footpoint_radius=0.15)
    text = exact_reach_text(request)
    shown = float(re.search(r"ε_p \+ ε_v = ([0-9.]+) per geodesic", text).group(1))
    reach = request.exact_reach()
    assert shown <= reach < shown * 1.1  # two significant digits, rounded down
    assert math.isclose(shown, float(f"{shown:.2g}"))
    assert "n = 100" in text and "1 draw," in text
    assert request.replace(eps_p=0.4 * shown, eps_v=0.6 * shown).plan()["exact"]


def test_no_sentence_for_an_exact_request():
    request = GeodesicRegressionRequest(Sphere(2), 100, eps_p=0.5, eps_v=0.5, tau=0.2,
                                        covariate_range=(0.0, 1.0))
    assert exact_reach_text(request) is None
