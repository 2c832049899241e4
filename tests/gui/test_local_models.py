"""The models this computer runs, as a person meets them: the first start's "Chat on this
computer" (what is downloaded, how big, one button), and Settings' rows with a download's
progress, Cancel, going on, Use and Remove. A small file from a loopback mirror stands in
for a model; the last test runs the real runtime with a real model, when they are here."""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

import pytest
from PySide6.QtWidgets import QMessageBox

from app.dialogs.local_start import LocalStartDialog
from app.dialogs.settings import LOCAL_PRESET, SettingsDialog
from core.models import runtime_build
from core.models.catalogue import Model
from core.models.runtime import server_program
from core.testing.model_mirror import Mirror
from tests.gui.conftest import wait_turn, when_shown

BODY = os.urandom(3 << 20)
MODEL = Model(id="test-model", name="A test model", repo="Test/Test-GGUF",
              file="test-model.gguf", size=len(BODY), sha256=hashlib.sha256(BODY).hexdigest(),
              ram_gb=0.1, licence="MIT", languages="English", tools="", measured="")


def catalogue_of(monkeypatch, tmp_path, model: Model, body: bytes | Path) -> Mirror:
    """The app's catalogue is `model`, served by a loopback mirror into the test's folder."""
    mirror = Mirror.of(body, model.repo, model.file)
    monkeypatch.setenv("TRULYMEM_MODELS_URL", mirror.base)
    monkeypatch.setenv("TRULYMEM_MODELS_DIR", str(tmp_path / "models"))
    monkeypatch.setattr("core.models.catalogue.CATALOGUE", (model,))
    monkeypatch.setattr("core.models.catalogue.DEFAULT", model.id)
    return mirror


@pytest.fixture
def mirror(monkeypatch, tmp_path):
    server = catalogue_of(monkeypatch, tmp_path, MODEL, BODY)
    monkeypatch.setenv("TRULYMEM_RUNTIME_DIR", str(tmp_path / "no-runtime"))
    monkeypatch.setattr(runtime_build, "script", lambda: None)  # as a copy with no script
    yield server
    server.close()


def test_settings_fetch_a_model_with_progress_cancel_go_on_use_and_remove(
        qtbot, open_window, home, mirror, monkeypatch):
    window = open_window(home)
    dialog = SettingsDialog(window.host, {**window.config}, window)
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.choose_preset(LOCAL_PRESET)
    assert dialog.local_models.isVisible()
    qtbot.waitUntil(lambda: MODEL.id in dialog.local_models.rows)
    row = dialog.local_models.rows[MODEL.id]
    assert row.action.text() == "Download (3.1\u00a0MB)"
    assert "Not downloaded" in row.state.text() and "under a minute" in row.state.text()
    assert "Never measured with this app" in row.about.text()
    assert mirror.base.split("//")[1] in dialog.local_models.where.text()
    assert dialog.local_models.where.toolTip() == mirror.base
    mirror.rate = 1 << 20  # three seconds: the bar moves, and Cancel is in time
    row.action.click()
    qtbot.waitUntil(lambda: row.bar.isVisible() and 0 < row.bar.value() < 1000)
    assert "Downloading: " in row.state.text() and row.action.text() == "Cancel download"
    assert row.action.accessibleName() == "Cancel download: A test model"
    row.action.click()
    qtbot.waitUntil(lambda: row.row["state"] == "partial" and not row.row["fetching"],
                    timeout=10000)
    assert row.action.text().startswith("Go on downloading (") and not row.bar.isVisible()
    assert "downloaded; the rest comes when you go on" in row.state.text()
    mirror.rate = None
    row.action.click()
    qtbot.waitUntil(lambda: row.row["state"] == "installed", timeout=10000)
    assert mirror.asked[-1].startswith("bytes=")  # went on where it stopped
    assert row.action.text() == "Use" and row.remove.isVisible()
    dialog.model.setText("something-else")
    row.action.click()
    assert dialog.model.text() == MODEL.id
    monkeypatch.setattr(QMessageBox, "question",
                        lambda *_a, **_k: QMessageBox.StandardButton.Yes)
    row.remove.click()
    qtbot.waitUntil(lambda: row.row["state"] == "absent")
    assert dialog.result.text() == "Removed: 3.1\u00a0MB freed."
    assert not (Path(os.environ["TRULYMEM_MODELS_DIR"]) / MODEL.file).exists()
    dialog.reject()


def test_a_failed_download_stays_said_until_the_next_try(qtbot, open_window, home, mirror):
    window = open_window(home)
    dialog = SettingsDialog(window.host, {**window.config}, window)
    qtbot.addWidget(dialog)
    dialog.show()
    dialog.choose_preset(LOCAL_PRESET)
    qtbot.waitUntil(lambda: MODEL.id in dialog.local_models.rows)
    row = dialog.local_models.rows[MODEL.id]
    mirror.wrong_byte = 100
    row.action.click()
    qtbot.waitUntil(lambda: "The download failed" in row.state.text(), timeout=10000)
    qtbot.waitUntil(lambda: not window.host.busy)  # the list came again after it
    assert "checksum" in row.state.text() and "Not downloaded" in row.state.text()
    mirror.wrong_byte = None
    row.action.click()
    qtbot.waitUntil(lambda: row.row["state"] == "installed", timeout=10000)
    assert "failed" not in row.state.text()
    dialog.reject()


def test_first_start_fetches_the_model_and_says_plainly_when_it_cannot_run(
        qtbot, open_window, tmp_path, mirror):
    window = open_window(tmp_path / "fresh")
    notice = window.pane.notice
    assert "a 3.1\u00a0MB download" in notice.text.text()
    seen: dict = {}

    def act(dialog: LocalStartDialog) -> None:
        seen["dialog"] = dialog
        row = dialog.models.rows.get(MODEL.id)
        if row is None:  # the list is on its way
            when_shown(LocalStartDialog, act)
            return
        seen["offer"] = row.action.text()
        row.action.click()
        wait_for_note(dialog)

    def wait_for_note(dialog: LocalStartDialog) -> None:
        if "does not run" in dialog.note.text():
            seen["note"] = dialog.note.text()
            dialog.reject()
        else:
            when_shown(LocalStartDialog, wait_for_note)

    when_shown(LocalStartDialog, act)
    notice.button.click()
    qtbot.waitUntil(lambda: "note" in seen, timeout=15000)
    assert seen["offer"] == "Download and chat (3.1\u00a0MB)"
    assert "not built" in seen["note"]  # no runtime here, none to build: said, not hidden
    assert (tmp_path / "models" / MODEL.file).read_bytes() == BODY
    qtbot.waitUntil(lambda: "does not run" in notice.text.text())
    assert notice.other.text() == "Chat on this computer…"


def test_closing_chat_on_this_computer_stops_its_download(qtbot, open_window, tmp_path, mirror):
    window = open_window(tmp_path / "fresh")
    mirror.rate = 256 << 10  # twelve seconds
    dialog = LocalStartDialog(window.host, window)
    dialog.show()
    qtbot.waitUntil(lambda: MODEL.id in dialog.models.rows)
    row = dialog.models.rows[MODEL.id]
    row.action.click()
    qtbot.waitUntil(lambda: row.bar.value() > 0)
    dialog.reject()
    kept = tmp_path / "models" / f"{MODEL.file}.part"
    qtbot.waitUntil(lambda: kept.exists() and not window.host.backend.fetcher.running())
    assert 0 < kept.stat().st_size < len(BODY)


def test_first_start_builds_the_runtime_while_the_model_comes(
        qtbot, open_window, tmp_path, mirror, monkeypatch):
    """A source checkout has no runtime: the one click builds it beside the download,
    the row saying how long, and goes on to start the model once both are here."""
    from tests.test_runtime_build import stand_in
    made = stand_in(tmp_path, 0.3)  # once: rewritten mid-build, it ran empty
    monkeypatch.setattr(runtime_build, "script", lambda: made)
    monkeypatch.setattr(runtime_build, "which", lambda name: f"/usr/bin/{name}")
    window = open_window(tmp_path / "fresh")
    dialog = LocalStartDialog(window.host, window)
    dialog.show()
    qtbot.waitUntil(lambda: MODEL.id in dialog.models.rows)
    runtime = dialog.models.runtime
    assert runtime.isVisible() and not runtime.action.isVisible()  # the one button does it
    assert "built on this computer too, beside the download" in runtime.words.text()
    shown: list[tuple[str, bool, str]] = []

    def compiling(data: dict) -> bool:
        """The row as the compile's first event left it (the row's slot runs first): a
        busy machine may deliver every phase in one go, so no later look would see it."""
        if data.get("phase") != "building":
            return False
        shown.append((runtime.words.text(), runtime.bar.isVisible(), runtime.action.text()))
        return True

    with qtbot.waitSignal(window.host.events.runtime_build, timeout=20000,
                          check_params_cb=compiling):
        dialog.models.rows[MODEL.id].action.click()
    words, bar_shown, action = shown[0]
    assert "Building the runtime: compiling" in words
    assert bar_shown and action == "Stop the build"
    # both here: the model is started, and the stand-in runtime cannot run it: said
    qtbot.waitUntil(lambda: "does not run" in dialog.note.text(), timeout=20000)
    assert not runtime.isVisible()
    dialog.reject()


GGUF = Path(os.environ.get("TRULYMEM_TEST_GGUF", ""))


@pytest.mark.skipif(not GGUF.is_file() or server_program() is None,
                    reason="the real runtime and model: $TRULYMEM_TEST_GGUF and a built "
                           "runtime (CI has both)")
def test_chat_on_this_computer_with_a_real_model_from_one_click(
        qtbot, open_window, tmp_path, monkeypatch):
    digest = hashlib.sha256()
    with GGUF.open("rb") as model_file:
        while block := model_file.read(1 << 22):
            digest.update(block)
    model = Model(id="real-test-model", name="The default model, as a test's own",
                  repo="Test/Model-GGUF", file=GGUF.name, size=GGUF.stat().st_size,
                  sha256=digest.hexdigest(), ram_gb=1.5, licence="Apache-2.0",
                  languages="English", tools="", measured="")
    mirror = catalogue_of(monkeypatch, tmp_path, model, GGUF)
    try:
        window = open_window(tmp_path / "fresh")

        def act(dialog: LocalStartDialog) -> None:
            row = dialog.models.rows.get(model.id)
            if row is None:
                when_shown(LocalStartDialog, act)
            else:
                row.action.click()  # the one click: download, start, chat

        when_shown(LocalStartDialog, act)
        window.pane.notice.button.click()  # returns once the dialog closed itself
        qtbot.waitUntil(lambda: not window.pane.notice.isVisible(), timeout=30000)
        window.turns.send("Hi! My name is Sofia.")
        wait_turn(qtbot, window, timeout=120000)
        reply = window.chat.messages[-1]
        assert reply.content.strip() and not reply.error, window.chat.messages
    finally:
        mirror.close()
        from core.models import local
        local.stop_all()
