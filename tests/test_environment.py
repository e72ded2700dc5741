"""The tests run against the dependencies pyproject.toml declares: a stale environment (a pin
changed since it was installed) fails here, by name, rather than as a puzzle elsewhere."""

from __future__ import annotations

import tomllib
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path

import pytest
from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
DECLARED = [Requirement(line) for line in PROJECT["dependencies"]]


@pytest.mark.parametrize("requirement", DECLARED, ids=lambda r: r.name)
def test_each_dependency_is_installed_as_declared(requirement: Requirement) -> None:
    try:
        installed = version(requirement.name)
    except PackageNotFoundError:
        pytest.fail(f"{requirement.name} is not installed: pip install -e '.[test]'")
    assert requirement.specifier.contains(installed, prereleases=True), (
        f"{requirement.name} {installed} is installed, pyproject.toml wants {requirement.specifier}: "
        "pip install -e '.[test]'"
    )
