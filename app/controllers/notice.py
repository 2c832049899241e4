"""The strip above the conversation: a problem with the store or the setup, with the one
button that helps, or, once a model is set up, the messages written before it, to send or
put away. One notice at a time, the problem first."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from app.chat.pane import Notice
from app.chat.turns import TurnController
from app.status.start_notice import notice_for
from core.i18n import tr


class NoticeController:
    def __init__(self, notice: Notice, turns: TurnController, open_settings: Callable[[], None],
                 open_backups: Callable[[], None],
                 on_this_computer: Callable[[], None]) -> None:
        self.notice, self.turns = notice, turns
        self.open_settings, self.open_backups = open_settings, open_backups
        self.on_this_computer = on_this_computer
        self.status: dict[str, Any] = {}
        self.action: Callable[[], None] = open_settings
        self.other_action: Callable[[], None] = turns.put_unsent_away
        notice.button.clicked.connect(self._clicked)
        notice.other.clicked.connect(self._other_clicked)
        turns.unsent_settled.connect(self.offer_unsent)

    def _clicked(self) -> None:
        self.action()  # what the notice shown asks for

    def _other_clicked(self) -> None:
        self.other_action()

    def show_status(self, status: dict[str, Any]) -> None:
        """A problem the status tells of, or else the unsent messages' offer."""
        self.status = status
        problem = notice_for(status)
        if problem is None:
            self.offer_unsent()
            return
        self.action = self.open_backups if problem.restore else self.open_settings
        self.other_action = self.on_this_computer
        local = tr("Chat on this computer…") if problem.on_this_computer else None
        if problem.local_first:
            self.action, self.other_action = self.other_action, self.action
            self.notice.show_message(problem.text, local, problem.button)
        else:
            self.notice.show_message(problem.text, problem.button, local)
        self.notice.setToolTip(problem.detail)

    def offer_unsent(self) -> None:
        """Messages written before a model was set up: once one is, send them or put them
        away (the notice says which); nothing else to say, no notice."""
        waiting = self.turns.unsent()
        if not waiting or not self.status.get("client_initialized"):
            if notice_for(self.status) is None:
                self.notice.hide()
            return
        first = " ".join(waiting[0][1].split())
        self.action, self.other_action = self.turns.send_unsent, self.turns.put_unsent_away
        self.notice.show_message(
            tr("Written before a model was set up, not sent yet: “{first}”{more}",
               first=first[:80] + ("…" if len(first) > 80 else ""),
               more=tr(" and {n} more", n=len(waiting) - 1) if len(waiting) > 1 else ""),
            tr("Send now"), tr("Put away"))
        self.notice.setToolTip("")
