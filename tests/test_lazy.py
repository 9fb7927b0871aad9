"""``dpcore._lazy``: a module stand-in imports its module on first attribute access only."""

from __future__ import annotations

import copy
import subprocess
import sys
import textwrap

from dpcore._lazy import LazyModule, lazy_module


def test_the_module_is_imported_on_first_attribute_access_only():
    program = textwrap.dedent("""\
        import sys
        from dpcore._lazy import lazy_module
        colorsys = lazy_module("colorsys")
        before = "colorsys" in sys.modules
        hasattr(colorsys, "__wrapped__")  # a dunder probe does not import
        probed = "colorsys" in sys.modules
        value = colorsys.rgb_to_hsv(1.0, 0.0, 0.0)
        print(before, probed, "colorsys" in sys.modules, value)
        """)
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip().split(maxsplit=3) == ["False", "False", "True", "(0.0, 1.0, 1.0)"]


def test_attributes_are_the_real_ones_and_cached():
    import math

    lazy = lazy_module("math")
    assert isinstance(lazy, LazyModule) and "math" in repr(lazy)
    assert lazy.sqrt is math.sqrt
    assert "sqrt" in vars(lazy)  # cached: the next read is a plain attribute look-up
    assert copy.copy(lazy) is not None  # copy's dunder probes do not break it
    try:
        lazy.no_such_function  # noqa: B018
    except AttributeError:
        pass
    else:  # pragma: no cover - the check must be able to fail
        raise AssertionError("a missing attribute must raise AttributeError")
