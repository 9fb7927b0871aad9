"""What the upload-and-mapping widget says about a file (:mod:`ui.logic.upload`, which
re-exports these names): the recognised layout and covariate, what is missing, the mapping as a
sentence, the reader's hints in the page's words and the rows per person. No Streamlit."""

from __future__ import annotations

import numpy as np

__all__ = ["covariate_text", "incomplete_mapping_text", "mapping_legend", "person_rows_text",
           "recognised_text", "responses_text", "user_message"]


def _upload():
    """:mod:`ui.logic.upload` (imported when first needed: it re-exports this module)."""
    from . import upload

    return upload


def incomplete_mapping_text(manifold, layout_key, columns, profiles, exclude=()):
    """Why a mapping with unchosen slots cannot be read yet: ``("error", text)`` when the file
    has too few columns for the layout (a missing column), else ``("info", text)`` asking the
    user to choose."""
    U = _upload()
    layout = U.point_layouts(manifold)[layout_key]
    missing = [lab for lab, c in zip(layout.slot_labels, columns, strict=True) if c is None]
    options = U.slot_options(profiles, layout, exclude)
    if len(options) < len(layout.slots):
        found = ", ".join(f"'{c}'" for c in options) or "none"
        others = [lay for lay in U.point_layouts(manifold).values()
                  if lay.key != layout_key and len(lay.slots) <= len(options)]
        hint = "".join(f" Choose *{lay.label}* if the file holds that." for lay in others)
        besides = f" besides the covariate '{exclude[0]}'" if exclude else ""
        return "error", (f"Header (row 1): a point written as *{layout.label}* needs "
                         f"{len(layout.slots)} numeric columns ({', '.join(layout.slot_labels)})"
                         f", but the file has {len(options)}{besides}: {found}.{hint}")
    return "info", (f"Choose the column of {', '.join(missing)} above: no column is named so, "
                    "and identifier-like columns are never chosen by default.")


def mapping_legend(manifold, mapping):
    """The mapped columns as a sentence (``y1 ← 'east'``), or '' when every column has the
    reader's own name."""
    U = _upload()
    layout = U.point_layouts(manifold)[mapping.layout]
    pairs = list(zip(layout.slot_labels, layout.slots, mapping.columns, strict=True))
    if all(c.strip().lower() == s.lower() for _, s, c in pairs):
        return ""
    return "Point columns: " + ", ".join(f"{lab} ← '{c}'" for lab, _, c in pairs) + "."


def user_message(exc, renormalize=None):
    """A reader's error for a page: its hints in the page's words (``renormalize``: what to do
    instead of the library's keyword, by default normalising the rows)."""
    return (str(exc)
            .replace("Pass renormalize=True to project every point onto the sphere.",
                     renormalize or "Normalize each row to unit length before uploading.")
            .replace("regression needs at least two different covariate values.",
                     "the covariate is constant: a regression needs at least two different "
                     "covariate values."))


def person_rows_text(k, person, sizes):
    """What a person column does to the guarantee, for the page (Markdown)."""
    return (f"**Rows per person: {k}**, the largest group of column '{person}' "
            f"({sizes.size:,} people; median {np.median(sizes):g} rows). The guarantee per "
            f"person is {k} × ε (group privacy); the cost, the ledger entry and the sidebar "
            "count per person on this page.")


def recognised_text(manifold, layout_key, columns, profiles):
    """How the header was recognised for ``layout_key`` (the default ``columns`` of its
    slots), in one sentence for the page."""
    U = _upload()
    layout = U.point_layouts(manifold)[layout_key]
    named = U._named(layout, [p.name for p in profiles])
    found = ", ".join(f"'{c}'" for c in columns if c is not None)
    if None not in columns and list(columns) == named:
        return (f"Recognised from the header: {layout.label.lower()}, in the columns "
                f"{found}.")
    if None not in columns:
        return (f"No column is named {', '.join(layout.slots)}: the numeric columns {found} "
                "(all the file has besides identifiers) are taken in file order. Check them.")
    return (f"The header does not name the columns of {', '.join(layout.slot_labels)}: choose "
            "them below.")


def responses_text(columns, profiles):
    """How the default response columns of a free layout (Euclidean) were found."""
    U = _upload()
    named = [c for c in columns if U._key(c) == f"y{columns.index(c) + 1}"]
    listed = ", ".join(f"'{c}'" for c in columns)
    if columns and len(named) == len(columns):
        return (f"Recognised from the header: coordinates y1, …, y{len(columns)} (d = "
                f"{len(columns)}), in the columns {listed}.")
    if columns:
        return (f"The header names no y1, …, yd: the response {listed} is the first numeric "
                "column besides the covariate and identifiers. Choose the responses below.")
    return "No numeric column is left for a response: choose one below."


def covariate_text(covariate, profiles):
    """How the default covariate was found, in one sentence for the page."""
    U = _upload()
    if covariate is None:
        return ("No column can be the covariate by default (every numeric column is a point "
                "column or an identifier): choose it, or add a column of the covariate (time, "
                "age, dose, …) and upload the file again.")
    how = ("named like a covariate" if U._key(covariate) in U._COVARIATE_NAMES else
           "the first numeric column that holds no point and is no identifier")
    return f"Covariate: '{covariate}' ({how}); point columns are never the default."
