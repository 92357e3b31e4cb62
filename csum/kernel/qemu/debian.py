"""Debian's packages of any architecture, fetched with apt through a private state under csum's cache.

* :func:`cache_dir`: where everything fetched or built is kept.
* :func:`apt`: ``apt-get`` / ``apt-cache`` with a private state for one
  (suite, architecture) pair; the host's apt configuration is not touched. :func:`update` refreshes its lists
  when they are older than :data:`LISTS_MAX_AGE`.
* :func:`download`: one package's current ``.deb`` (once), its SHA256 checked
  against the archive's ``Packages`` entry; :func:`extract` unpacks a ``.deb``
  once with ``dpkg-deb -x``.

Kernel images (csum.kernel.qemu.guest.fetch_debian) and the sysroot the runner
is linked against where no cross gcc is packaged (csum.kernel.qemu.toolchain)
come through here.
"""

from __future__ import annotations

import hashlib
import os
import re
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from ...errors import Code, CsumValueError

#: The file in an extracted tree that names the packages it holds.
MANIFEST = "csum-packages.txt"
#: Seconds a (suite, architecture)'s package lists are taken as current: an ``apt-get update`` costs 5-10 s a suite
#: (most of a cached kernel's start), and Debian's kernels change a few times a month.
LISTS_MAX_AGE = 6 * 3600


def cache_dir() -> Path:
    """Where runners, downloaded kernels and boot logs are kept: ``$CSUM_CACHE`` or ``~/.cache/csum``."""
    base = os.environ.get("CSUM_CACHE") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "csum")
    return Path(base)


def apt(suite: str, debian_arch: str, *args: str, cwd: Path | None = None) -> str:
    """apt-get/apt-cache with a private state for (suite, arch) under the cache directory."""
    root = cache_dir() / "apt" / f"{suite}-{debian_arch}"
    for sub in ("lists/partial", "archives/partial"):
        (root / sub).mkdir(parents=True, exist_ok=True)
    sources = root / "sources.list"
    sources.write_text(f"deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] "
                       f"http://deb.debian.org/debian {suite} main\n")
    (root / "status").touch()
    opts = [f"-oDir::State={root}", f"-oDir::State::status={root}/status", f"-oDir::State::Lists={root}/lists",
            f"-oDir::Cache={root}", f"-oDir::Etc::SourceList={sources}", f"-oDir::Etc::SourceParts={root}/none",
            f"-oDir::Etc::Preferences={root}/none", f"-oDir::Etc::PreferencesParts={root}/none",
            f"-oAPT::Architecture={debian_arch}", f"-oAPT::Architectures::={debian_arch}",
            "-oAcquire::Languages=none", "-oDebug::NoLocking=1", "-oAPT::Sandbox::User=root", "-q"]
    done = subprocess.run([args[0], *opts, *args[1:]], capture_output=True, text=True, cwd=cwd)
    if done.returncode:
        raise CsumValueError(f"--debian: {' '.join(args[:2])} failed: {done.stderr.strip()[-300:]}", code=Code.APT_FAILED)
    return done.stdout


def update(suite: str, debian_arch: str) -> None:
    """``apt-get update`` for (suite, arch), unless its lists were updated less than :data:`LISTS_MAX_AGE` ago."""
    stamp = cache_dir() / "apt" / f"{suite}-{debian_arch}" / "updated"
    try:
        if time.time() - stamp.stat().st_mtime < LISTS_MAX_AGE:
            return
    except FileNotFoundError:
        pass
    apt(suite, debian_arch, "apt-get", "update")
    stamp.parent.mkdir(parents=True, exist_ok=True)
    stamp.touch()


def depends(show: str) -> list[str]:
    """The package names of an ``apt-cache show`` entry's ``Depends`` (versions and alternatives dropped)."""
    match = re.search(r"^Depends: (.*)$", show, re.M)
    return [d.strip().split(" ")[0] for d in match.group(1).split(",")] if match else []


@dataclass(frozen=True)
class Deb:
    """A downloaded ``.deb`` with its provenance."""

    path: Path
    package: str
    version: str
    sha256: str
    suite: str
    arch: str
    #: the package names it depends on (:func:`depends`)
    depends: tuple[str, ...] = ()

    def describe(self) -> str:
        """``package version (sha256 ...)``, as vector headers name it."""
        return f"{self.package} {self.version} (sha256 {self.sha256})"


def download(suite: str, debian_arch: str, package: str) -> Deb:
    """Debian ``suite``'s current ``package`` for ``debian_arch`` (``all`` packages too), downloaded once.

    The lists must be current (:func:`update`). The file's
    SHA256 must be the one the archive's signed ``Packages`` index names.
    """
    show = apt(suite, debian_arch, "apt-cache", "show", "--no-all-versions", package)
    fields = dict(re.findall(r"^(Version|SHA256|Architecture): (.*)$", show, re.M))
    if not {"Version", "SHA256", "Architecture"} <= fields.keys():
        raise CsumValueError(f"--debian: apt-cache show {package} ({suite}, {debian_arch}) gives no version and "
                             "SHA256", code=Code.APT_FAILED)
    debs = cache_dir() / "debs"
    debs.mkdir(parents=True, exist_ok=True)
    name = f"{package}_{fields['Version'].replace(':', '%3a')}_{fields['Architecture']}.deb"
    if not (debs / name).is_file():
        apt(suite, debian_arch, "apt-get", "download", f"{package}:{debian_arch}", cwd=debs)
    digest = hashlib.sha256((debs / name).read_bytes()).hexdigest()
    if digest != fields["SHA256"]:
        raise CsumValueError(f"--debian: {name} has sha256 {digest}, the {suite} archive says {fields['SHA256']}",
                             code=Code.APT_FAILED)
    return Deb(debs / name, package, fields["Version"], digest, suite, debian_arch, tuple(depends(show)))


def extract(debs: list[Deb], tree: Path) -> Path:
    """``tree`` holding the files of every ``.deb`` in ``debs`` (``dpkg-deb -x``), made once and atomically.

    The tree's :data:`MANIFEST` names each package (:meth:`Deb.describe`, one a line).
    """
    if not tree.exists():
        tree.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(dir=tree.parent))
        for deb in debs:
            subprocess.run(["dpkg-deb", "-x", str(deb.path), str(tmp)], check=True)
        (tmp / MANIFEST).write_text("".join(f"{deb.describe()}\n" for deb in debs))
        os.replace(tmp, tree)
    return tree
