"""A run folder as one self-contained HTML page (``streamrag report``).

:mod:`~streamrag.report.page` writes HTML (escaping, the inline style and script);
:mod:`~streamrag.report.sections` reads a run of each kind (analysis, simulation,
sweep, load) into the page's parts; :mod:`~streamrag.report.build` puts them together;
:mod:`~streamrag.report.pair` puts two simulation runs on one page, question by question.

``page.py`` writes HTML and ``sections.py`` reads a run into the page's parts; their
namesakes are the advice's page (``advice/page.py``, built with this one's writer) and a
scenario's sections (``simulator/sections.py``).
"""
