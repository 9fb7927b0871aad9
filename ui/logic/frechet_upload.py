"""Uploads on the Fréchet mean page: the shared column mapping of every page that reads a file,
:mod:`ui.logic.upload`, under the names this page's code and tests have used (a re-export: no
second copy)."""

from __future__ import annotations

from .upload import (
    MeanUpload,
    PointLayout,
    PointMapping,
    UploadTable,
    default_layout,
    default_point_columns,
    incomplete_mapping_text,
    mapped_columns,
    mapping_legend,
    person_hint,
    person_rows_text,
    point_layouts,
    read_mapped,
    recognised_text,
    scan_upload,
    slot_options,
)

__all__ = ["MeanUpload", "PointLayout", "PointMapping", "UploadTable", "default_layout",
           "default_point_columns", "incomplete_mapping_text", "mapped_columns",
           "mapping_legend", "person_hint", "person_rows_text", "point_layouts",
           "read_mapped", "recognised_text", "scan_upload", "slot_options"]
