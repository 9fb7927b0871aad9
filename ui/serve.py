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
    from streamlit.runtime.pages_manager import PagesManager
    from streamlit.web import cli

    from dpcore.settings import get_limits

    PagesManager.uses_pages_directory = False
    # Uploads must never touch disk: the web server spools multipart bodies above 1 MB to a
    # temporary file, so keep everything up to the upload limit in memory.
    MultiPartParser.spool_max_size = (get_limits().max_upload_mb + 1) * 2**20
    sys.argv = ["streamlit", "run", str(APP), *(sys.argv[1:] if argv is None else argv)]
    return cli.main()


if __name__ == "__main__":
    sys.exit(main())
