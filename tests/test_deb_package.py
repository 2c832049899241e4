"""The .deb's layout and control file, made from a stand-in for the built folder (a real
program, /bin/true, as its executable) so it runs in seconds; CI installs the real one
(packaging/deb_check.sh)."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "packaging"))
import deb  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which("dpkg-deb") is None or shutil.which("readelf")
                                is None, reason="Debian's dpkg-deb and binutils' readelf")


@pytest.fixture
def package(tmp_path):
    folder = tmp_path / "dist" / "trulymem"
    (folder / "_internal").mkdir(parents=True)
    shutil.copy("/bin/true", folder / "trulymem")
    (folder / "_internal" / "data.txt").write_text("bundled")
    assets = tmp_path / "assets"
    assets.mkdir()
    for size in (16, 256):
        (assets / f"trulymem-{size}.png").write_bytes(b"\x89PNG")
    return deb.build(folder, tmp_path, assets=assets, resources=ROOT / "resources",
                     icon_sizes=(16, 256), version="1.2.3", work=tmp_path / "work")


def test_the_package_holds_the_folder_the_command_the_entry_and_the_icons(package):
    assert package.name == f"trulymem_1.2.3_{deb.architecture()}.deb"
    listing = subprocess.run(["dpkg-deb", "--contents", str(package)], capture_output=True,
                             text=True, check=True).stdout.splitlines()
    entries = {line.split()[5].removeprefix("."): line for line in listing}
    assert entries["/opt/trulymem/trulymem"].startswith("-rwxr-xr-x root/root")
    assert entries["/opt/trulymem/_internal/data.txt"].startswith("-rw-r--r-- root/root")
    assert entries["/usr/bin/trulymem"].endswith("-> /opt/trulymem/trulymem")
    for path in ("/usr/share/applications/trulymem.desktop",
                 "/usr/share/icons/hicolor/scalable/apps/trulymem.svg",
                 "/usr/share/icons/hicolor/16x16/apps/trulymem.png",
                 "/usr/share/icons/hicolor/256x256/apps/trulymem.png",
                 "/usr/share/doc/trulymem/copyright"):
        assert entries[path].startswith("-rw-r--r-- root/root"), path


def test_the_control_file_names_what_the_system_must_provide(package):
    def field(name: str) -> str:
        return subprocess.run(["dpkg-deb", "--field", str(package), name],
                              capture_output=True, text=True, check=True).stdout.strip()

    assert field("Package") == "trulymem" and field("Version") == "1.2.3"
    assert field("Architecture") == deb.architecture()
    depends = field("Depends").split(", ")
    assert {"libxkbcommon0", "libxcb-cursor0", "libfontconfig1"} <= set(depends)
    assert any(d.startswith("libc6 (>= 2.") for d in depends)  # /bin/true links libc
    assert int(field("Installed-Size")) > 0
    assert field("Description").startswith("AI companion")
