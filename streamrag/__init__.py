"""streamrag: tool-intent stabilization in streaming RAG, measured and simulated.

The package root stays import-light: submodules are imported where they are used so
that ``streamrag --help`` and ``import streamrag`` are instant.
"""

__version__ = "0.1.0"

__all__ = ["__version__"]
