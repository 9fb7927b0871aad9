"""The one upload-and-mapping widget of every page that reads a file (issues 29 and 30).

A page says what it reads (:class:`ui.logic.upload.UploadTarget`: the manifold, whether a
covariate is read) and calls :func:`upload_and_map` (the file uploader, then the mapping) or,
for bytes it already has (a preset, a generated example), :func:`map_file`. The widget shows a
preview of the first rows with the column types and empty cells, the recognised layout in one
sentence, and one selectbox per role: the covariate (regression pages), the layout and the
point's columns (a multiselect for Euclidean responses), the person column; other columns are
ignored and listed. It returns the data read (:class:`ui.logic.upload.MappedUpload`: ``x``,
``y``, ``groups``, ``rows_per_person``, ``manifold``, ``mapping``), or None after saying what
is missing (``st.info``) or what is wrong with the file (``st.error``, naming the row and the
column; never a traceback).

Every widget key starts with the page's tag (``fm_``, ``lr_``, ``gr_``). The file's bytes
stay in this session's memory (:func:`ui.session.session_memo`, one store per page:
``<tag>_upload_scans`` and ``<tag>_upload_reads``), never in ``st.cache_data``, on disk or in a
log. The pure logic is :mod:`ui.logic.upload`.

A regression page adopts it in a few lines::

    from ui.logic.upload import UploadTarget, mapping_param
    from ui.upload import confirm_person_rows, upload_and_map

    target = UploadTarget(kind, param, covariate=True)   # k / d from the header
    read = upload_and_map("gr", target, label="CSV file (one observation per row)")
    if read is not None:
        x, y, manifold = read.x, read.y, read.manifold   # manifold: Kendall(8) for lx1..ly8
        param = mapping_param(target, read.mapping.layout, len(read.mapping.columns))
        group_ok = confirm_person_rows(read, "gr", scope)  # rows per person, confirmed

On S², ``UploadTarget(..., renormalize=True)`` projects points off the sphere onto it, and
``upload_and_map(..., sphere_hint="Tick *Project points onto the sphere* above.")`` words the
reader's hint as the page's own control. A page whose parameter is its own widget (Geodesic
regression: *Number of landmarks k*, *Dimension d*) keeps ``infer_param=False`` and calls
:func:`param_from_header` before drawing that widget: the header's k or d is set into it once
per file, the user may change it afterwards.
"""

from __future__ import annotations

import hashlib

import streamlit as st

from dpcore.data import DataValidationError
from ui.caps import CAPS, upload_max_bytes
from ui.logic import regression_data as D
from ui.logic import upload as U
from ui.session import lazy_expander, session_memo, set_page_rows

__all__ = ["confirm_person_rows", "file_bytes", "header_caption", "map_file",
           "param_from_header", "upload_and_map"]

ERROR_PREFIX = "The file cannot be used."


def file_bytes(tag, *, label="Upload a CSV file (a header row naming the columns, one row "
               "per observation)", caption=None, empty="Upload a file to continue."):
    """The page's file uploader (key ``<tag>_upload``): the file's bytes, or None (with
    ``empty`` said) while there is none. ``caption`` goes under it."""
    uploaded = st.file_uploader(label, type=["csv", "txt"], key=f"{tag}_upload")
    if caption:
        st.caption(caption)
    if uploaded is None:
        st.info(empty)
        return None
    return uploaded.getvalue()


def upload_and_map(tag, target, *, label=None, caption=None, empty=None, sphere_hint=None):
    """The file uploader and the mapping of its columns (:func:`map_file`): the data read, or
    None with a message. ``label``, ``caption``, ``empty``: as for :func:`file_bytes`
    (the caption by default states the expected header)."""
    caption = caption or header_caption(target)
    kwargs = {k: v for k, v in (("label", label), ("empty", empty)) if v}
    raw = file_bytes(tag, caption=caption, **kwargs)
    return None if raw is None else map_file(raw, tag, target, sphere_hint=sphere_hint)


def header_caption(target):
    """The uploader's caption: the expected header, and that the file stays in memory."""
    header, more = expected_header(target)
    return (f"Expected header: `{header}`{more}; other names are mapped below and other "
            "columns (an id, a name, a date) are ignored. The file stays in memory and is "
            "never stored.")


def expected_header(target):
    """The reader's own header for a target (``x, y1, y2, y3``) and the other layouts it
    may have, in words."""
    from ui import manifolds as M

    manifold = M.spec(target.kind).build(M.param_of(target.kind, target.param))
    names = (["x"] if target.covariate else []) + list(manifold.csv_columns())
    more = {"sphere": " or latitude and longitude in degrees", "spd": " or the full matrix",
            "kendall": " (any number of landmarks; x1, y1, … too)",
            "euclidean": " (any number of coordinates)"}.get(target.kind, "")
    return ", ".join(names), more


def map_file(raw, tag, target, *, scope=None, defaults=None, preview_open=True,
             sphere_hint=None):
    """Preview, roles and reading of a file's bytes ``raw`` for ``target``.

    Parameters
    ----------
    raw : bytes
    tag : str
        The page's key prefix (``"fm"``, ``"lr"``, ``"gr"``).
    target : ui.logic.upload.UploadTarget
    scope : str, optional
        What the role widgets belong to (their keys end with it): by default the manifold and
        the file's SHA-256, so a new file starts from its own defaults.
    defaults : ui.logic.upload.PointMapping, optional
        Default roles instead of the header's (a preset's known columns).
    preview_open : bool
        Whether the preview starts open (its tables are built only while open).
    sphere_hint : str, optional
        What the sphere's "points off the sphere" message tells the user to do (by default:
        normalise the rows before uploading).

    Returns
    -------
    ui.logic.upload.MappedUpload or None
    """
    digest = hashlib.sha256(raw).hexdigest()
    scope = scope or f"{target.kind}_{digest[:12]}"
    try:
        upload = _scan(raw, tag, digest)
    except DataValidationError as exc:
        st.error(f"{ERROR_PREFIX}\n\n{exc}")
        return None
    if not any(p.kind == "number" for p in upload.profiles):
        st.error(f"{ERROR_PREFIX}\n\nNo column holds numbers: every column is text or empty.")
        return None
    _preview(upload, f"{tag}_preview_open_{scope}", preview_open)
    mapping = _roles(upload, tag, target, scope, defaults)
    if mapping is None:
        return None
    manifold = U.manifold_of(target, mapping.layout, len(mapping.columns))
    legend = U.mapping_legend(manifold, mapping)
    options = {"renormalize": True} if target.renormalize else {}
    try:
        read = session_memo(f"{tag}_upload_reads", (digest, target, mapping),
                            lambda: U.read_mapped(upload, manifold, mapping, **options),
                            keep_errors=(DataValidationError,),
                            spinner="Reading the chosen columns …", max_entries=4)
    except DataValidationError as exc:
        st.error(f"{ERROR_PREFIX}\n\n{U.user_message(exc, sphere_hint)}"
                 + (f"\n\n{legend}" if legend else ""))
        return None
    st.caption(read.note + (f" {legend}" if legend else ""))
    return read


def _scan(raw, tag, digest):
    """The file scanned once per session (:func:`ui.logic.upload.scan_upload`, kept in the
    page's session store ``<tag>_upload_scans``); raises DataValidationError."""
    return session_memo(f"{tag}_upload_scans", digest,
                        lambda: U.scan_upload(raw, max_bytes=upload_max_bytes(),
                                              max_columns=CAPS["upload_columns"]),
                        keep_errors=(DataValidationError,), spinner="Reading the file …",
                        max_entries=2)


def param_from_header(tag, kind, key, raw, param_range):
    """The manifold parameter a file's header names (Kendall k from ``lx1..lyk``, Euclidean d
    from ``y1..yd``: :func:`ui.logic.upload.header_param`), or None. Set into the page's
    parameter widget ``key`` once per file and manifold, before the widget is drawn, when
    within ``param_range`` (low, high, default); afterwards it is the user's to change. A file
    that cannot be read gives None (:func:`map_file` reports its problem)."""
    digest = hashlib.sha256(raw).hexdigest()
    seen = st.session_state.get(f"{tag}_header_param")
    if seen is not None and seen[:2] == (digest, kind):
        return seen[2]
    try:
        names = [p.name for p in _scan(raw, tag, digest).profiles]
    except DataValidationError:
        names = []
    found = U.header_param(kind, names)
    lo, hi, _ = param_range
    if found is not None and lo <= found <= hi:
        st.session_state[key] = found
    st.session_state[f"{tag}_header_param"] = (digest, kind, found)
    return found


def _preview(upload, key, expanded):
    """The first rows as written and the columns' types and empty cells (built while open)."""
    box = lazy_expander(f"Preview: first {len(upload.preview)} of {upload.n_rows:,} rows, "
                        "column types and empty cells", key, expanded=expanded)
    if box is not None:
        with box:
            st.dataframe(upload.preview, width="stretch")
            st.dataframe(D.profile_frame(upload.profiles), hide_index=True, width="stretch",
                         column_config={"note": st.column_config.TextColumn("note",
                                                                            width="large")})


def _labeller(profiles):
    ids = {p.name for p in profiles if p.id_like}
    return ids, lambda name: f"{name} (identifier?)" if name in ids else name


def _roles(upload, tag, target, scope, defaults):
    """The role widgets; returns a :class:`ui.logic.upload.PointMapping`, or None (with a
    message) while a role is not chosen."""
    profiles = upload.profiles
    ids, label = _labeller(profiles)
    roles = U.default_roles(target, profiles)
    st.markdown("**Columns**: choose "
                + ("the covariate, " if target.covariate else "")
                + ("the responses" if target.kind == "euclidean" else
                   "how the file writes a point and which columns hold it")
                + " and, if one person contributes several rows, the column naming the "
                  "person; other columns are ignored.")
    if roles.param_note:
        st.caption(roles.param_note)
    covariate = None
    if target.covariate:
        covariate = _covariate(profiles, tag, scope, target, roles, defaults, label)
        if covariate is None:
            return None
    layouts = roles.layouts
    keys = list(layouts)
    layout = keys[0] if len(keys) == 1 else st.radio(
        "Each point is written as", keys, index=keys.index(roles.mapping.layout),
        horizontal=True, format_func=lambda k: layouts[k].label, key=f"{tag}_map_layout_{scope}")
    roles = U.default_roles(target, profiles, layout, covariate)
    if layouts[layout].free:
        chosen = _responses(profiles, tag, scope, target, roles, defaults, covariate, label)
        if chosen is None:
            return None
        if not chosen:
            st.info("Choose at least one response column.")
            return None
    else:
        chosen = _point_columns(profiles, tag, scope, roles, layout, covariate, label)
    others = [p.name for p in profiles if p.name not in chosen and p.name != covariate]
    person = st.selectbox(
        "Person (group) column (optional)", [None, *others], key=f"{tag}_map_person_{scope}",
        format_func=lambda c: "(none)" if c is None else c,
        help="A column naming who each row belongs to (a patient, an animal, a household); "
             "(none): one row per person. The largest number of rows one person has becomes "
             "the rows per person of the privacy guarantee on this page.")
    hint = U.person_hint(profiles, exclude=(*chosen, covariate))
    if hint and person is None:
        st.caption(f"Column {', '.join(repr(c) for c in hint)} may name people: if one person "
                   "has several rows, choose it as the person column (group privacy).")
    if None in chosen:
        level, text = U.incomplete_mapping_text(roles.manifold, layout, chosen, profiles,
                                                exclude=(covariate,) if covariate else ())
        if level == "error":
            st.error(f"{ERROR_PREFIX}\n\n{text}")
        else:
            st.info(text)
        return None
    ignored = [c for c in others if c != person]
    if ignored:
        st.caption("Columns ignored: " + ", ".join(
            f"'{c}'" + (" (looks like an identifier)" if c in ids else "") for c in ignored))
    return U.PointMapping(layout, tuple(chosen), person, covariate)


def _covariate(profiles, tag, scope, target, roles, defaults, label):
    """The covariate's selectbox (:func:`ui.logic.upload.covariate_choices`), the default never
    a point column (:func:`ui.logic.upload.default_covariate`); None with an error when the
    file offers none (which column to add)."""
    options = U.covariate_choices(target, roles.manifold, profiles)
    if not options:
        lay = roles.layouts[roles.mapping.layout]
        points = [c for c in U.default_point_columns(roles.manifold, lay.key, profiles) if c]
        st.error(f"{ERROR_PREFIX}\n\n{U.no_covariate_text(profiles, points)}")
        return None
    default = defaults.covariate if defaults is not None else roles.mapping.covariate
    covariate = st.selectbox(
        "Covariate column (x)", options, format_func=label, key=f"{tag}_map_cov_{scope}",
        index=options.index(default) if default in options else None,
        placeholder="Choose the covariate",
        help="The column the responses change with (time, age, dose, …). Point columns and "
             "identifiers are never the default.")
    if defaults is None:
        st.caption(U.covariate_text(roles.mapping.covariate, profiles))
    if covariate is None:
        st.info("Choose the covariate column above.")
    return covariate


def _responses(profiles, tag, scope, target, roles, defaults, covariate, label):
    """A free layout's response columns (Euclidean: d is the number chosen); None (with an
    error) when the file has none to offer."""
    layout = roles.layouts[roles.mapping.layout]
    options = U.slot_options(profiles, layout, exclude=(covariate,))
    if not options:
        st.error(f"{ERROR_PREFIX}\n\nThe file needs a numeric column for the responses besides "
                 f"the covariate '{covariate}'.")
        return None
    wanted = (list(defaults.columns) if defaults is not None
              and covariate == defaults.covariate else list(roles.mapping.columns))
    chosen = st.multiselect("Response columns (y)", options, format_func=label,
                            default=[c for c in wanted if c in options],
                            max_selections=target.max_responses,
                            key=f"{tag}_map_resp_{scope}_{covariate}_{target.max_responses}")
    if defaults is None:
        st.caption(U.responses_text(list(roles.mapping.columns), profiles))
    return chosen


def _point_columns(profiles, tag, scope, roles, layout, covariate, label):
    """One selectbox per slot of a fixed layout: up to six on a line; more than six slots
    (SPD(3) full, landmarks) four on a line in an expander, closed while the header names them
    all (the sentence above lists them)."""
    lay = roles.layouts[layout]
    defaults = roles.mapping.columns
    st.caption(U.recognised_text(roles.manifold, layout, defaults, profiles))
    slots, options = lay.slot_labels, U.slot_options(profiles, lay, exclude=(covariate,))
    per = 6 if len(slots) <= 6 else 4
    box = st.container() if per == 6 else st.expander(
        f"The point's {len(slots)} columns", expanded=None in defaults)
    chosen = []
    with box:
        for start in range(0, len(slots), per):  # SPD(3): 9 entries; 8 landmarks: 16 columns
            cols = st.columns(min(per, len(slots)))
            for j, col in zip(range(start, min(start + per, len(slots))), cols, strict=False):
                chosen.append(col.selectbox(
                    slots[j], options, format_func=label, placeholder="Choose a column",
                    index=options.index(defaults[j]) if defaults[j] in options else None,
                    key=f"{tag}_map_{scope}_{layout}_{covariate}_{j}"))
    return chosen


def confirm_person_rows(read, tag, scope):
    """Rows per person from the person column (group privacy), for this page only
    (:func:`ui.session.set_page_rows`): the cost, the ledger entry and the ε readings of this
    page count per person, with the sidebar saying why. Returns False while the user has not
    confirmed that the largest group size is public (True without a person column)."""
    if read.groups is None:
        return True
    k, person = read.rows_per_person, read.mapping.person
    set_page_rows(k, f"This page counts {k} rows per person: the largest group of its person "
                     f"column '{person}'. The field above applies on the other pages.")
    st.info(U.person_rows_text(k, person, read.group_sizes), icon=":material/group:")
    return st.checkbox(
        f"I confirm that the largest group size ({k} rows per person) is public information",
        key=f"{tag}_group_ok_{scope}_{person}",
        help="The group sizes come from the data. Taking their maximum as the rows per person "
             "treats it as public: confirm only if it is (e.g. a study design of at most "
             f"{k} measurements per person), or set a public bound in the sidebar instead (with "
             "no person column).")
