"""Both built-in backends pass the conformance suite (see tests/conftest.py for the factory)."""

from memstore.testing import StoreConformance


class TestBuiltinBackends(StoreConformance):
    pass
