"""Start the dashboard: ``python -m ui.serve [streamlit options]`` (what ``make run`` does).

Same as ``streamlit run app.py``, with one fix. ``app.py`` builds its navigation with
``st.navigation`` while the page files live in ``pages/``; a fresh Streamlit server treats a
``pages/`` directory as a legacy multipage app until the first ``st.navigation`` call, so a
shared page link opened before anyone loaded the landing page ran that page alone, without the
app's sidebar and titles. Declaring navigation mode before the server starts removes that
window. It also keeps uploads in memory up to the upload limit (the web server would otherwise
spool bodies above 1 MB to a temporary file). (Streamlit is pinned in requirements.txt;
tests/app/test_serve.py checks the attributes used.)
"""

from __future__ import annotations

import sys
from pathlib import Path

APP = Path(__file__).resolve().parent.parent / "app.py"


def main(argv=None):
    from starlette.formparsers import MultiPartParser
    from streamlit import config
    from streamlit.runtime.pages_manager import PagesManager
    from streamlit.web import cli

    from ui.caps import MIB, upload_limit_mb

    PagesManager.uses_pages_directory = False

    def keep_uploads_in_memory():
        # Uploads must never touch disk: the web server spools multipart bodies above 1 MB to
        # a temporary file, so keep everything up to the upload limit in memory. The limit is
        # read once Streamlit has parsed its configuration with the command line
        # (server.maxUploadSize from .streamlit/config.toml, STREAMLIT_SERVER_MAX_UPLOAD_SIZE
        # or --server.maxUploadSize).
        MultiPartParser.spool_max_size = (upload_limit_mb() + 1) * MIB

    config.on_config_parsed(keep_uploads_in_memory, force_connect=True)
    sys.argv = ["streamlit", "run", str(APP), *(sys.argv[1:] if argv is None else argv)]
    return cli.main()


if __name__ == "__main__":
    sys.exit(main())
