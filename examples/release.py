"""The demo recipe, as a file you can run and copy from a checkout::

    pi-recipes run examples/release.py "Release v1.4.0"

It is the recipe ``pi-recipes run --demo`` runs, which ships in the package: read it in
``recipes/demo.py``.
"""

from recipes.demo import recipe

__all__ = ["recipe"]
