"""From "Chat on this computer" to the first answer, on a fresh machine with the model's
file mirrored (no model hub is reachable here; a loopback mirror of the hub's URLs stands
in, at the line speed asked).

    python bench/local_first_answer_bench.py [--gguf FILE] [--rate MBIT] [--runtime DIR]
    python bench/local_first_answer_bench.py --quick   (CI: the small real model it assembled)

The steps are the packets the window's one button sends, through the seed API's
`BackendServer` on an empty data folder and an empty models folder: LOCAL_MODELS,
MODEL_GET (the download, checked), SET_CONFIG base_url "local" (the runtime started, the
model loaded), then PROCESS_MESSAGE, timed to its first streamed word and to its end.
The file is named in the catalogue under the default model's place (its own sha256, so
any GGUF will do). The last line is one summary a script can read.
"""

from __future__ import annotations

import argparse
import hashlib
import os
import queue
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from core.events import Event
from core.models import catalogue
from core.models.catalogue import Model
from core.models.runtime import server_program
from core.protocol.client import BackendClient
from core.protocol.packets import PacketType
from core.protocol.server import BackendServer
from core.testing.model_mirror import Mirror

ASKED = "Hi! I'm Ada and I grow tomatoes on my balcony. Any tip for them?"


def as_default(gguf: Path) -> Model:
    """The file as the catalogue's default model (its own checksum, computed here)."""
    digest = hashlib.sha256()
    with gguf.open("rb") as file:
        while block := file.read(1 << 22):
            digest.update(block)
    model = Model(id=catalogue.DEFAULT, name=gguf.name, repo="Bench/Model-GGUF",
                  file=gguf.name, size=gguf.stat().st_size, sha256=digest.hexdigest(),
                  ram_gb=0.5, licence="", languages="", tools="", measured="")
    catalogue.CATALOGUE = (model,)
    return model


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--gguf", type=Path, default=None)
    parser.add_argument("--rate", type=float, default=0.0,
                        help="the line in Mbit/s (0: as fast as loopback goes)")
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    if args.gguf:
        found = args.gguf
    elif os.environ.get("TRULYMEM_TEST_GGUF"):  # CI's, assembled from packages
        found = Path(os.environ["TRULYMEM_TEST_GGUF"])
    else:
        found = catalogue.models_folder() / catalogue.find(catalogue.DEFAULT).file
    if not found.is_file() or server_program() is None:
        print("local first answer bench: 0 runs, nothing to measure here (a GGUF file and "
              "the runtime are needed)")
        return 0
    model = as_default(found)
    mirror = Mirror.of(found.resolve(), model.repo, model.file)
    mirror.rate = args.rate * 1e6 / 8 if args.rate else None
    folder = Path(tempfile.mkdtemp(prefix="trulymem-first-answer-"))
    os.environ.update({"TRULYMEM_MODELS_URL": mirror.base,
                       "TRULYMEM_MODELS_DIR": str(folder / "models")})
    told: queue.Queue = queue.Queue()
    server = BackendServer(home=folder / "home", progress=lambda e, d: told.put((e, d)))
    server.start()
    client = BackendClient(server)
    try:
        return measure(client, told, model)
    finally:
        client.shutdown()
        mirror.close()


def measure(client: BackendClient, told: queue.Queue, model: Model) -> int:
    clicked = time.perf_counter()
    client.request(PacketType.LOCAL_MODELS)
    got = client.request(PacketType.MODEL_GET, {"model": model.id})
    if not got["success"]:
        print(f"local first answer bench: {got['error']}")
        return 1
    while True:
        event, data = told.get(timeout=3600)
        if event == Event.MODEL_DOWNLOAD and data["phase"] != "fetching":
            break
    if data["phase"] != "done":
        print(f"local first answer bench: the download ended {data['phase']}: "
              f"{data.get('error')}")
        return 1
    fetched = time.perf_counter()
    chosen = client.request(PacketType.SET_CONFIG, {"base_url": "local", "model": model.id})
    status = client.get_status()
    if not chosen["success"] or status.get("local_problem"):
        print(f"local first answer bench: {chosen.get('error') or status['local_problem']}")
        return 1
    started = time.perf_counter()
    first: list[float] = []

    def words(event: str, _data: dict) -> None:
        if event == Event.TEXT and not first:
            first.append(time.perf_counter())

    client.server.progress = lambda e, d: (words(e, d), told.put((e, d)))
    answer = client.process_message(ASKED, timeout=600)
    answered = time.perf_counter()
    if not answer["success"]:
        print(f"local first answer bench: the turn failed: {answer['error']}")
        return 1
    first_word = (first[0] if first else answered) - clicked
    size = model.size / 1e9
    print(f"from the click: {size:.2f} GB fetched and checked in {fetched - clicked:.1f} s, "
          f"the runtime ready in {started - fetched:.1f} s more, the first word of the "
          f"answer at {first_word:.1f} s, the whole answer at {answered - clicked:.1f} s")
    print(f"LOCAL FIRST ANSWER fetch {fetched - clicked:.1f} start {started - fetched:.1f} "
          f"first {first_word:.1f} whole {answered - clicked:.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
