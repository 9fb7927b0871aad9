"""The dashboard exactly as ``python -m ui.serve`` starts it, with the work costs fixed.

The pages estimate a request's time from per-unit costs measured on the machine and refuse a
request estimated above the work budget; measured under load, the browser tests' outcomes
would depend on the machine's speed. This server therefore runs with the suite's fixed costs
(``tests/_work_costs.py``, through the library's ``DPCORE_WORK_COSTS`` setting), whether or not
its parent set them; everything else is the product as shipped. (The classroom benchmark
measures the real server: it does not use this module.)
"""

from __future__ import annotations

import os
import sys

from dpcore.release import work as W
from tests._work_costs import pinned_setting

if __name__ == "__main__":
    os.environ[W.WORK_COSTS_ENV] = pinned_setting()
    import ui.serve

    sys.exit(ui.serve.main(sys.argv[1:]))
