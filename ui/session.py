"""Streamlit session helpers shared by the pages, one module per concern (issue 29 point 4):

* :mod:`ui.ledger` -- the privacy ledger of the browser session (entries, rows per person,
  budget cap, planned cost, the sidebar);
* :mod:`ui.url_state` -- shareable scenarios: widget starting values from the URL and the
  settings kept for a page switch (:class:`PageSettings`), written back to the URL;
* :mod:`ui.release_flow` -- the Release button with its confirmation, the run and its record;
* :mod:`ui.settings_file` -- a page's settings as a JSON file;
* :mod:`ui.widgets` -- uploads kept in session memory, export buttons, lazy expanders,
  formula notes.

This module re-exports their names, so ``from ui.session import ...`` keeps working; new code
imports from the module of its concern. With :mod:`ui.progress` these are the only ``ui``
modules that import Streamlit (figures and page logic stay testable without it).
"""

from dpcore.privacy.ledger import (  # noqa: F401  (the names pages and tests import from here)
    ENTRY_FIELDS,
    delta_text,
    entry_rows,
    group,
    ledger_totals,
)

from .ledger import (  # noqa: F401
    CAP_KEY,
    LEDGER_KEY,
    LEDGER_LOAD_OPEN,
    LEDGER_TITLE,
    LOAD_NOTE_KEY,
    PAGE_ROWS_KEY,
    ROWS_KEY,
    SETTINGS_IO_OPEN,
    _page_hash,
    _per_person_note,
    _uncertified,
    accountant,
    budget_cap,
    ledger,
    ledger_json,
    ledger_total_text,
    page_rows,
    parse_ledger,
    planned_cost,
    read_ledger,
    record_event,
    record_release,
    render_ledger,
    rows_per_person,
    set_page_rows,
    show_cost,
)
from .release_flow import (  # noqa: F401
    _dialog_state,
    finish_release,
    release_button,
    release_error,
    show_estimate_budget,
)
from .settings_file import (  # noqa: F401
    parse_settings,
    render_settings_io,
    settings_json,
)
from .url_state import (  # noqa: F401
    PageSettings,
    query_value,
    starting_value,
    write_query,
)
from .widgets import (  # noqa: F401
    export_buttons,
    formula_notes,
    lazy_expander,
    mark_typed,
    resend_values,
    session_memo,
)
