"""A page's settings as a JSON file: written, read back, and the sidebar's "Settings file"
section."""


from __future__ import annotations

import json

import streamlit as st

from dpcore.privacy.ledger import load_json as _load_json

from .caps import CAPS
from .ledger import SETTINGS_IO_OPEN
from .widgets import lazy_expander


# ---------------------------------------------------------------------- settings files
def settings_json(page_name, url_path):
    """This page's settings (its URL query values) as a JSON settings file. Settings are
    public choices only: no data, no release."""
    own = {k: v for k, v in st.query_params.to_dict().items() if k.startswith(f"{page_name}_")}
    return json.dumps({"dpcore_settings": 1, "page": url_path, "settings": own}, indent=2,
                      ensure_ascii=False)


def parse_settings(data, page_name, url_path):
    """The settings of a settings file for this page; ValueError with a clear message on
    anything else (another page's file, a key of another page, a long or non-text value)."""
    obj = _load_json(data, "settings file")
    if not isinstance(obj, dict) or obj.get("dpcore_settings") != 1:
        raise ValueError("The file is not a settings file exported from this dashboard.")
    if obj.get("page") != url_path:
        raise ValueError(f"These settings belong to the page '{obj.get('page')}'; open that "
                         "page to load them.")
    settings = obj.get("settings")
    if not isinstance(settings, dict):
        raise ValueError("The settings file has no settings.")
    for key, value in settings.items():
        if not str(key).startswith(f"{page_name}_"):
            raise ValueError(f"Setting '{key}' is not a setting of this page.")
        if not isinstance(value, (str, int, float)) or len(str(value)) > CAPS["setting_chars"]:
            raise ValueError(f"Setting '{key}' must be a short text or number.")
    return {str(k): str(v) for k, v in settings.items()}


def render_settings_io(page_name, url_path):
    """Sidebar: download this page's settings, or load a settings file back (the page then
    starts from them, as from a shared link)."""
    if not page_name or page_name == "home":
        return
    with st.sidebar:
        box = lazy_expander("Settings file", SETTINGS_IO_OPEN)
    if box is None:
        return
    with box:
        st.download_button("Download this page's settings", settings_json(page_name, url_path),
                           file_name=f"{url_path}_settings.json", mime="application/json",
                           key="settings_download", on_click="ignore")
        up = st.file_uploader("Load settings (.json)", type=["json"], key="settings_upload")
        if up is not None and st.button("Apply these settings", key="settings_apply"):
            try:
                settings = parse_settings(up.getvalue(), page_name, url_path)
            except ValueError as exc:
                st.error(str(exc))
                return
            st.query_params.clear()
            st.query_params.update(settings)
            for key in [k for k in st.session_state if str(k).startswith(f"{page_name}_")]:
                del st.session_state[key]
            st.rerun()
