"""A Debian package of the built folder, for Debian and Ubuntu: `packaging/build.py --deb`.

The folder goes to /opt/trulymem, `trulymem` on PATH is a link to its executable, and the
menu entry and the icons go where desktops look (/usr/share/applications, the hicolor
theme). dpkg owns every file, so `apt remove trulymem` leaves nothing of the program;
each person's data folder (~/.trulymem) is theirs and stays. The menu and icon caches are
refreshed by the triggers desktop-file-utils and hicolor-icon-theme declare on those
folders, so the package needs no scripts of its own.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from pathlib import Path

PACKAGE = "trulymem"
PREFIX = Path("opt") / PACKAGE
# What the program needs of the system. The libraries Qt's xcb platform plugin uses are
# in the bundle, but their packages bring the data they read (xkb-data's keyboard maps,
# fontconfig's configuration): the same list the README installs for a source checkout.
# The libraries the bundle leaves to the system (libc, GL, EGL, xcb, wayland) are added
# by `system_packages`, found from what the bundle's binaries link against.
DEPENDS = ("libegl1", "libgl1", "libxkbcommon0", "libxkbcommon-x11-0", "libfontconfig1",
           "libglib2.0-0", "libdbus-1-3", "libxcb-cursor0", "libxcb-icccm4", "libxcb-image0",
           "libxcb-keysyms1", "libxcb-randr0", "libxcb-render-util0", "libxcb-shape0",
           "libxcb-xkb1")
# Text needs a font; any of these is what a desktop has.
RECOMMENDS = "fonts-noto-core | fonts-dejavu-core, fonts-noto-cjk, fonts-noto-color-emoji"
DESCRIPTION = """\
AI companion whose memory is a graph on your machine
 TrulyMEM is a desktop chat with an AI model (DeepSeek, OpenAI or a local llama.cpp,
 Ollama or LM Studio server) that keeps what matters about you in a memory graph it
 reads and writes itself: facts, preferences and tasks, each with where it came from,
 browsable, correctable and undoable. Other AI apps can share the memory over MCP.
 .
 The data lives in ~/.trulymem and is left in place when the package is removed."""
COPYRIGHT = """\
Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/
Upstream-Name: TrulyMEM

Files: *
License: MIT
Comment: TrulyMEM itself. The program in /opt/trulymem bundles Python, Qt through
 PySide6 (LGPL-3.0) and the Python packages whose metadata, with their licenses, is in
 /opt/trulymem/_internal/*.dist-info.
"""


def architecture() -> str:
    return subprocess.run(["dpkg", "--print-architecture"], capture_output=True, text=True,
                          check=True).stdout.strip()


def _elf_files(folder: Path) -> list[Path]:
    found = []
    for path in folder.rglob("*"):
        if path.is_file() and not path.is_symlink():
            with path.open("rb") as handle:
                if handle.read(4) == b"\x7fELF":
                    found.append(path)
    return found


def system_packages(folder: Path) -> set[str]:
    """The packages of the libraries the bundle's binaries link against but do not carry:
    what the system must provide (libc6, libgl1, libxcb1 ...), libc6 with the newest
    symbol version any of them asks for."""
    bundled = {p.name for p in folder.rglob("*.so*")}
    needed: set[str] = set()
    glibc = (2, 0)
    for path in _elf_files(folder):
        dynamic = subprocess.run(["readelf", "-d", "-V", str(path)], capture_output=True,
                                 text=True, check=False).stdout
        needed |= {line.split("[", 1)[1].split("]", 1)[0] for line in dynamic.splitlines()
                   if "(NEEDED)" in line}
        glibc = max([glibc, *(tuple(int(n) for n in v.split("."))
                              for v in re.findall(r"\bGLIBC_([0-9]+(?:\.[0-9]+)+)", dynamic))])
    cache = subprocess.run(["ldconfig", "-p"], capture_output=True, text=True,
                           check=True).stdout
    where: dict[str, str] = {}
    for line in cache.splitlines()[1:]:
        name, _, target = line.strip().partition(" => ")
        where.setdefault(name.split(" ", 1)[0], target)
    packages = set()
    for library in sorted(needed - bundled):
        if library not in where:
            raise SystemExit(f"the bundle needs {library}, which this system does not have")
        # dpkg knows a file by the path its package ships, /lib or /usr/lib on a merged /usr
        candidates = {where[library], os.path.realpath(where[library])}
        candidates |= {c.removeprefix("/usr") for c in list(candidates)}
        owner = subprocess.run(["dpkg", "-S", *sorted(candidates)], capture_output=True,
                               text=True, check=False).stdout
        names = {line.split(":", 1)[0] for line in owner.splitlines() if ":" in line}
        if not names:
            raise SystemExit(f"no package owns {where[library]} (needed by the bundle)")
        packages |= names
    if "libc6" in packages:
        packages = (packages - {"libc6"}) | {f"libc6 (>= {'.'.join(map(str, glibc))})"}
    return packages


def installed_size_kib(root: Path) -> int:
    """What dpkg-gencontrol would put in Installed-Size: KiB, a block for each entry."""
    total = 0
    for path in root.rglob("*"):
        if path.is_relative_to(root / "DEBIAN"):
            continue
        size = path.lstat().st_size if path.is_file() or path.is_symlink() else 0
        total += max(1, -(-size // 1024))
    return total


def _copy(source: Path, target: Path, mode: int = 0o644) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)
    target.chmod(mode)


def _normalise_modes(root: Path) -> None:
    """Folders 0755, programs 0755, everything else 0644, whatever the build's umask."""
    for path in [root, *root.rglob("*")]:
        if path.is_symlink():
            continue
        if path.is_dir():
            path.chmod(0o755)
        else:
            path.chmod(0o755 if path.stat().st_mode & 0o111 else 0o644)


def stage(folder: Path, root: Path, *, assets: Path, resources: Path,
          icon_sizes: tuple[int, ...], version: str, arch: str) -> None:
    """The package's file tree in `root`, with DEBIAN/control."""
    if root.exists():
        shutil.rmtree(root)
    shutil.copytree(folder, root / PREFIX, symlinks=True)
    binary = root / "usr" / "bin" / PACKAGE
    binary.parent.mkdir(parents=True)
    binary.symlink_to(Path("/") / PREFIX / PACKAGE)  # the bundle finds itself through it
    share = root / "usr" / "share"
    _copy(resources / "trulymem.desktop", share / "applications" / "trulymem.desktop")
    icons = share / "icons" / "hicolor"
    _copy(resources / "trulymem.svg", icons / "scalable" / "apps" / "trulymem.svg")
    for size in icon_sizes:
        _copy(assets / f"trulymem-{size}.png", icons / f"{size}x{size}" / "apps" /
              "trulymem.png")
    (share / "doc" / PACKAGE).mkdir(parents=True)
    (share / "doc" / PACKAGE / "copyright").write_text(COPYRIGHT, encoding="utf-8")
    _normalise_modes(root)
    depends = sorted(set(DEPENDS) | system_packages(root / PREFIX))
    control = {
        "Package": PACKAGE,
        "Version": version,
        "Architecture": arch,
        "Maintainer": "TrulyMEM maintainers <maintainers@trulymem.invalid>",
        "Installed-Size": str(installed_size_kib(root)),
        "Depends": ", ".join(depends),
        "Recommends": RECOMMENDS,
        "Section": "utils",
        "Priority": "optional",
        "Description": DESCRIPTION,
    }
    (root / "DEBIAN").mkdir(mode=0o755)
    (root / "DEBIAN" / "control").write_text(
        "".join(f"{key}: {value}\n" for key, value in control.items()), encoding="utf-8")


def build(folder: Path, out: Path, *, assets: Path, resources: Path,
          icon_sizes: tuple[int, ...], version: str, work: Path) -> Path:
    """dist/trulymem_<version>_<arch>.deb from the onedir folder."""
    arch = architecture()
    name = f"{PACKAGE}_{version}_{arch}"
    root = work / name
    stage(folder, root, assets=assets, resources=resources, icon_sizes=icon_sizes,
          version=version, arch=arch)
    deb = out / f"{name}.deb"
    # zstd: 9 s against xz's 2 minutes here, for 141 MB against 127 MB. Every dpkg that can
    # run this build reads it (the bundle needs glibc 2.36, Debian 12; dpkg reads zstd
    # since Debian 12 and Ubuntu 18.04).
    subprocess.run(["dpkg-deb", "--root-owner-group", "-Zzstd", "-z9", "--build", str(root),
                    str(deb)], check=True, stdout=subprocess.DEVNULL)
    shutil.rmtree(root)
    return deb
