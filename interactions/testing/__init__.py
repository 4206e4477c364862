"""Public test helpers: part of the product, for people who build on pi-recipes.

Import the submodules directly; this package re-exports nothing, so importing one helper never
pulls in another's dependencies (the store suite imports pytest):

- :mod:`interactions.testing.dialogs`: a scripted dialog UI and a plain tool context.
- :mod:`interactions.testing.counting`: a store that counts the calls made through it, by
  method (what one action costs in round trips).
- :mod:`interactions.testing.store_conformance`: the suite every store backend must pass
  (subclass :class:`~interactions.testing.store_conformance.StoreConformance` and provide a
  ``store`` fixture).

The in-memory store itself is :class:`interactions.store.MemoryStore`.
"""

__all__: list[str] = []
