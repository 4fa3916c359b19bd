"""evalkit: the pure-Python core of the human-evaluation survey app (no Streamlit here; the app's ``ui`` package and
``pages`` render it).

Its modules sit on floors, and imports run one way, down (``.importlinter``, checked by ``lint-imports``); each
module may import only from the floors below its own (this package's ``__init__`` imports nothing):

1. the command line: :mod:`evalkit.__main__`
2. app services: :mod:`evalkit.queue` (the k-judgments queue), :mod:`evalkit.serve`; under them
   :mod:`evalkit.survey` (the flow), :mod:`evalkit.invite`, :mod:`evalkit.export`, :mod:`evalkit.charts`
3. study services: :mod:`evalkit.analysis` (the report), :mod:`evalkit.sampling` (the planner)
4. the study: :mod:`evalkit.config`, then :mod:`evalkit.checks`
5. the task kinds: :mod:`evalkit.tasks` (each kind a module, its analysis a module; their framework in
   ``tasks.base``, ``tasks.itemsource``, ``tasks.responses``, ``tasks.check_answers``)
6. the kinds' toolkit: :mod:`evalkit.resultkit` (codes, frames, formatting, charts), :mod:`evalkit.balance`; under
   them :mod:`evalkit.question`
7. core: :mod:`evalkit.items`, :mod:`evalkit.rating_items`, :mod:`evalkit.truncation`, :mod:`evalkit.datasets`,
   :mod:`evalkit.rng`, :mod:`evalkit.stats`, :mod:`evalkit.store`, :mod:`evalkit.text`, :mod:`evalkit.display`,
   :mod:`evalkit.missing`, :mod:`evalkit.login_limit`, :mod:`evalkit.config_keys`, :mod:`evalkit.datafiles`,
   :mod:`evalkit.spans`
"""
