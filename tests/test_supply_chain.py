"""What CI tests is what the image ships and what the README installs (issue 29, item 9).

The locks in ``requirements/`` pin every package, transitives included, with its hashes; the
ranges in pyproject.toml stay for library users. These tests catch a lock that drifted from
pyproject.toml, a pin without a hash, an image or a README command that installs around the lock,
and an environment that was not installed from it.
"""

from __future__ import annotations

import re
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from packaging.markers import Marker
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
PIN = re.compile(r"^([A-Za-z0-9._-]+)==([^\s;\\]+)\s*(?:;\s*([^\\]+?))?\s*\\?$")


def _lock(name: str) -> dict[str, list[tuple[str, str | None, list[str]]]]:
    """package -> [(version, marker, hashes)] from a ``uv pip compile --generate-hashes`` file."""
    pins: dict[str, list[tuple[str, str | None, list[str]]]] = {}
    current: list[str] | None = None
    for line in (ROOT / "requirements" / name).read_text(encoding="utf-8").splitlines():
        stripped = line.strip()
        if not stripped or stripped.startswith("#"):
            continue
        if match := PIN.match(stripped):
            current = []
            pins.setdefault(canonicalize_name(match[1]), []).append((match[2], match[3], current))
        elif stripped.startswith("--hash=sha256:") and current is not None:
            current.append(stripped.removeprefix("--hash=sha256:").rstrip(" \\"))
        else:
            pytest.fail(f"requirements/{name}: a line that is neither a pin nor a hash: {stripped!r}")
    return pins


APP = _lock("app.txt")
TEST = _lock("test.txt")


@pytest.mark.parametrize(
    ("lock", "requirements"),
    [
        (APP, PYPROJECT["project"]["dependencies"]),
        (TEST, PYPROJECT["project"]["dependencies"] + PYPROJECT["project"]["optional-dependencies"]["test"]),
    ],
    ids=["app", "test"],
)
def test_the_lock_pins_every_dependency_inside_pyprojects_range(lock, requirements):
    for text in requirements:
        requirement = Requirement(text)
        pins = lock.get(canonicalize_name(requirement.name))
        assert pins, f"{requirement.name} is in pyproject.toml but not in the lock"
        for version, _marker, _hashes in pins:
            assert requirement.specifier.contains(version, prereleases=True), (
                f"{requirement.name}=={version} is outside pyproject.toml's {requirement.specifier}"
            )


@pytest.mark.parametrize("lock", [APP, TEST], ids=["app", "test"])
def test_every_pin_carries_sha256_hashes(lock):
    for name, pins in lock.items():
        for version, _marker, hashes in pins:
            assert hashes, f"{name}=={version} has no hash"
            assert all(re.fullmatch(r"[0-9a-f]{64}", h) for h in hashes), f"{name}=={version}: a malformed hash"


def test_the_image_ships_the_versions_ci_tested():
    for name, pins in APP.items():
        assert name in TEST, f"{name} is in the image's lock but not in CI's"
        assert [(v, m) for v, m, _ in pins] == [(v, m) for v, m, _ in TEST[name]], f"{name}: the locks disagree"


def test_this_environment_was_installed_from_the_lock():
    """CI installs requirements/test.txt with --require-hashes: each package the lock names for this Python and
    platform is installed at exactly that version (a test run on other versions tests something else)."""
    wrong = []
    for name, pins in TEST.items():
        for version, marker, _hashes in pins:
            if marker and not Marker(marker).evaluate():
                continue
            try:
                installed = metadata.version(name)
            except metadata.PackageNotFoundError:
                wrong.append(f"{name} not installed (lock: {version})")
                continue
            if installed != version:
                wrong.append(f"{name} {installed} installed, lock {version}")
    assert not wrong, "the environment differs from requirements/test.txt: " + "; ".join(wrong)


def _commands(text: str) -> list[str]:
    """Shell commands of a file, continuation lines joined and pip's -q dropped."""
    joined = text.replace("\\\n", " ")
    return [" ".join(line.replace(" -q ", " ").split()) for line in joined.splitlines() if "pip install" in line]


def test_readme_ci_and_image_install_through_the_hash_locks():
    readme = _commands((ROOT / "README.md").read_text(encoding="utf-8"))
    ci = _commands((ROOT / ".ci" / "run").read_text(encoding="utf-8"))
    quick = [c for c in readme if c.startswith("python3 -m venv .venv")]
    assert len(quick) == 2, "the Quick start has one install-and-launch and one install-and-test command"
    assert any("requirements/app.txt" in c and c.endswith("streamlit run app.py") for c in quick)
    assert ci == [c for c in quick if "requirements/test.txt" in c], "CI runs the README's test command"
    for command in quick:
        assert "--require-hashes" in command and "--no-deps -e ." in command
    dockerfile = (ROOT / "deploy" / "Dockerfile").read_text(encoding="utf-8")
    assert re.search(r"python:3\.11-slim@sha256:[0-9a-f]{64}", dockerfile), "the base image is pinned by digest"
    image = _commands(dockerfile)
    assert image and "--require-hashes -r requirements/app.txt" in image[0] and "--no-deps -e ." in image[0]
