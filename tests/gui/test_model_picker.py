"""The model picker: filled from the endpoint's list on the backend thread, still taking a
typed name; the quick switcher changes the model for the next message."""

from __future__ import annotations

from app.dialogs.settings import SettingsDialog
from tests.gui.conftest import wait_turn


def test_the_settings_picker_lists_the_endpoints_models_and_takes_a_typed_one(
        qtbot, open_window, home, llm):
    llm.models = ["deepseek-chat", "deepseek-reasoner", "test-model"]
    window = open_window(home)
    dialog = SettingsDialog(window.host, window.config, window)
    qtbot.addWidget(dialog)
    qtbot.waitUntil(lambda: dialog.model_box.count() == 3)
    assert [dialog.model_box.itemText(i) for i in range(3)] == llm.models
    assert dialog.model.text() == "test-model"  # the saved choice stays in the field
    llm.models = ["new-model"]
    dialog.refresh_models.click()
    qtbot.waitUntil(lambda: dialog.model_box.count() == 1)
    dialog.model.setText("typed-by-hand")
    assert dialog.values()["model"] == "typed-by-hand"


def test_the_quick_switcher_changes_the_model_for_the_next_message(qtbot, open_window,
                                                                    home, llm):
    llm.models = ["test-model", "other-model"]
    window = open_window(home)
    window.registry.actions["chat.switch_model"].trigger()
    qtbot.waitUntil(lambda: window.setup.model_menu is not None
                    and window.setup.model_menu.isVisible())
    chosen = next(a for a in window.setup.model_menu.actions() if a.text() == "other-model")
    assert not chosen.isChecked()
    chosen.trigger()
    qtbot.waitUntil(lambda: "other-model" in window.status.endpoint_label.text())
    llm.play({"text": "hello"})
    window.turns.send("hi")
    wait_turn(qtbot, window)
    assert llm.requests[-1]["model"] == "other-model"


def test_a_model_the_endpoint_lacks_is_said_plainly_and_the_picker_opens(qtbot, open_window,
                                                                          home, llm):
    llm.models = ["test-model-2", "other-model"]
    llm.play({"status": 404, "code": "model_not_found",
              "message": "The model `test-model` does not exist or you do not have access "
                         "to it."})
    window = open_window(home)
    window.turns.send("hi")
    wait_turn(qtbot, window)
    reply = window.chat.messages[-1]
    assert "has no model named test-model" in reply.error
    qtbot.waitUntil(lambda: window.setup.model_menu is not None
                    and window.setup.model_menu.isVisible())
    assert sorted(a.text() for a in window.setup.model_menu.actions()) == sorted(llm.models)
