"""Shared fixtures: the built-in catalog and a deployment factory."""

from __future__ import annotations

import os
import tempfile

# No test touches the network: the Hub is offline unless a test serves it itself (tests/test_hub.py)
os.environ["HF_HUB_OFFLINE"] = "1"
# Reports carry their date; a fixed one keeps the CLI's golden outputs byte-identical (reproducible builds)
os.environ["SOURCE_DATE_EPOCH"] = "1764633600"  # 2025-12-02 00:00 UTC
# The Workshop's class database: a file of this test run, never classroom.db in the checkout (servers the tests
# start inherit it; tests of the class view set their own per test)
os.environ.setdefault("EXPLORER_CLASS_DB", os.path.join(tempfile.mkdtemp(prefix="class-db-"), "classroom.db"))

import pytest

from core.spec.catalog import Catalog, load_catalog
from core.spec.deployment import Deployment
from core.spec.engine import EngineConfig, Parallelism
from core.spec.precision import kv_precision, weight_precision


@pytest.fixture(scope="session")
def catalog() -> Catalog:
    return load_catalog()


@pytest.fixture(scope="session")
def deploy(catalog):
    def make(model="llama-3.1-8b", gpu="h100-sxm", weights=None, kv="auto", tp=1, pp=1, **engine):
        spec = catalog.model(model)
        w = weight_precision(weights or spec.native_dtype)
        return Deployment(
            model=spec,
            gpu=catalog.gpu(gpu),
            weights=w,
            kv=kv_precision(kv, w),
            parallel=Parallelism(tp=tp, pp=pp),
            engine=EngineConfig(**engine),
        )

    return make


@pytest.fixture
def cli(capsys):
    """Run ``python -m core`` in-process: (exit code, stdout, stderr)."""
    from core.cli import main

    def run(*argv: str) -> tuple[int, str, str]:
        code = main(list(argv))
        out, err = capsys.readouterr()
        return code, out, err

    return run


# -- the class database (core/classroom): each store test runs on a SQLite file and on PostgreSQL -----------------
@pytest.fixture(scope="session")
def pg_server():
    from tests.classroom_pg import pg_bin, postgres_server

    if pg_bin() is None:
        yield None
        return
    with postgres_server() as server:
        yield server


@pytest.fixture(params=["sqlite", "postgresql"])
def target(request, tmp_path, pg_server, monkeypatch) -> dict:
    """Where a store opens: a fresh SQLite file, or a fresh database on the test server."""
    from tests.classroom_pg import require_postgres

    monkeypatch.delenv("DATABASE_URL", raising=False)
    if request.param == "sqlite":
        return {"path": str(tmp_path / "class.db")}
    require_postgres()
    return {"url": pg_server.new_database()}


@pytest.fixture
def store(target):
    from core.classroom.store import open_store

    opened = open_store(**target)
    yield opened
    opened.close()
