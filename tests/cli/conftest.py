"""Fixtures of the command-line tests: a fresh working and state directory per test (see cli_helpers)."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_helpers import Cli, make_cli  # type: ignore[import-not-found]


@pytest.fixture
def cli(tmp_path: Path) -> Cli:
    return make_cli(tmp_path)


@pytest.fixture(scope="module")
def module_cli(tmp_path_factory: pytest.TempPathFactory) -> Cli:
    """A Cli shared by the tests of one module (for apps that several tests only read)."""
    return make_cli(tmp_path_factory.mktemp("cli"))
