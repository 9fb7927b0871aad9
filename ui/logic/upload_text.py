"""What the upload-and-mapping widget says about a file (:mod:`ui.logic.upload`, which
re-exports these names): the recognised layout and covariate, what is missing, the mapping as a
sentence, the reader's hints in the page's words and the rows per person. No Streamlit."""

from __future__ import annotations

import re

import numpy as np

__all__ = ["covariate_text", "incomplete_mapping_text", "mapping_legend", "no_covariate_text",
           "param_left_out", "param_note", "param_read_text", "person_hint", "person_rows_text",
           "recognised_text", "responses_text", "user_message"]


#: Names of columns that may say who a row belongs to (a hint on the page; never a default).
_PERSON_NAMES = re.compile(r"(?:[a-z0-9]+_)?(?:person|people|subject|subj|participant|patient|"
                           r"individual|user|respondent|customer|household|animal|rat|mouse|"
                           r"owner)s?(?:_?(?:id|no|nr|code|name))?")


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


def no_covariate_text(profiles, responses):
    """Why a file offers no covariate (every numeric column holds the point or is an
    identifier, :func:`ui.logic.upload.covariate_choices` is empty), and which column to add
    (Markdown). ``responses``: the point's columns."""
    read = (f"its columns {', '.join(responses)} are the responses" if len(responses) > 1 else
            f"its column {responses[0]} is a response" if responses else
            "it has no response column")
    others = [p.name for p in profiles if p.name not in responses]
    ignored = ""
    if others:
        listed = ", ".join(f"'{c}'" for c in others)
        ignored = (f"; {listed} {'is' if len(others) == 1 else 'are'} ignored (text, empty or "
                   "an identifier)")
    return (f"The file has no covariate column: {read}{ignored}. Add a numeric column holding "
            "the covariate the responses change with (time, age, dose, …), e.g. named 'x', "
            "and upload the file again.")


def _param_words(kind, found, names):
    """How a header names ``found`` (landmarks lx1..ly8 / x1..y8, coordinates y1..y3)."""
    if kind == "kendall":
        lx = any(str(n).strip().lower() == "lx1" for n in names)
        return f"{found} landmarks", ("lx{}", "ly{}") if lx else ("x{}", "y{}")
    return f"{found} coordinate{'s' if found > 1 else ''}", ("y{}", "y{}")


def param_read_text(kind, found, label, names=("lx1",)):
    """What a page says when it set its parameter widget (``label``: *Number of landmarks k*,
    *Dimension d*) from a file's header (:func:`ui.logic.upload.header_param`)."""
    what, (a, b) = _param_words(kind, found, names)
    return (f"The header names **{what}** ({a.format(1)}..{b.format(found)}): *{label}* is "
            f"set to {found}. Change it to read fewer.")


def param_left_out(kind, found, param, label, names=("lx1",)):
    """A warning when a header names ``found`` (landmarks, coordinates, matrix size), more
    than the page's ``param`` reads (else ''). ``label``: the page's parameter widget."""
    if found is None or param is None or found <= int(param):
        return ""
    if kind == "spd":
        return (f"The header names the entries of {found} × {found} matrices, but this page "
                f"reads {param} × {param} matrices: only the columns of their upper-left "
                f"{param} × {param} block are read.")
    what, (a, b) = _param_words(kind, found, names)
    first = int(param) + 1
    rest = a.format(first) if kind != "kendall" and first == found else (
        f"{a.format(first)}..{b.format(found)}")
    return (f"The header names {what} ({a.format(1)}..{b.format(found)}) but *{label}* is "
            f"{param}: the column{'s' if rest != a.format(first) else ''} {rest} "
            f"{'are' if rest != a.format(first) else 'is'} not read. Set it to {found} to read "
            "them all.")


def param_note(kind, found):
    """Why the widget reads another parameter than the page's: the header names it."""
    if kind == "kendall":
        return f"The header names **{found} landmarks** (lx1..ly{found}): read as {found}."
    return f"The header names the entries of **{found} × {found} matrices**."


def person_hint(profiles, exclude=()):
    """Columns whose name suggests a person (``person``, ``subject``, ``patient_id``, …), as a
    hint to choose the person column; never chosen by default."""
    return [p.name for p in profiles if p.name not in exclude
            and _PERSON_NAMES.fullmatch(re.sub(r"[\s.\-]+", "_", p.name.strip().lower()))]
