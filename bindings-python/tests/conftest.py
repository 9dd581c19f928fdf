"""Shared fixtures: where the shared vectors are (tests/vectors at the repository root, or
$LIBSNOWFLAKE_VECTORS), and the server helpers (tests/servers) on the import path."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parents[2]
VECTORS = Path(os.environ.get("LIBSNOWFLAKE_VECTORS", REPO / "tests" / "vectors"))
# The server helpers every language's tests use (tests/servers/README.md): `from servers import Servers`.
sys.path.insert(0, str(REPO / "tests" / "servers"))


def load_vectors(name: str) -> Any:
    path = VECTORS / f"{name}.json"
    if not path.exists():
        # A missing vector file is a failure, never a skip: every language must agree.
        raise FileNotFoundError(f"shared vectors not found: {path}")
    return json.loads(path.read_text())


@pytest.fixture(scope="session")
def repo() -> Path:
    return REPO
