"""Shared layout, validation and trace helpers of the figure builders (private).

Every builder of :mod:`dpcore.visualization` finishes its figure with :func:`_finish`: the
``plotly_white`` template, a left-aligned title, explicit dark text colours, powers-of-ten tick
labels and the legend to the right of the plot (or below it). The input checks turn array-likes
into float arrays with messages of the form "`name` must have shape ..., got ...".
"""

from __future__ import annotations

import copy
import re
from collections.abc import Mapping, Sequence

import numpy as np
import plotly.graph_objects as go
import plotly.io as pio

from . import colors

#: Base font size (axis labels, ticks, legend) and title size, in px.
FONT_SIZE = 14
TITLE_SIZE = 19
#: Text colour of titles, ticks and legends (dark grey, readable on white). The dashboard draws
#: figures in its light or dark theme and swaps this colour and black for the theme's text colour
#: (``ui.figures.show_figure``); the figures themselves stay drawn for a white page.
TEXT_COLOR = "#262730"
#: Default heights in px.
HEIGHT_3D = 640
HEIGHT_2D = 460
#: Curves and points on the sphere are drawn this far outside the unit sphere so the
#: translucent surface does not hide them.
SPHERE_LIFT = 1.012
#: Up to this many private draws each get their own legend entry; beyond it one entry
#: stands for all of them.
MAX_LEGEND_DRAWS = 5
#: Distance of the 3D camera from the centre of the scene (plotly's default is about 2.2).
EYE_DISTANCE = 1.85


# ------------------------------------------------------------------------------ validation
def _array(a, name, trailing=None, ndim=None):
    """``a`` as a float array, checked for trailing shape ``trailing`` and ``ndim`` axes.

    NaN is allowed (plotly leaves a gap there); the builders never do arithmetic that NaN
    would spoil except where they say so.
    """
    if a is None:
        raise TypeError(f"`{name}` is required, got None.")
    try:
        arr = np.asarray(a, dtype=float)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"`{name}` must be a numeric array, got {type(a).__name__}.") from exc
    if trailing is not None:
        trailing = tuple(trailing)
        if arr.ndim < len(trailing) or arr.shape[arr.ndim - len(trailing) :] != trailing:
            raise ValueError(f"`{name}` must have shape [..., {', '.join(map(str, trailing))}], "
                             f"got {arr.shape}.")
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"`{name}` must have {ndim} axes, got shape {arr.shape}.")
    return arr


def _stack(items, name, item_ndim):
    """A list of arrays of ``item_ndim`` axes from ``None``, one array, a batch or a sequence."""
    if items is None:
        return []
    if isinstance(items, np.ndarray) or not isinstance(items, Sequence):
        arr = _array(items, name)
        if arr.ndim == item_ndim:
            return [arr]
        if arr.ndim == item_ndim + 1:
            return list(arr)
        raise ValueError(
            f"`{name}` must have {item_ndim} or {item_ndim + 1} axes, got shape {arr.shape}."
        )
    out = [_array(item, f"{name}[{i}]") for i, item in enumerate(items)]
    for i, arr in enumerate(out):
        if arr.ndim != item_ndim:
            raise ValueError(
                f"`{name}[{i}]` must have {item_ndim} axes, got shape {arr.shape}."
            )
    return out


def _named(items, name, default_label):
    """``(label, value)`` pairs from a mapping, or one pair for a bare value."""
    if isinstance(items, Mapping):
        if not items:
            raise ValueError(f"`{name}` must not be empty.")
        return [(str(k), v) for k, v in items.items()]
    return [(default_label, items)]


# ------------------------------------------------------------------------------ styling
def _finish(fig, title, height, *, subtitle=None, legend_below=False, margin_top=None):
    """Shared layout: template, title, fonts, height and legend placement.

    The legend sits to the right of the plot (where it cannot cover titles, subplot titles or
    data), or below it with ``legend_below`` (for figures with a colour bar on the right).
    """
    title_spec = {"text": title, "x": 0.01, "xanchor": "left", "font": {"size": TITLE_SIZE}}
    if subtitle:
        title_spec["subtitle"] = {"text": subtitle, "font": {"size": FONT_SIZE - 1}}
    if legend_below:
        # Anchored to the bottom of the whole figure (not the plot), under the axis title.
        legend = {"orientation": "h", "x": 0.0, "xanchor": "left", "y": 0.0, "yref": "container",
                  "yanchor": "bottom", "font": {"size": FONT_SIZE - 1}}
        bottom = 140
    else:
        legend = {"x": 1.02, "xanchor": "left", "y": 1.0, "yanchor": "top",
                  "font": {"size": FONT_SIZE - 1}, "bgcolor": "rgba(255, 255, 255, 0.85)"}
        bottom = 60
    top = (90 if subtitle else 60) if margin_top is None else margin_top
    _set_template(fig, "plotly_white")
    layout = {
        "title": title_spec,
        # Explicit colours for a white page (the reproduction report); the dashboard maps them
        # to its theme's text colour.
        "font": {"size": FONT_SIZE, "color": TEXT_COLOR},
        "height": int(height),
        "legend": legend,
        "showlegend": True,
        "margin": {"l": 70, "r": 20, "t": top, "b": bottom},
        "hoverlabel": {"font": {"size": FONT_SIZE - 1}},
    }
    _assign(fig.layout, layout)
    # Powers of ten rather than SI prefixes (plotly's "100µ" would clash with the GDP µ).
    axis_style = {"exponentformat": "power", "tickfont": {"color": TEXT_COLOR},
                  "title": {"font": {"color": TEXT_COLOR}}}
    return _update_axes(fig, x=axis_style, y=axis_style)


def _assign(obj, spec):
    """``obj.update(spec)`` for a plotly object ``obj`` and nested dicts ``spec``, set
    property by property (each validated as it is set).

    A figure's ``update`` (``update_layout``, ``update_xaxes``, ...) collects its changes and
    relays them to the figure at the end, several times slower than setting them one by one
    for the few properties set here. The result is the same, in the same order: as ``update``
    adds them, the nested objects of ``spec`` (dict values) come first and then its plain
    values, at every level.
    """
    for key, value in spec.items():
        if isinstance(value, dict):
            _assign(obj[key], value)
    for key, value in spec.items():
        if value is None:
            # update() keeps an empty entry for a nested object set to None (its position
            # in the JSON); setting None drops it.
            obj.update({key: None})
        elif not isinstance(value, dict):
            obj[key] = value
    return obj


def _update_axes(fig, x=None, y=None):
    """``fig.update_xaxes(**x)``, then ``fig.update_yaxes(**y)``: every 2D x (y) axis of
    ``fig`` gets the nested dict ``x`` (``y``), through :func:`_assign`."""
    for axes, spec in ((fig.select_xaxes, x), (fig.select_yaxes, y)):
        if spec:
            for axis in axes():
                _assign(axis, spec)
    return fig


def _add_traces(fig, traces, cells=None):
    """Add ``traces``, given as dicts (``{"type": "scatter", ...}``), to ``fig`` in one call,
    each to its subplot ``(row, col)`` of ``cells`` if given.

    A trace passed as a dict is validated once, when it is added; a ``go.Scatter`` is
    validated when it is made and again when it is added.
    """
    if cells:
        rows, cols = (list(c) for c in zip(*cells, strict=True))
        return fig.add_traces(traces, rows=rows, cols=cols)
    return fig.add_traces(traces)


#: Validated copies of registered templates: ``{name: (registered object, validated copy)}``.
_TEMPLATES = {}


def _set_template(fig, name):
    """Give ``fig`` the registered template ``name``: the same JSON as
    ``fig.update_layout(template=name)``, without validating the template again.

    ``update_layout(template=name)`` deep-copies the registered template through plotly's
    validators, about 10 ms of CPU a figure (a third to a half of a figure's build time), to
    the same result every time. That validated copy is made once here (again if the name is
    registered anew) and each figure gets its properties the way plotly gives a new figure its
    default template: copied as they are. Every other property of the figure is still
    validated when it is set.
    """
    registered = pio.templates[name]
    cached = _TEMPLATES.get(name)
    if cached is None or cached[0] is not registered:
        cached = _TEMPLATES[name] = (registered, copy.deepcopy(registered))
    layout = fig.layout
    layout._validate = False
    try:
        layout.template = cached[1]
    finally:
        layout._validate = fig._validate


def _axis_type(log, values=(), axis_range=None):
    """Axis settings: linear, or log with plain labelled ticks at 1, 2 and 5 of each decade
    over short spans and powers of ten over long ones (where more labels would crowd)."""
    if not log:
        return {"type": "linear"}
    if axis_range is not None:
        lo, hi = sorted(float(r) for r in axis_range)
    else:
        v = np.concatenate([np.ravel(np.asarray(a, dtype=float)) for a in values] or [[]])
        v = v[np.isfinite(v) & (v > 0)]
        if v.size == 0:
            return {"type": "log"}
        lo, hi = float(np.log10(v.min())), float(np.log10(v.max()))
    if hi - lo > 2.5:
        return {"type": "log", "dtick": 1}
    decades = np.arange(np.floor(lo) - 1, np.ceil(hi) + 1)
    ticks = (np.array([1.0, 2.0, 5.0])[None, :] * 10.0 ** decades[:, None]).ravel()
    eps = 1e-9
    ticks = ticks[(np.log10(ticks) >= lo - eps) & (np.log10(ticks) <= hi + eps)]
    if ticks.size < 2:
        return {"type": "log"}
    return {"type": "log", "tickvals": ticks.tolist(), "ticktext": [f"{t:g}" for t in ticks]}


def _draw_styles(n, label):
    """Per-draw ``(name, color, showlegend)`` for ``n`` private draws."""
    cols = colors.private_colors(n)
    if n <= MAX_LEGEND_DRAWS:
        names = [f"{label} {i + 1}" if n > 1 else label for i in range(n)]
        return [(names[i], cols[i], True) for i in range(n)]
    many = f"{label}s 1–{n} (colour = draw)"
    return [(many, cols[i], i == 0) for i in range(n)]


def _cell_edges(values, log):
    """Cell edges for an increasing grid: midpoints between neighbours (geometric midpoints
    if ``log``), the outer edges mirrored, so every grid value lies inside its own cell."""
    v = np.log10(values) if log else values
    if v.size == 1:
        edges = np.array([v[0] - 0.5, v[0] + 0.5])
    else:
        mid = 0.5 * (v[1:] + v[:-1])
        edges = np.concatenate([[2 * v[0] - mid[0]], mid, [2 * v[-1] - mid[-1]]])
    return 10.0**edges if log else edges


def _polyline(segments):
    """Concatenate 2-D or 3-D point arrays, separated by NaN rows (one trace, many pieces)."""
    pieces = []
    for seg in segments:
        pieces.append(seg)
        pieces.append(np.full((1, seg.shape[-1]), np.nan))
    return np.concatenate(pieces[:-1]) if pieces else np.empty((0, 2))


def describe_figure(fig, max_series=6):
    """A short text alternative for ``fig``: its title, subtitle, axes and series.

    The dashboard passes it to ``st.plotly_chart(alt=...)`` unless a page gives its own.

    Parameters
    ----------
    fig : plotly.graph_objects.Figure
    max_series : int
        At most this many legend names are listed (then "and k more").

    Returns
    -------
    str
        For example ``"Chart: Error against n. Horizontal axis: n; vertical axis: error.
        Series: Laplace, KNG."``.
    """
    layout = fig.layout
    title = _plain(layout.title.text) or "Untitled figure"
    parts = [f"{'3D chart' if _is_3d(fig) else 'Chart'}: {title}."]
    subtitle = _plain(layout.title.subtitle.text) if layout.title.subtitle else ""
    if subtitle:
        parts.append(f"{subtitle}.")
    axes = [(side, _plain(axis.title.text)) for side, axis in
            (("horizontal axis", layout.xaxis), ("vertical axis", layout.yaxis))]
    axes = "; ".join(f"{side}: {text}" for side, text in axes if text)
    if axes:
        parts.append(axes[0].upper() + axes[1:] + ".")
    names = list(dict.fromkeys(_plain(t.name) for t in fig.data
                               if t.name and t.showlegend is not False))
    if names:
        more = f" and {len(names) - max_series} more" if len(names) > max_series else ""
        parts.append(f"Series: {', '.join(names[:max_series])}{more}.")
    return " ".join(parts)


def _is_3d(fig):
    return any(t.type in ("scatter3d", "surface", "mesh3d") for t in fig.data)


def _plain(text):
    """Plotly rich text as plain text: tags dropped, line breaks as spaces, no end stop."""
    if not text:
        return ""
    text = re.sub(r"<br\s*/?>", " ", str(text))
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", "", text)).strip().rstrip(".")


# ------------------------------------------------------------------------------ 3D
def _curve_trace3d(pts, name, color, width, *, dash=None, showlegend=True, group=None,
                   hover_x=None, lift=SPHERE_LIFT):
    """A 3D polyline trace through ``pts`` (shape (m, 3)) scaled by ``lift``, with a hover
    label naming it (and the covariate ``hover_x`` of each point, if given)."""
    pts = np.asarray(pts) * lift
    trace = go.Scatter3d(
        x=pts[:, 0], y=pts[:, 1], z=pts[:, 2],
        mode="lines",
        line={"color": color, "width": width, **({"dash": dash} if dash else {})},
        name=name, showlegend=showlegend, legendgroup=group or name,
    )
    if hover_x is not None:
        trace.customdata = np.asarray(hover_x)
        trace.hovertemplate = f"{name}<br>x = %{{customdata:.3g}}<extra></extra>"
    else:
        trace.hovertemplate = f"{name}<extra></extra>"
    return trace


def legend_below(fig, *, zoom=1.0, bottom=150):
    """Move the legend under the plot, leaving the full width to a figure in a narrow column.

    Parameters
    ----------
    fig : plotly.graph_objects.Figure
    zoom : float
        For 3D figures: ``zoom > 1`` moves the camera closer (a column is narrower than a page).
    bottom : int
        Bottom margin in px that holds the legend.

    Returns
    -------
    plotly.graph_objects.Figure
        ``fig``, changed in place.
    """
    eye = fig.layout.scene.camera.eye
    if zoom != 1.0 and eye is not None and eye.x is not None:
        _assign(fig.layout.scene.camera.eye, {"x": eye.x / zoom, "y": eye.y / zoom,
                                              "z": eye.z / zoom})
    _assign(fig.layout, {
        "legend": {"orientation": "h", "x": 0.0, "xanchor": "left", "y": 0.0,
                   "yref": "container", "yanchor": "bottom"},
        "margin": {"b": bottom},
    })
    return fig
