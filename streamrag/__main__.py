"""``python -m streamrag``: the same command line as ``streamrag``."""

from streamrag.cli import entry

if __name__ == "__main__":
    entry()
