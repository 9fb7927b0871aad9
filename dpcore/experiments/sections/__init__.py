"""The sections of the reproduction report, one module per paper.

Each ``sec_*`` function takes the report's configuration (:data:`dpcore.experiments.report.FULL`
or :data:`~dpcore.experiments.report.QUICK`), the report's seed and ``n_jobs``, runs its studies
and returns a :class:`~dpcore.experiments.sections._common.Section`: figures, the tables written
as CSV, the comparison with the paper and the qualitative facts checked.

* :mod:`.p002` -- paper 002 (geodesic regression): figs. 1, 2, 3, 5, 6, 7, 8 and 9-10;
* :mod:`.p001` -- paper 001 (Fréchet means): fig. 1;
* :mod:`.p004` -- paper 004 (Gaussian differential privacy): fig. 1;
* :mod:`.wine` -- papers 000 / 003 (linear regression on the Wine Quality data): table 1;
* :mod:`._common` -- the :class:`Section` record, per-section seeds, comparison rows and the
  noise allowance :data:`NOISE_Z` of the trend facts.

:mod:`dpcore.experiments.report` lists them in :data:`~dpcore.experiments.report.SECTIONS`,
runs them and writes the HTML.
"""
