"""Where the test suite's time goes: CPU and wall seconds per test folder and the longest tests.

``python -m benchmarks.suite_times [pytest args]`` runs the suite as ``make test`` does
(``pytest -n 2 --dist worksteal``, or the arguments given) with ``benchmarks/_suite_plugin.py``
loaded, then prints

* the run: wall seconds, CPU seconds of the whole process tree (``os.times`` of the reaped
  children), and their ratio, the cores kept busy (2.0 is the most on the 2-core machine);
  and the machine's busy CPU seconds over the run (``/proc/stat``): they include what the
  process tree does not count, Chromium's renderers (reaped by init, not by the test run),
  and anything else the machine does meanwhile;
* per folder of ``tests/``: tests, CPU (own, children), summed test wall, and the folder's share
  of the summed test CPU (the baseline of the ratios: this run's total);
* the tests with the most CPU and the most wall.

Not a ``bench_*`` module: ``make bench`` does not run the whole suite. The summed test wall
exceeds the run's wall times the workers by the time spent outside tests
(start-up, collection, the tail where one worker is idle).

Environment: ``SUITE_TOP`` (rows in the two "most" lists, 15), ``SUITE_ROWS`` (a file to keep
the per-test rows in, as JSON lines).
"""

from __future__ import annotations

import collections
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_ARGS = ["-n", "2", "--dist", "worksteal", "-q", "-p", "no:cacheprovider"]
TOP = int(os.environ.get("SUITE_TOP", "15"))


def run(args):
    """Run pytest with the plugin; the per-test rows, the run's wall and CPU seconds, its code."""
    with tempfile.TemporaryDirectory() as folder:
        env = dict(os.environ, DPCORE_SUITE_LOG=folder)
        before, machine, start = os.times(), machine_cpu(), time.perf_counter()
        code = subprocess.call([sys.executable, "-m", "pytest", "-p", "benchmarks._suite_plugin",
                                *args], cwd=ROOT, env=env)
        after, wall = os.times(), time.perf_counter() - start
        machine = machine_cpu() - machine
        cpu = (after.children_user - before.children_user
               + after.children_system - before.children_system)
        rows = [json.loads(line) for path in Path(folder).glob("*.jsonl")
                for line in path.read_text(encoding="utf-8").splitlines()]
    if os.environ.get("SUITE_ROWS"):  # keep the per-test rows (JSON lines) for a closer look
        Path(os.environ["SUITE_ROWS"]).write_text(
            "".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return rows, wall, cpu, machine, code


def machine_cpu():
    """Busy CPU seconds of the whole machine since boot (``/proc/stat``: user, nice, system,
    irq, softirq, steal), or NaN where there is no ``/proc/stat``."""
    try:
        fields = Path("/proc/stat").read_text().splitlines()[0].split()[1:]
    except OSError:
        return float("nan")
    user, nice, system, _idle, _iowait, irq, softirq, steal = map(int, fields[:8])
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def folder_of(node_id):
    parts = node_id.split("::", 1)[0].split("/")
    return "/".join(parts[:2]) if len(parts) > 2 else parts[0]


def report(rows, wall, cpu, machine=float("nan")):
    total = sum(r["own"] + r["children"] for r in rows) or 1.0
    print(f"\nrun: {wall:.0f} s wall, {cpu:.0f} CPU s, {cpu / wall:.2f} cores busy; "
          f"{len(rows)} tests, {total:.0f} CPU s and {sum(r['wall'] for r in rows):.0f} s of "
          f"wall inside them; the machine: {machine:.0f} CPU s busy "
          f"({machine / wall:.2f} cores)\n")
    by = collections.defaultdict(lambda: [0, 0.0, 0.0, 0.0])
    for r in rows:
        cell = by[folder_of(r["id"])]
        cell[0] += 1
        cell[1] += r["own"]
        cell[2] += r["children"]
        cell[3] += r["wall"]
    print("| folder | tests | CPU s (own + children) | test wall s | share of CPU |")
    print("|---|---|---|---|---|")
    for name, (n, own, children, w) in sorted(by.items(), key=lambda kv: -(kv[1][1] + kv[1][2])):
        print(f"| {name} | {n} | {own + children:.0f} ({own:.0f} + {children:.0f}) | {w:.0f} | "
              f"{(own + children) / total:.2f} |")
    for title, key in (("CPU", lambda r: r["own"] + r["children"]), ("wall", lambda r: r["wall"])):
        print(f"\nmost {title}:")
        for r in sorted(rows, key=key, reverse=True)[:TOP]:
            print(f"  {r['own'] + r['children']:6.1f} CPU s {r['wall']:6.1f} s  {r['id']}")


def main(argv=None):
    args = list(sys.argv[1:] if argv is None else argv) or DEFAULT_ARGS
    started = time.strftime("%Y-%m-%d %H:%M")
    rows, wall, cpu, machine, code = run(args)
    print(f"\nsuite_times, {started}, pytest {' '.join(args)} (exit {code})")
    report(rows, wall, cpu, machine)
    return code


if __name__ == "__main__":
    sys.exit(main())
