"""The store conformance suite: the rules of docs/store.md as pytest tests any store can run.

Subclass `StoreConformance` in a test module and supply a ``store_factory`` fixture
that builds a new, empty store from an access policy, a clock and an expiry window::

    import pytest
    from memstore.testing import StoreConformance

    class TestMyStore(StoreConformance):
        @pytest.fixture
        def store_factory(self):
            return lambda access, clock, expiry: MyStore(access=access, clock=clock, expiry=expiry)

Tests of a capability the store does not list in ``store.capabilities`` are skipped as
"not applicable", never passed by pretending. `StoreStateMachine` (in
`memstore.testing.stateful`) adds random operation sequences checked against a model.
"""

from memstore.testing._creation import CreationTests
from memstore.testing._expiry import ExpiryTests
from memstore.testing._lifecycle import LifecycleTests
from memstore.testing._scope import ScopeTests
from memstore.testing._world import StoreFactory

__all__ = ["CreationTests", "ExpiryTests", "LifecycleTests", "ScopeTests", "StoreConformance", "StoreFactory"]


class StoreConformance(CreationTests, ScopeTests, LifecycleTests, ExpiryTests):
    """Every conformance test; subclass it and provide the ``store_factory`` fixture."""
