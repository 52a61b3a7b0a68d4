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

import pytest

# The suites run in the user's own test files: their assertions are rewritten as the user's are, so
# a failure shows what was expected and what came back, not a bare AssertionError. Registered
# before the modules that hold them are imported (pytest rewrites a module as it is first imported).
pytest.register_assert_rewrite(
    *(f"memstore.testing.{name}" for name in ("_creation", "_expiry", "_lifecycle", "_scope", "_world", "stateful"))
)

from memstore.testing._creation import CreationTests  # noqa: E402
from memstore.testing._expiry import ExpiryTests  # noqa: E402
from memstore.testing._lifecycle import LifecycleTests  # noqa: E402
from memstore.testing._scope import ScopeTests  # noqa: E402
from memstore.testing._world import StoreFactory  # noqa: E402

__all__ = ["CreationTests", "ExpiryTests", "LifecycleTests", "ScopeTests", "StoreConformance", "StoreFactory"]


class StoreConformance(CreationTests, ScopeTests, LifecycleTests, ExpiryTests):
    """Every conformance test; subclass it and provide the ``store_factory`` fixture."""
