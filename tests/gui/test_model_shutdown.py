"""A model that is going away: the shutdown date the endpoint announces on GET /v1/models
comes from the loopback server through the backend to Settings and, once, to the status
bar, whose word opens the model menu."""

from __future__ import annotations

from datetime import date

from PySide6.QtCore import Qt

from app.dialogs.settings import SettingsDialog
from app.status.model_shutdown import SAID_KEY, spoken_day
from core.endpoint.shutdown import in_days
from core.protocol.packets import PacketType
from tests.gui.conftest import wait_turn


def reply_once(qtbot, window, llm) -> None:
    """A turn; the first of a session asks the endpoint for its models after it."""
    llm.play({"text": "hello"})
    window.turns.send("hi")
    wait_turn(qtbot, window)


def checked(qtbot, window, ask) -> None:
    with qtbot.waitSignal(window.model_notice.checked, timeout=10000):
        ask()


def test_a_model_going_away_soon_is_said_once_and_the_click_opens_the_model_menu(
        qtbot, open_window, home, llm):
    llm.models = ["test-model", "successor-model"]
    llm.shutdowns = {"test-model": in_days(10)}
    window = open_window(home)
    notice = window.model_notice.part
    assert not notice.isVisible()  # nothing asked before the endpoint has answered a turn
    checked(qtbot, window, lambda: reply_once(qtbot, window, llm))
    assert notice.isVisible()
    assert "test-model" in notice.text()
    assert spoken_day(in_days(10)) in notice.text()
    qtbot.mouseClick(notice, Qt.MouseButton.LeftButton)
    qtbot.waitUntil(lambda: window.setup.model_menu is not None
                    and window.setup.model_menu.isVisible())
    assert sorted(a.text() for a in window.setup.model_menu.actions()) == sorted(llm.models)
    assert not notice.isVisible()
    window.setup.model_menu.close()

    # said once: not again in this session, nor after a restart
    checked(qtbot, window, window.model_notice.check)
    assert not notice.isVisible()
    window.close()
    again = open_window(home)
    checked(qtbot, again, lambda: reply_once(qtbot, again, llm))
    assert not again.model_notice.part.isVisible()
    assert f"test-model|{in_days(10)}" in str(again.settings.value(SAID_KEY))


def test_a_new_date_for_the_model_is_said_and_a_far_one_is_not(qtbot, open_window, home, llm):
    llm.shutdowns = {"test-model": in_days(90)}  # months away: Settings says it, not the bar
    window = open_window(home)
    notice = window.model_notice.part
    checked(qtbot, window, lambda: reply_once(qtbot, window, llm))
    assert not notice.isVisible()
    window.settings.setValue(SAID_KEY, f'["test-model|{in_days(-3)}"]')  # an older date
    llm.shutdowns = {"test-model": in_days(-1)}  # gone since yesterday
    window.host.send(PacketType.LIST_MODELS, {"refresh": True}, lambda _answer: None)
    # a save (here the quick switcher's) makes the window list the models again
    checked(qtbot, window, lambda: window.setup.use_model("test-model"))
    assert notice.isVisible()
    assert "was shut down on" in notice.text()


def test_settings_show_the_shutdown_date_beside_the_model(qtbot, open_window, home, llm):
    llm.models = ["gpt-4o-mini", "gpt-6-luna", "test-model"]
    llm.shutdowns = {"gpt-4o-mini": "2027-01-14", "gpt-6-luna": None}
    window = open_window(home)
    dialog = SettingsDialog(window.host, window.config, window)
    qtbot.addWidget(dialog)
    dialog.model_shutdown.today = lambda: date(2026, 12, 4)
    dialog.show()
    qtbot.waitUntil(lambda: dialog.model_box.count() == 3)
    note = dialog.model_shutdown
    assert not note.isVisible()  # test-model: no date announced
    dialog.model.setText("gpt-4o-mini")
    assert note.isVisible()
    assert note.text().startswith("Shuts down on 14 Jan 2027")
    dialog.model_box.setCurrentIndex(dialog.model_box.findText("gpt-6-luna"))
    assert dialog.model.text() == "gpt-6-luna" and not note.isVisible()
    dialog.reject()


def test_each_preset_names_the_model_its_provider_recommends_now(qtbot, open_window, home):
    window = open_window(home)
    dialog = SettingsDialog(window.host, window.config, window)
    qtbot.addWidget(dialog)

    def choose(preset: str) -> str:
        dialog.preset.setCurrentIndex(dialog.preset.findData(preset))
        return dialog.model.text()

    dialog.model.setText("gpt-4o-mini")  # an earlier preset's model follows the preset
    assert choose("OpenAI") == "gpt-6-luna"
    assert choose("DeepSeek") == "deepseek-flash"
    assert choose("Ollama (local)") == "gemma4"
    dialog.model.setText("my-own-model")  # a model the person chose stays
    assert choose("OpenAI") == "my-own-model"
    dialog.reject()
