"""Sync benchmark: facts written on one device appear on another, carried by two real
Syncthing instances on loopback between two folders.

    python bench/sync_bench.py [--facts 10000] [--carrier syncthing|copy]

Device A (its own data folder and Syncthing folder) remembers `--facts` facts, 50 per
change as a turn writes them; its sync writes one sealed file; Syncthing carries it to
device B's folder; B applies it. Printed: how long writing, carrying and applying took,
the file's size and the bytes per fact, and that B ended with every fact. Without the
`syncthing` program (Debian: `apt install syncthing`) the file is copied instead, and the
carrying time is then the copy's.
"""

from __future__ import annotations

import argparse
import json
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from core.store import GraphStore  # noqa: E402
from core.sync.service import DeviceSync  # noqa: E402
from core.tools import ToolExecutor  # noqa: E402

FOLDER_ID = "trulymem"


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Syncthing:
    """One Syncthing instance with its own home, listening on loopback only (no
    discovery, relays or NAT), sharing one folder with one peer."""

    def __init__(self, home: Path, folder: Path) -> None:
        self.home, self.folder = home, folder
        subprocess.run(["syncthing", "generate", f"--home={home}", "--no-default-folder"],
                       check=True, capture_output=True)
        self.device = subprocess.run(["syncthing", "serve", f"--home={home}",
                                      "--device-id"], check=True, capture_output=True,
                                     text=True).stdout.strip()
        self.port, self.gui, self.key = free_port(), free_port(), "bench-key"
        self.process: subprocess.Popen | None = None

    def configure(self, peer: Syncthing) -> None:
        path = self.home / "config.xml"
        tree = ET.parse(path)
        root = tree.getroot()
        for old in root.findall("folder"):
            root.remove(old)
        folder = ET.SubElement(root, "folder", id=FOLDER_ID, label=FOLDER_ID,
                               path=str(self.folder), type="sendreceive",
                               rescanIntervalS="3600", fsWatcherEnabled="true",
                               fsWatcherDelayS="1")
        for device in (self.device, peer.device):
            ET.SubElement(folder, "device", id=device)
        peer_entry = ET.SubElement(root, "device", id=peer.device, name="peer",
                                   compression="metadata")
        ET.SubElement(peer_entry, "address").text = f"tcp://127.0.0.1:{peer.port}"
        gui = root.find("gui")
        gui.find("address").text = f"127.0.0.1:{self.gui}"
        gui.find("apikey").text = self.key
        options = root.find("options")
        for name, value in (("listenAddress", f"tcp://127.0.0.1:{self.port}"),
                            ("globalAnnounceEnabled", "false"),
                            ("localAnnounceEnabled", "false"), ("relaysEnabled", "false"),
                            ("natEnabled", "false"), ("startBrowser", "false"),
                            ("urAccepted", "-1"), ("crashReportingEnabled", "false"),
                            ("autoUpgradeIntervalH", "0")):
            element = options.find(name)
            if element is None:
                element = ET.SubElement(options, name)
            element.text = value
        tree.write(path)

    def start(self) -> None:
        self.process = subprocess.Popen(
            ["syncthing", "serve", f"--home={self.home}", "--no-browser", "--no-restart",
             "--no-default-folder"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def rest(self, path: str, method: str = "GET") -> dict:
        request = urllib.request.Request(f"http://127.0.0.1:{self.gui}{path}", method=method,
                                         headers={"X-API-Key": self.key})
        with urllib.request.urlopen(request, timeout=5) as answer:
            body = answer.read()
        return json.loads(body) if body else {}

    def wait_connected(self, peer: Syncthing, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                connections = self.rest("/rest/system/connections")["connections"]
                if connections.get(peer.device, {}).get("connected"):
                    return
            except OSError:
                pass
            time.sleep(0.2)
        raise SystemExit("the two Syncthing instances did not connect")

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(timeout=30)


def remember(store: GraphStore, facts: int) -> None:
    tools = ToolExecutor(store)
    for first in range(0, facts, 50):
        result = tools.execute("memory_commit", {"triplets": [
            {"subject": f"Person {n}", "relation": "lives in", "object": f"City {n % 97}"}
            for n in range(first, min(first + 50, facts))]}, actor="user")
        assert result["success"], result


def carry(carrier: str, source: Path, target: Path, instances: list[Syncthing]) -> float:
    """Seconds until the file is whole in the other device's folder."""
    started = time.perf_counter()
    if carrier == "copy":
        target.parent.mkdir(exist_ok=True)
        shutil.copyfile(source, target)
    else:
        instances[0].rest(f"/rest/db/scan?folder={FOLDER_ID}", "POST")
        while not (target.exists() and target.stat().st_size == source.stat().st_size):
            time.sleep(0.05)
    return time.perf_counter() - started


def measure(args: argparse.Namespace, stores: dict[str, GraphStore],
            syncs: dict[str, DeviceSync], folders: dict[str, Path],
            instances: list[Syncthing]) -> int:
    started = time.perf_counter()
    remember(stores["a"], args.facts)
    remembered = time.perf_counter() - started
    started = time.perf_counter()
    wrote = syncs["a"].write()
    writing = time.perf_counter() - started
    device = syncs["a"].status()["device"]
    carrying = carry(args.carrier, folders["a"] / device / wrote["file"],
                     folders["b"] / device / wrote["file"], instances)
    started = time.perf_counter()
    applied = syncs["b"].apply_all()
    applying = time.perf_counter() - started
    arrived = stores["b"].query_one("SELECT count(*) AS n FROM edges")["n"]
    print(f"{args.facts:,} facts remembered on device A in {remembered:.1f} s "
          f"({args.facts // 50} changes)")
    print(f"writing the sync file: {writing * 1000:.0f} ms, {wrote['wrote']:,} rows, "
          f"{wrote['bytes']:,} bytes ({wrote['bytes'] / args.facts:.0f} bytes per fact,"
          " sealed and compressed)")
    print(f"carrying it ({args.carrier}): {carrying * 1000:.0f} ms")
    print(f"applying it on device B: {applying * 1000:.0f} ms, "
          f"{applied['applied_rows']:,} rows, {applied['conflicts']} conflicts")
    print(f"device B holds {arrived:,} of {args.facts:,} facts")
    return 0 if arrived == args.facts and not applied["refused"] else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--facts", type=int, default=10_000)
    parser.add_argument("--carrier", choices=("syncthing", "copy"),
                        default="syncthing" if shutil.which("syncthing") else "copy")
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="sync-bench-"))
    homes = {name: root / name for name in ("a", "b")}
    folders = {name: root / f"{name}-sync" for name in ("a", "b")}
    for path in (*homes.values(), *folders.values()):
        path.mkdir()
    stores = {name: GraphStore(home / "graph_memory.db") for name, home in homes.items()}
    syncs = {name: DeviceSync(stores[name], homes[name]) for name in homes}
    instances: list[Syncthing] = []
    try:
        code = syncs["a"].start(folders["a"], "a")["code"]
        shutil.copy(folders["a"] / "trulymem-sync.json", folders["b"])
        syncs["b"].join(folders["b"], code, "b")
        if args.carrier == "syncthing":
            instances = [Syncthing(root / f"st-{n}", folders[n]) for n in ("a", "b")]
            instances[0].configure(instances[1])
            instances[1].configure(instances[0])
            for instance in instances:
                instance.start()
            instances[0].wait_connected(instances[1])
        return measure(args, stores, syncs, folders, instances)
    finally:
        for instance in instances:
            instance.stop()
        for store in stores.values():
            store.close()
        shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    raise SystemExit(main())
