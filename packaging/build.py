"""Build the standalone TrulyMEM executable with PyInstaller.

    python packaging/build.py [--onefile] [--debug] [--smoke-test] [--deb]

Makes the icons (PNG sizes, ICO, ICNS) from resources/trulymem.svg and the Windows version
resource from the package metadata, runs packaging/trulymem.spec, prints the size of the
result against its budget (onedir 340 MB, onefile 150 MB on Linux) and, with --smoke-test,
runs the built program's own smoke test. With --deb (Debian, Ubuntu) it then makes
dist/trulymem_<version>_<arch>.deb of the folder (packaging/deb.py), reusing a folder built
since the sources last changed instead of building it again. Exits non-zero if any step
fails or a budget is exceeded. Works on Linux, macOS and Windows; run it on each to build
for each.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from importlib.metadata import version
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / "build"
ASSETS = BUILD / "assets"
DIST = ROOT / "dist"
# Linux budgets. The onedir one was set at 120 MB; Qt 6 as PySide6 ships it links against
# ICU, whose data library alone is 32 MB and cannot be left out, so the folder lands near
# 137 MB however much else is trimmed. Recall by meaning adds 123 MB: the embedding model
# (72 MB, 4-bit already, so it hardly compresses), numpy with its OpenBLAS (39 MB, which
# the engine and the index need), numkong and usearch (9 MB). `trulymem mcp` adds 13 MB:
# the MCP SDK with pydantic and uvicorn, and cryptography's bindings (12 MB), which the
# SDK imports at start (its request state) though the shared token never needs them.
# The model runtime (llama-server with its 14 CPU backends, stripped) adds 34 MB to
# the folder; the one-file build does not carry it. The check holds the sum.
BUDGET_MB = {"onedir": 340, "onefile": 150}
ICON_SIZES = (16, 24, 32, 48, 64, 128, 256, 512)
# Python warnings and tracebacks on stderr fail the smoke test, whatever the exit status.
BAD_OUTPUT = ("Traceback", "Warning:")


def make_icons() -> None:
    """Render the SVG at each size with Qt itself, so no imaging library is needed."""
    os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")
    from PySide6.QtCore import Qt  # noqa: PLC0415  (only the build needs Qt here)
    from PySide6.QtGui import QGuiApplication, QImage, QPainter  # noqa: PLC0415
    from PySide6.QtSvg import QSvgRenderer  # noqa: PLC0415

    _app = QGuiApplication.instance() or QGuiApplication([])
    renderer = QSvgRenderer(str(ROOT / "resources" / "trulymem.svg"))
    ASSETS.mkdir(parents=True, exist_ok=True)
    images = {}
    for size in ICON_SIZES:
        image = QImage(size, size, QImage.Format.Format_ARGB32)
        image.fill(Qt.GlobalColor.transparent)
        painter = QPainter(image)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        renderer.render(painter)
        painter.end()
        image.save(str(ASSETS / f"trulymem-{size}.png"))
        images[size] = image
    if not images[256].save(str(ASSETS / "trulymem.ico")):
        raise SystemExit("could not write trulymem.ico")
    if not images[512].save(str(ASSETS / "trulymem.icns")):
        raise SystemExit("could not write trulymem.icns")


def write_version_resource(number: str) -> None:
    """The Windows version resource, in PyInstaller's VSVersionInfo text form."""
    parts = [int(p) for p in number.split(".")[:3] if p.isdigit()] + [0, 0, 0]
    four = (*parts[:3], 0)
    text = f"""VSVersionInfo(
  ffi=FixedFileInfo(filevers={four}, prodvers={four}, mask=0x3f, flags=0x0, OS=0x40004,
                    fileType=0x1, subtype=0x0, date=(0, 0)),
  kids=[
    StringFileInfo([StringTable('040904B0', [
      StringStruct('CompanyName', 'TrulyMEM'),
      StringStruct('FileDescription', 'TrulyMEM, an AI companion with a memory graph'),
      StringStruct('FileVersion', '{number}'),
      StringStruct('InternalName', 'trulymem'),
      StringStruct('OriginalFilename', 'trulymem.exe'),
      StringStruct('ProductName', 'TrulyMEM'),
      StringStruct('ProductVersion', '{number}')])]),
    VarFileInfo([VarStruct('Translation', [1033, 1200])])
  ]
)
"""
    (ASSETS / "version_info.txt").write_text(text, encoding="utf-8")


def folder_size(path: Path) -> int:
    if path.is_file():
        return path.stat().st_size
    return sum(f.stat().st_size for f in path.rglob("*") if f.is_file() and not f.is_symlink())


def largest(folder: Path, count: int = 5) -> list[tuple[str, int]]:
    files = [f for f in folder.rglob("*") if f.is_file() and not f.is_symlink()]
    return [(f.name, f.stat().st_size)
            for f in sorted(files, key=lambda f: f.stat().st_size, reverse=True)[:count]]


def executable(kind: str) -> Path:
    """dist/onedir/trulymem/trulymem or dist/onefile/trulymem (.exe on Windows)."""
    suffix = ".exe" if sys.platform == "win32" else ""
    if kind == "onefile":
        return DIST / kind / f"trulymem{suffix}"
    return DIST / kind / "trulymem" / f"trulymem{suffix}"


def smoke_test(program: Path) -> None:
    started = time.perf_counter()
    result = subprocess.run([str(program), "--smoke-test"], capture_output=True, text=True,
                            timeout=300, check=False)
    print(result.stdout, end="")
    print(result.stderr, end="", file=sys.stderr)
    if result.returncode != 0:
        raise SystemExit(f"smoke test failed (exit status {result.returncode})")
    if any(marker in result.stderr for marker in BAD_OUTPUT):
        raise SystemExit("smoke test printed a warning or a traceback")
    print(f"smoke test of the built program: passed in {time.perf_counter() - started:.1f} s")


def start_times(program: Path, runs: int = 5) -> list[float]:
    """Launch to usable window, offscreen; also checks that the program writes only into
    its data folder, never into the bundle or the working directory."""
    bundle_before = sorted(p.name for p in program.parent.rglob("*"))
    times = []
    with tempfile.TemporaryDirectory() as home, tempfile.TemporaryDirectory() as cwd:
        env = {**os.environ, "QT_QPA_PLATFORM": "offscreen"}
        for _ in range(runs):
            started = time.perf_counter()
            result = subprocess.run([str(program), "--home", home, "--exit-when-ready"],
                                    capture_output=True, text=True, cwd=cwd, env=env,
                                    timeout=120, check=False)
            times.append(time.perf_counter() - started)
            if result.returncode != 0 or "ready" not in result.stdout:
                raise SystemExit(f"the built program did not start: {result.stderr}")
        if os.listdir(cwd):
            raise SystemExit(f"the program wrote into its working directory: {os.listdir(cwd)}")
        if not (Path(home) / "graph_memory.db").exists():
            raise SystemExit("the program did not keep its data in --home")
    if sorted(p.name for p in program.parent.rglob("*")) != bundle_before:
        raise SystemExit("the program wrote into its own bundle")
    return times


def fresh(program: Path) -> bool:
    """The built program is newer than everything it is built from."""
    if not program.exists():
        return False
    sources = [ROOT / "pyproject.toml", ROOT / "packaging" / "trulymem.spec",
               ROOT / "packaging" / "launcher.py"]
    for folder in ("app", "core", "resources"):
        sources += [p for p in (ROOT / folder).rglob("*")
                    if p.is_file() and "__pycache__" not in p.parts]
    return program.stat().st_mtime > max(p.stat().st_mtime for p in sources)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--onefile", action="store_true", help="one file instead of a folder")
    parser.add_argument("--debug", action="store_true", help="console and import logging")
    parser.add_argument("--smoke-test", action="store_true", help="run the built program")
    parser.add_argument("--deb", action="store_true",
                        help="then a .deb of the folder (reuses a fresh build)")
    args = parser.parse_args()
    if args.deb and args.onefile:
        parser.error("--deb packages the folder build, not --onefile")
    kind = "onefile" if args.onefile else "onedir"
    number = version("trulymem")
    started = time.perf_counter()
    make_icons()
    write_version_resource(number)
    if args.deb and not args.smoke_test and fresh(executable(kind)):
        print(f"reusing the build in {executable(kind).parent}, newer than its sources")
        make_deb(number)
        return
    env = {**os.environ, "TRULYMEM_BUILD_ASSETS": str(ASSETS),
           "TRULYMEM_BUILD_ONEFILE": "1" if args.onefile else "0",
           "TRULYMEM_BUILD_DEBUG": "1" if args.debug else "0"}
    subprocess.run([sys.executable, "-m", "PyInstaller", "--noconfirm", "--clean",
                    "--log-level", "WARN", "--distpath", str(DIST / kind),
                    "--workpath", str(BUILD / "pyinstaller"),
                    str(ROOT / "packaging" / "trulymem.spec")],
                   check=True, env=env, cwd=ROOT)
    program = executable(kind)
    if not args.onefile:
        ship_runtime(program.parent)
    size_mb = folder_size(program if args.onefile else program.parent) / 1e6
    budget = BUDGET_MB[kind]
    print(f"built TrulyMEM {number} ({kind}) in {time.perf_counter() - started:.0f} s: "
          f"{program}")
    print(f"size: {size_mb:.1f} MB (budget {budget} MB on Linux)")
    if not args.onefile:
        print("largest parts: " + ", ".join(f"{name} {size / 1e6:.1f} MB"
                                            for name, size in largest(program.parent)))
    if sys.platform.startswith("linux") and size_mb > budget:
        raise SystemExit(f"the {kind} build is over its {budget} MB budget")
    if args.smoke_test:
        smoke_test(program)
        times = start_times(program)
        print(f"launch to usable window: median {statistics.median(times) * 1000:.0f} ms, "
              f"max {max(times) * 1000:.0f} ms over {len(times)} runs (target < 3,000 ms)")
    if args.deb:
        make_deb(number)


def ship_runtime(folder: Path) -> None:
    """The app's own model runtime (`packaging/build_runtime.py`), beside the program as
    `runtime/`, where the frozen app looks for it; a build without it still runs, and
    says the runtime is missing when a model of its own is chosen."""
    sys.path.insert(0, str(ROOT))
    from core.models.runtime import runtime_folder, server_program  # noqa: PLC0415

    built = runtime_folder()
    if server_program(built) is None:
        print(f"no model runtime in {built}: the build ships without one")
        return
    shutil.copytree(built, folder / "runtime", symlinks=True, dirs_exist_ok=True)
    print(f"model runtime shipped: {folder_size(folder / 'runtime') / 1e6:.1f} MB")


def make_deb(number: str) -> None:
    sys.path.insert(0, str(ROOT / "packaging"))
    import deb  # noqa: PLC0415  (packaging/deb.py, beside this script)

    started = time.perf_counter()
    package = deb.build(executable("onedir").parent, DIST, assets=ASSETS,
                        resources=ROOT / "resources", icon_sizes=ICON_SIZES, version=number,
                        work=BUILD / "deb")
    print(f"built {package.relative_to(ROOT)} in {time.perf_counter() - started:.0f} s: "
          f"{package.stat().st_size / 1e6:.1f} MB")


if __name__ == "__main__":
    main()
