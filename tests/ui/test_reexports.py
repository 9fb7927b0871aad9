"""``ui.figures`` and ``ui.colors`` re-export :mod:`dpcore.visualization` (no second copy)."""

import subprocess
import sys
from pathlib import Path

import dpcore.visualization as vis
from dpcore.visualization import _base
from ui import colors
from ui import figures as uf

ROOT = Path(__file__).resolve().parents[2]


def test_no_streamlit_import():
    for name in ("figures.py", "colors.py", "__init__.py"):
        assert "streamlit" not in (ROOT / "ui" / name).read_text()
    code = "import sys, ui, ui.figures, ui.colors; assert 'streamlit' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], cwd=ROOT, check=True)


def test_public_names_exported():
    import ui

    for name in uf.__all__:
        assert getattr(ui, name) is getattr(uf, name)


def test_figures_are_the_library_builders():
    for name in uf.__all__:
        assert getattr(uf, name) is getattr(vis, name)
    # The layout helpers re-exported for dashboard code that adds to a figure.
    for name in ("_finish", "_polyline", "FONT_SIZE", "HEIGHT_2D", "HEIGHT_3D"):
        assert getattr(uf, name) is getattr(_base, name)


def test_colors_are_the_library_palette():
    assert colors.__all__ == vis.colors.__all__
    for name in colors.__all__:
        assert getattr(colors, name) is getattr(vis.colors, name)
