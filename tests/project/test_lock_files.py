"""The lock files (requirements.lock for the image, requirements-dev.lock for development and CI) pin every package
with its hashes and cover every dependency pyproject.toml names, so a dependency added or tightened without
re-locking fails here rather than in a Docker build. How to re-lock: docs/reproducible-installs.md."""

from __future__ import annotations

import importlib.metadata
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

import pytest
from packaging.markers import default_environment
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name
from packaging.version import Version

ROOT = Path(__file__).resolve().parents[2]
RUNTIME_LOCK = ROOT / "requirements.lock"
DEV_LOCK = ROOT / "requirements-dev.lock"
LOCKS = (RUNTIME_LOCK, DEV_LOCK)
HOW_TO_RELOCK = ROOT / "docs" / "reproducible-installs.md"
# The locks are made for the image: CPython 3.12 on Linux x86-64 (python:3.12-slim).
# (default_environment() is a TypedDict of strings; markers take a plain dict of them.)
TARGET: dict[str, str] = {
    **cast("dict[str, str]", default_environment()), "python_version": "3.12", "python_full_version": "3.12.0",
    "sys_platform": "linux", "platform_system": "Linux", "platform_machine": "x86_64",
    "implementation_name": "cpython", "platform_python_implementation": "CPython", "os_name": "posix"}


@dataclass(frozen=True)
class Pin:
    name: str
    version: str
    hashes: tuple[str, ...]


def read_lock(path: Path) -> dict[str, Pin]:
    """The pins of a pip requirements file in hash-checking form, keyed by canonical name; anything that is not a
    `name==version --hash=...` entry (an unpinned range, a URL, an editable, a nested -r) is an error."""
    text = re.sub(r"\\\n", " ", path.read_text(encoding="utf-8"))
    pins: dict[str, Pin] = {}
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.split(" #", 1)[0].strip() if not raw.lstrip().startswith("#") else ""
        if not line:
            continue
        entry, *options = line.split(" --")
        hashes = tuple(o.split("=", 1)[1].strip() for o in options if o.startswith("hash="))
        if entry.startswith("-") or len(hashes) != len(options):
            raise ValueError(f"{path.name}:{number}: not a pinned, hashed package: {raw.strip()[:80]}")
        requirement = Requirement(entry.strip())
        specs = list(requirement.specifier)
        spec = specs[0] if len(specs) == 1 else None
        if spec is None or spec.operator != "==" or "*" in spec.version or requirement.url:
            raise ValueError(f"{path.name}:{number}: {requirement} is not pinned to one version")
        if not hashes or not all(re.fullmatch(r"sha256:[0-9a-f]{64}", h) for h in hashes):
            raise ValueError(f"{path.name}:{number}: {requirement.name} has no sha256 hash")
        name = canonicalize_name(requirement.name)
        if name in pins:
            raise ValueError(f"{path.name}:{number}: {name} is pinned twice")
        pins[name] = Pin(name, spec.version, hashes)
    return pins


def declared(pyproject: dict[str, Any], extras: tuple[str, ...] = ()) -> list[Requirement]:
    """What pyproject.toml asks for on the target: the dependencies, the build backend, and the named extras."""
    names = [*pyproject["project"]["dependencies"], *pyproject["build-system"]["requires"]]
    for extra in extras:
        names += pyproject["project"]["optional-dependencies"][extra]
    wanted = [Requirement(n) for n in names]
    return [r for r in wanted if r.marker is None or r.marker.evaluate({**TARGET, "extra": ""})]


def uncovered(requirements: list[Requirement], pins: dict[str, Pin]) -> list[str]:
    """Each requirement the lock leaves out, or pins to a version outside the requirement's range."""
    problems = []
    for requirement in requirements:
        pin = pins.get(canonicalize_name(requirement.name))
        if pin is None:
            problems.append(f"{requirement} is not in the lock")
        elif not requirement.specifier.contains(pin.version, prereleases=True):
            problems.append(f"{requirement} but the lock pins {pin.version}")
    return problems


def pyproject() -> dict[str, Any]:
    return tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))


@pytest.mark.parametrize("lock", LOCKS, ids=lambda p: p.name)
def test_every_entry_is_one_pinned_version_with_hashes(lock: Path) -> None:
    pins = read_lock(lock)  # raises on the first entry pip --require-hashes would refuse
    assert len(pins) > 40, "the whole dependency tree, not just the direct dependencies"


@pytest.mark.parametrize(("lock", "extras"), [(RUNTIME_LOCK, ()), (DEV_LOCK, ("dev",))], ids=["runtime", "dev"])
def test_the_lock_covers_every_dependency_in_pyproject(lock: Path, extras: tuple[str, ...]) -> None:
    assert uncovered(declared(pyproject(), extras), read_lock(lock)) == [], \
        "pyproject.toml changed without re-locking: see docs/reproducible-installs.md"


def test_the_dev_lock_is_the_runtime_lock_plus_the_dev_tools() -> None:
    """Tests run against the versions the image ships."""
    runtime, dev = read_lock(RUNTIME_LOCK), read_lock(DEV_LOCK)
    assert set(runtime) <= set(dev)
    assert {n: p.version for n, p in runtime.items() if dev[n].version != p.version} == {}


def test_every_locked_package_finds_its_own_dependencies_in_the_lock() -> None:
    """Closure, from the metadata of the packages installed here at the locked version: pip --require-hashes
    refuses a lock that misses a transitive dependency, so a hand-edited lock would break the Docker build."""
    pins = read_lock(RUNTIME_LOCK)
    checked = 0
    for pin in pins.values():
        try:
            installed = importlib.metadata.distribution(pin.name)
        except importlib.metadata.PackageNotFoundError:
            continue
        if Version(installed.version) != Version(pin.version):
            continue
        checked += 1
        needed = [Requirement(r) for r in installed.requires or []]
        needed = [r for r in needed if r.marker is None or r.marker.evaluate({**TARGET, "extra": ""})]
        assert uncovered(needed, pins) == [], f"{pin.name} {pin.version} needs more than the lock holds"
    assert checked >= len(pins) // 2, "too few locked packages are installed here to check the closure"


def test_a_dependency_added_without_relocking_is_caught() -> None:
    """The coverage check fails for the two ways pyproject.toml can move ahead of the lock."""
    changed = pyproject()
    changed["project"]["dependencies"] = [*changed["project"]["dependencies"], "some-new-sdk>=1.0"]
    pins = read_lock(RUNTIME_LOCK)
    assert uncovered(declared(changed), pins) == ["some-new-sdk>=1.0 is not in the lock"]
    numpy = pins["numpy"].version
    changed["project"]["dependencies"] = [f"numpy>{numpy}"]
    assert uncovered(declared(changed), pins) == [f"numpy>{numpy} but the lock pins {numpy}"]


def test_an_unhashed_or_unpinned_entry_is_refused(tmp_path: Path) -> None:
    for text in ("numpy==2.0.0\n", "numpy>=2 \\\n    --hash=sha256:" + "a" * 64 + "\n", "-e .\n",
                 "numpy @ https://example.org/numpy.whl \\\n    --hash=sha256:" + "a" * 64 + "\n"):
        lock = tmp_path / "requirements.lock"
        lock.write_text(text)
        with pytest.raises(ValueError):
            read_lock(lock)


@pytest.mark.parametrize("lock", LOCKS, ids=lambda p: p.name)
def test_the_command_that_made_each_lock_is_the_documented_one(lock: Path) -> None:
    """The header of each lock names the command that made it; the page on re-locking gives that command."""
    header = lock.read_text(encoding="utf-8").splitlines()[:2]
    assert header[0].startswith("# This file was autogenerated by uv")
    command = header[1].lstrip("#").strip()
    assert f"-o {lock.name}" in command and "--generate-hashes" in command
    assert command in HOW_TO_RELOCK.read_text(encoding="utf-8")
