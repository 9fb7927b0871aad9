"""``ui.manifolds`` is the dashboard's one manifold vocabulary: keys, aliases, labels,
parameters, default public bounds and the one ``make_manifold``."""

import ast
import math
import subprocess
import sys
from pathlib import Path

import pytest

from dpcore.manifolds import SPD, Euclidean, KendallShape, Sphere
from ui import manifolds as M
from ui.logic import frechet_mean as FL
from ui.logic import regression_data as D
from ui.logic import sensitivity as SL
from ui.manifolds import make_manifold

ROOT = Path(__file__).resolve().parents[2]
#: The manifolds the dashboard had when the vocabulary was unified: their keys, labels and
#: default bounds must keep their values (links and widget keys depend on them). A new
#: manifold is one more entry in ui/manifolds.py and needs no change here.
ORIGINAL = ("sphere", "spd", "kendall", "euclidean")
DASHBOARD = sorted((ROOT / "ui").glob("*.py")) + sorted((ROOT / "pages").glob("*.py")) + [
    ROOT / "app.py"]


def test_keys_in_display_order():
    assert M.KEYS[:len(ORIGINAL)] == ORIGINAL
    assert [s.key for s in M.MANIFOLDS] == list(M.KEYS)
    assert len(set(M.KEYS)) == len(M.KEYS)
    for key in M.KEYS:  # a key must not read as another key followed by a parameter
        assert M.parse(key) == (key, None)


def test_every_manifold_builds_at_every_offered_parameter():
    for s in M.MANIFOLDS:
        assert M.make_manifold(s.key) is not None
        assert s.tau > 0 and (s.tau_m is None or s.tau_m > 0)
        if s.param_range is not None:
            low, high, default = s.param_range
            assert low <= default <= high and s.param and s.param_label
            for param in (low, high):
                assert M.make_manifold(s.key, param) is not None


@pytest.mark.parametrize("text,param,expected", [
    ("sphere", None, Sphere(2)), ("spd", None, SPD(2)), ("spd2", None, SPD(2)),
    ("spd3", None, SPD(3)), ("spd", 3, SPD(3)), ("kendall", None, KendallShape(8)),
    ("kendall", 5, KendallShape(5)), ("kendall5", None, KendallShape(5)),
    ("euclidean", None, Euclidean(2)), ("euclidean", 3, Euclidean(3)),
])
def test_make_manifold(text, param, expected):
    m = M.make_manifold(text, param)
    assert type(m) is type(expected) and repr(m) == repr(expected)


@pytest.mark.parametrize("text,param", [("torus", None), ("spd4", None), ("spd", 1),
                                        ("sphere", 3), ("sphere2", None), ("kendall", 21),
                                        ("spd3", 2), ("", None)])
def test_make_manifold_rejects(text, param):
    with pytest.raises(ValueError):
        M.make_manifold(text, param)


def test_tokens_aliases_and_full_names():
    assert M.token("spd", 2) == M.token("spd2") == M.canonical("spd2") == "spd"
    assert M.token("spd", 3) == M.canonical(" SPD3 ") == "spd3"
    assert M.canonical("kendall8") == "kendall" and M.canonical("kendall5") == "kendall5"
    assert M.full_name("spd") == "spd2" and M.full_name("spd3") == "spd3"
    assert M.full_name("sphere") == "sphere" and M.full_name("kendall") == "kendall8"
    assert M.param_of("spd") == 2 and M.param_of("sphere") is None
    for bad in ("torus", "spd9", "sphere1"):
        with pytest.raises(ValueError):
            M.canonical(bad)


def test_labels_are_the_ones_the_pages_showed():
    assert {k: D.MANIFOLD_LABELS[k] for k in ORIGINAL} == {
        "sphere": "Sphere S²", "spd": "SPD(2) covariance matrices",
        "kendall": "Kendall planar shapes", "euclidean": "Euclidean Rᵈ"}
    assert [M.choice_label(t) for t in ("sphere", "spd", "spd3")] == [
        "Sphere S²", "SPD(2) covariance matrices", "SPD(3) covariance matrices"]
    assert M.choice_label("kendall") == "Kendall planar shapes (8 landmarks)"


def test_parameters_and_default_bounds_keep_their_values():
    assert {k: D.PARAM_RANGE[k] for k in ("kendall", "euclidean")} == {
        "kendall": (3, 20, 8), "euclidean": (1, 6, 2)}
    assert {k: M.spec(k).tau for k in ORIGINAL} == {"sphere": 0.2, "spd": 0.1, "kendall": 0.15,
                                                    "euclidean": 0.5}
    assert {k: M.spec(k).tau_m for k in ORIGINAL if M.spec(k).needs_ball} == {
        "spd": 3.0, "euclidean": 6.0}
    assert [k for k in ORIGINAL if D.needs_ball(k)] == ["spd", "euclidean"]
    assert M.spec("sphere").radius == math.pi / 8 and M.spec("spd").radius == 1.5
    assert {k: FL.FRECHET_MANIFOLDS[k] for k in ("sphere", "spd", "spd3")} == {
        "sphere": (0.05, 3.14), "spd": (0.25, 6.0), "spd3": (1.0, 3.0)}
    assert M.spec("spd").param_label == "Matrix size k"
    assert M.spec("kendall").param_label == "Number of landmarks k"
    assert M.spec("euclidean").param_label == "Dimension d"


def test_pages_offer_canonical_tokens():
    for choices in (D.MANIFOLD_KINDS, tuple(FL.FRECHET_MANIFOLDS), SL.REGRESSION_MANIFOLDS):
        for choice in choices:
            assert M.token(choice) == choice


def test_one_make_manifold():
    """``make_manifold`` is defined once (ui/manifolds.py); the logic modules use that one."""
    defined = [path.relative_to(ROOT).as_posix() for path in DASHBOARD
               for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
               if isinstance(node, ast.FunctionDef) and node.name == "make_manifold"]
    assert defined == ["ui/manifolds.py"]
    assert make_manifold is M.make_manifold and make_manifold is M.make_manifold


def test_no_old_manifold_keys_in_the_dashboard():
    """The older key "spd2" survives only as an alias read by ui.manifolds."""
    for path in DASHBOARD:
        if path.name == "manifolds.py":
            continue
        strings = {node.value for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
                   if isinstance(node, ast.Constant) and isinstance(node.value, str)}
        assert "spd2" not in strings, path.name


def test_no_streamlit_import():
    for name in ("manifolds.py", "registry.py"):
        assert "streamlit" not in (ROOT / "ui" / name).read_text(encoding="utf-8")
    code = "import sys, ui.manifolds, ui.registry; assert 'streamlit' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)
