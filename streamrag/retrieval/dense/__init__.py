"""Dense retrieval: cosine similarity of sentence embeddings, behind the ``Retriever`` role.

- :mod:`~streamrag.retrieval.dense.retriever` — ``DenseRetriever`` and ``exact_topk``;
- :mod:`~streamrag.retrieval.dense.pooled` — over a pool shared by every question;
- :mod:`~streamrag.retrieval.dense.embed` — the ``Embedder`` role and a torch-free double;
- :mod:`~streamrag.retrieval.dense.minilm` — all-MiniLM-L6-v2 (the ``dense`` extra);
- :mod:`~streamrag.retrieval.dense.embed_cache` — embeddings cached on disk.
"""
