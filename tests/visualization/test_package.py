"""The package as a whole: plotly only (no Streamlit), and every public builder re-exported."""

import subprocess
import sys

import dpcore.visualization as vis
from dpcore.visualization import charts, euclidean, geometry, kendall, spd, sphere, studies

from .helpers import ROOT


def test_no_streamlit_import():
    files = sorted((ROOT / "dpcore" / "visualization").glob("*.py"))
    assert files
    for path in files:
        assert "streamlit" not in path.read_text(encoding="utf-8"), path.name
    code = "import sys, dpcore.visualization; assert 'streamlit' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)


def test_public_names_exported():
    for module in (charts, euclidean, geometry, kendall, spd, sphere, studies):
        for name in module.__all__:
            assert name in vis.__all__
            assert getattr(vis, name) is getattr(module, name)
