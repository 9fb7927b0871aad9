"""Modules imported on first use (issue 31 point 2: imports that cost what they use).

``scipy.optimize`` alone costs several times ``import numpy``, and ``scipy.special`` about
three times; a dpcore module that calls them in a few functions should not make every import
of it pay that. ``special = lazy_module("scipy.special")`` at module level keeps the call
sites as they are (``special.log_ndtr(x)``) and imports the module the first time one of its
attributes is read. Unlike :class:`importlib.util.LazyLoader`, nothing is put into
``sys.modules`` before the real import, so other code sees the module only once it is loaded.
"""

from __future__ import annotations

import importlib


class LazyModule:
    """Stand-in for a module, imported when one of its attributes is first read.

    Parameters
    ----------
    name : str
        Absolute module name, e.g. ``"scipy.optimize"``.

    Notes
    -----
    Each attribute read is cached on the stand-in, so later reads cost a plain attribute
    look-up (a later monkeypatch of the real module is therefore not seen).
    """

    def __init__(self, name):
        self._lazy_name = name

    def __getattr__(self, attr):
        if attr.startswith("__"):  # copy, pickle and inspect probe for dunders: do not import
            raise AttributeError(attr)
        value = getattr(importlib.import_module(self._lazy_name), attr)
        setattr(self, attr, value)
        return value

    def __repr__(self):
        return f"<lazy module {self._lazy_name!r}>"


def lazy_module(name):
    """A :class:`LazyModule` for ``name`` (imported on first attribute access)."""
    return LazyModule(name)
