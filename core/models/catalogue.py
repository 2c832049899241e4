"""The models the app can fetch and run itself: few, and each said honestly.

Each names its Hugging Face repository and file, the file's size and sha256 (a download
is used only when both match), the memory it needs, its licence and languages, and what
was measured here with the app's eval. The sizes and sha256 are the hub's own (its LFS
pointers), and each was checked against a copy of the file here."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from core.i18n import N_

HUB = "https://huggingface.co"
MODELS_URL_ENV = "TRULYMEM_MODELS_URL"  # a mirror of the hub's file URLs (and the tests')
MODELS_DIR_ENV = "TRULYMEM_MODELS_DIR"


@dataclass(frozen=True)
class Model:
    id: str
    name: str
    repo: str
    file: str
    size: int  # bytes
    sha256: str
    ram_gb: float  # free memory it needs to run with the app's context
    licence: str
    languages: str
    tools: str  # how the app writes its memory with it, as measured
    measured: str  # what the app's eval measured with it here ("" when never measured)

    def url(self, base: str | None = None) -> str:
        """The file's address: `{base}/{repo}/resolve/main/{file}`, the hub's by default
        or the mirror $TRULYMEM_MODELS_URL names."""
        base = (base or source()).rstrip("/")
        return f"{base}/{self.repo}/resolve/main/{self.file}"


WRITTEN_AFTER = N_("the memory is written by a step after each answer (its own tool calls "
                   "are unreliable at this size)")
# `measured`: the app's eval (`trulymem --eval`, its conversation and generated ones, fixed
# and fresh seeds) with the app's own runtime on 2 cores, 2026-12-05; the default is the
# model that kept the person's facts best.
CATALOGUE = (
    Model(id="qwen2.5-coder-1.5b-instruct", name="Qwen2.5-Coder 1.5B Instruct (Q4_K_M)",
          repo="Qwen/Qwen2.5-Coder-1.5B-Instruct-GGUF",
          file="qwen2.5-coder-1.5b-instruct-q4_k_m.gguf", size=1_117_320_768,
          sha256="cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046",
          ram_gb=2.5, licence="Apache-2.0", languages=N_("English, Chinese and 90 more"),
          tools=WRITTEN_AFTER,
          measured=N_("in this app's tests it kept 88 to 100% of what the person said, "
                      "answered 65 of 72 questions from its memory and destroyed no true "
                      "fact; a short answer takes 2 to 3 seconds on 2 cores")),
    Model(id="qwen2.5-coder-0.5b-instruct", name="Qwen2.5-Coder 0.5B Instruct (Q4_K_M)",
          repo="Qwen/Qwen2.5-Coder-0.5B-Instruct-GGUF",
          file="qwen2.5-coder-0.5b-instruct-q4_k_m.gguf", size=491_400_064,
          sha256="1d9614638d18024d0fbb36575a15f1302a3adf044df10345688ec4f6e1c4ff32",
          ram_gb=1.0, licence="Apache-2.0", languages=N_("English, Chinese and 90 more"),
          tools=WRITTEN_AFTER,
          measured=N_("not recommended: in this app's tests it kept 19 to 47% of what the "
                      "person said, answered 14 of 36 questions and once destroyed a true "
                      "fact; for computers where the 1.5B does not fit")),
)
DEFAULT = CATALOGUE[0].id


def source() -> str:
    """Where models are fetched from: the hub, or the mirror $TRULYMEM_MODELS_URL names."""
    return (os.environ.get(MODELS_URL_ENV) or HUB).rstrip("/")


def find(model_id: str) -> Model | None:
    return next((m for m in CATALOGUE if m.id == model_id), None)


def models_folder() -> Path:
    """Where fetched models are kept: shared by every memory of this user (a model is a
    gigabyte), $TRULYMEM_MODELS_DIR or the XDG data folder."""
    if os.environ.get(MODELS_DIR_ENV):
        return Path(os.environ[MODELS_DIR_ENV]).expanduser()
    data = os.environ.get("XDG_DATA_HOME") or str(Path.home() / ".local" / "share")
    return Path(data) / "trulymem" / "models"
