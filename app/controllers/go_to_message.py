"""Going to the person's message of a turn: where a fact came from, or a search hit."""

from __future__ import annotations

from typing import TYPE_CHECKING

from core.i18n import tr

if TYPE_CHECKING:
    from app.main_window import MainWindow


def go_to_message(window: MainWindow, turn_id: str, looked_elsewhere: bool = False) -> None:
    """Go to the person's message of that turn in the chat (where a fact came from),
    opening the conversation that holds it when it is not the one shown."""
    while True:
        row = next((i for i, m in enumerate(window.chat.messages)
                    if m.turn_id == turn_id and m.role == "user"), None)
        if row is not None or not window.chat.load_older(1000):
            break
    if row is None and not looked_elsewhere:
        window.conversations.open(None, lambda: go_to_message(window, turn_id, True),
                                    turn_id=turn_id)
        return
    if row is None:
        window.notify(tr("That message is no longer in the conversation "
                         "(it was cleared)."), 8000)
        return
    window.tabs.setCurrentWidget(window.pane)
    index = window.chat.index(row)
    window.pane.view.setCurrentIndex(index)
    window.pane.view.scrollTo(index, window.pane.view.ScrollHint.PositionAtCenter)
    window.pane.view.setFocus()
