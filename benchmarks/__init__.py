"""Speed and utility benchmarks, printed as tables (run with ``make bench``).

Each benchmark is a module ``benchmarks/bench_<name>.py`` with a ``main()`` function that prints
its table (or returns it: a returned value that is not ``None`` is printed as well).
"""
