"""Run every ``benchmarks/bench_*.py`` module that defines ``main()``: ``python -m benchmarks``."""

import importlib
import pkgutil
import sys
import time
import traceback

import benchmarks


def discover() -> list[str]:
    """Names of the benchmark modules in this package, sorted."""
    return sorted(
        f"{benchmarks.__name__}.{info.name}"
        for info in pkgutil.iter_modules(benchmarks.__path__)
        if info.name.startswith("bench_") and not info.ispkg
    )


def run(module_names: list[str]) -> int:
    """Import and run each module's ``main()``; return the number of benchmarks that failed."""
    ran = failed = 0
    for name in module_names:
        module = importlib.import_module(name)
        main = getattr(module, "main", None)
        if not callable(main):
            print(f"skipping {name}: no main() function")
            continue
        ran += 1
        print(f"== {name} ==", flush=True)
        start = time.perf_counter()
        try:
            table = main()
        except Exception:
            failed += 1
            traceback.print_exc()
            print(f"!! {name} failed\n", flush=True)
            continue
        if table is not None:
            print(table.to_string() if hasattr(table, "to_string") else table)
        print(f"({name} took {time.perf_counter() - start:.1f} s)\n", flush=True)
    if ran == 0:
        print("No benchmarks yet: add benchmarks/bench_<name>.py modules with a main() function.")
    return failed


if __name__ == "__main__":
    sys.exit(1 if run(discover()) else 0)
