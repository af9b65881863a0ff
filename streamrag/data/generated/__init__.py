"""CRAG-shaped data at any scale, from a seed.

- :mod:`~streamrag.data.generated.crag_shape` — the shape of CRAG, as counts;
- :mod:`~streamrag.data.generated.records` — records with pages (``streamrag generate``),
  written in a made-up language (``_lexicon``, ``_markup``, ``_questions``);
- :mod:`~streamrag.data.generated.synthetic_table` — a stabilization table from a seeded
  model of one question (``generate --table``).
"""
