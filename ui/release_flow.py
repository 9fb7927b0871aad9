"""The release flow of a page: a Release button that asks for confirmation (stating the cost),
the run under a progress bar, the record in the ledger and the error of a failed run."""


from __future__ import annotations

import streamlit as st

from .ledger import planned_cost, show_cost


# ---------------------------------------------------------------------- spending on purpose
def _dialog_state(key):
    return f"{key}_confirm_open", f"{key}_confirmed"


def release_button(key, cost, *, disabled=False, label="Release", container=None,
                   help=None):
    """A release button that spends only after a confirmation stating the exact cost.

    The button opens a dialog with ``cost["text"]`` (from :func:`planned_cost`) and *Release
    now* / *Cancel*; the release runs on the rerun after *Release now*. Refused outright (button
    disabled, the accountant's message shown by the caller) when ``cost["error"]`` is set.

    Returns
    -------
    bool
        True on the one run where the user confirmed.
    """
    open_key, go_key = _dialog_state(key)
    where = container or st
    # On the run that performs a confirmed release the button stays disabled until it ends.
    running = bool(st.session_state.get(go_key))
    if where.button(label, type="primary", key=key, help=help,
                    disabled=disabled or running or cost.get("error") is not None):
        st.session_state[open_key] = True

    def close():
        st.session_state[open_key] = False

    @st.dialog("Confirm the release", on_dismiss=close)
    def confirm():
        st.markdown(cost["text"] or "")
        st.caption("Nothing is drawn until you confirm. The release is recorded in the privacy "
                   "ledger (sidebar), where it stays.")
        c1, c2 = st.columns(2)
        if c1.button("Release now", type="primary", key=f"{key}_confirm"):
            st.session_state[open_key] = False
            st.session_state[go_key] = True
            st.rerun()
        if c2.button("Cancel", key=f"{key}_cancel"):
            st.session_state[open_key] = False
            st.rerun()

    if st.session_state.get(open_key) and not disabled and cost.get("error") is None:
        confirm()
    return bool(st.session_state.pop(go_key, False))


def finish_release(key, error=None):
    """End the run of a confirmed release: keep its error (if any) for the next run and rerun,
    so that the Release button, disabled while the release ran, is enabled again.

    Call it after the release was stored (``st.session_state``) and recorded in the ledger;
    :func:`release_error` shows the kept error on the next run.
    """
    if error is not None:
        st.session_state[f"{key}_error"] = str(error)
    st.rerun()


def release_error(key, what="The release"):
    """Show (once) the error kept by :func:`finish_release`; True if there was one."""
    message = st.session_state.pop(f"{key}_error", None)
    if message is not None:
        st.error(f"{what} failed: {message}", icon=":material/error:")
        return True
    return False


def show_estimate_budget(eps_b, n_columns, n_rows, levels, what):
    """Above an "Estimate privately" button: what ε_b buys for this many rows (a warning where
    the estimate is mostly noise) and the cost line of the estimate (``what``: the estimate it
    pays for). Returns the planned cost (:func:`planned_cost`)."""
    from .logic import private_bounds as PB

    text, thin = PB.budget_text(float(eps_b), n_columns, n_rows, levels)
    st.caption(text)
    if thin:
        one = n_columns == 1
        st.warning("At this ε_b the estimate is mostly noise for this many rows: expect "
                   f"{'a range' if one else 'ranges'} near the enclosing interval's ends. "
                   "Raise ε_b (its cost is stated below) or type "
                   f"{'a narrower enclosing interval' if one else 'narrower enclosing intervals'}.",
                   icon=":material/warning:")
    cost = planned_cost(epsilon=float(eps_b))
    show_cost(cost, f" It pays for the {what} only; the release below has its own cost.")
    return cost
