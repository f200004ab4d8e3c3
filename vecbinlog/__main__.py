"""``python -m vecbinlog``: the same command line as the ``vecbinlog`` script."""

from .cli import run

if __name__ == "__main__":
    run()
