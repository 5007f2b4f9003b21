"""The store contract on PostgreSQL: the embedded store's own tests, run again on a real
PostgreSQL with pgvector (tests/pg_server.py).

The tests are not copied: every test of the modules below that needs nothing but a ``memory``
(or the ``filled`` memory of test_search) is collected here a second time, with ``memory`` an
open store on a new PostgreSQL database. Their DuckDB runs stay in their own modules, so both
backends pass the same tests: add / update / delete / restore / purge / history, sessions,
search with every mode and filter, links and context evolution, procedures, consolidation, the
conversation tables, mining jobs. ``pytest -m postgres`` runs them alone.
"""

from __future__ import annotations

import inspect

import pytest
import test_attributes_mining
import test_attributes_search
import test_consolidation
import test_conversation
import test_evolution
import test_exact_match
import test_indexes
import test_infer
import test_memory_api
import test_pool_joining
import test_procedures
import test_search

from localmem import Memory

pytestmark = pytest.mark.postgres

_MODULES = (
    test_memory_api,
    test_search,
    test_pool_joining,
    test_indexes,
    test_exact_match,
    test_evolution,
    test_procedures,
    test_consolidation,
    test_conversation,
    test_attributes_mining,
    test_attributes_search,
    test_infer,
)
_FIXTURES = {"memory", "filled", "monkeypatch", "embedder"}


def _parametrized(fn) -> set[str]:
    names: set[str] = set()
    for mark in getattr(fn, "pytestmark", []):
        if mark.name == "parametrize":
            names.update(n.strip() for n in str(mark.args[0]).split(","))
    return names


def _contract_tests():
    for module in _MODULES:
        for name, fn in vars(module).items():
            if not name.startswith("test_") or not inspect.isfunction(fn):
                continue
            params = set(inspect.signature(fn).parameters)
            uses_a_store = "memory" in params or "filled" in params
            if uses_a_store and params <= _FIXTURES | _parametrized(fn):
                yield f"{name}__{module.__name__.removeprefix('test_')}", fn


for _name, _fn in _contract_tests():
    globals()[_name] = _fn

filled = test_search.filled


@pytest.fixture
def memory(pg_url, embedder):
    """A fresh store on a new PostgreSQL database, with the shared MiniLM."""
    mem = Memory.open(pg_url, embedder=embedder)
    yield mem
    mem.close()
