"""The status bar: what the turn is doing, the endpoint and model, the tokens, the memory's
counts, the review inbox and (while it catches up) the meaning indexer. It follows the
memory's own events; the window tells it the rest."""

from __future__ import annotations

import time
from typing import Any

from PySide6.QtCore import QObject, Qt, QTimer
from PySide6.QtWidgets import QStatusBar

from app.backend_host import BackendHost
from app.status.status_parts import EndpointPart, StatusPart, count_of
from app.status.status_row import StatusRow, is_lasting
from core.i18n import tr
from core.models import local

NEWS_MSECS = 12000


class StatusBar(QObject):
    def __init__(self, bar: QStatusBar, host: BackendHost) -> None:
        super().__init__(bar)
        self.state_label = StatusPart(steady=True)
        self.state_label.setObjectName("turnState")
        self.endpoint_label = EndpointPart()
        self.endpoint_label.setObjectName("endpoint")
        self.endpoint_label.setCursor(Qt.CursorShape.PointingHandCursor)
        self.tokens_label = StatusPart(tr("Tokens: none yet"))
        self.tokens_label.setObjectName("tokens")
        self.memory_label = StatusPart()
        self.memory_label.setObjectName("memoryCounts")
        self.review_label = StatusPart()
        self.review_label.setObjectName("reviewCount")
        self.review_label.setCursor(Qt.CursorShape.PointingHandCursor)
        # Shown only while the background indexer catches up (or if it stopped).
        self.meaning_label = StatusPart()
        self.meaning_label.setObjectName("meaningIndex")
        # Shown once this memory syncs with other devices: the last sync, conflicts.
        self.sync_label = StatusPart()
        self.sync_label.setObjectName("syncState")
        self.sync_label.setCursor(Qt.CursorShape.PointingHandCursor)
        bar.addWidget(self.state_label, 1)
        # the model's name and the memory's counts say the most: the others give way first
        self.row = StatusRow()
        for label, drops in ((self.endpoint_label, 0), (self.tokens_label, 1),
                             (self.memory_label, 0), (self.review_label, 3),
                             (self.meaning_label, 2), (self.sync_label, 4)):
            self.row.add(label, drops)
        bar.addPermanentWidget(self.row)
        # News ("Stopped", a failure) goes after a while; the lasting state comes back.
        self.lasting = ""
        self.news_timer = QTimer(self)
        self.news_timer.setSingleShot(True)
        self.news_timer.timeout.connect(lambda: self.state_label.setText(self.lasting))
        self.show_meaning({"state": "ready"})
        host.events.meaning.connect(self.show_meaning)
        host.events.memory_changed.connect(self.show_counts)
        host.events.sync.connect(self.show_sync)

    def set_state(self, text: str) -> None:
        """What the window is doing ("Thinking…", "Ready") stays; news ("Stopped", "The
        last message failed…") is shown for `NEWS_MSECS`, then the lasting state again."""
        self.state_label.setText(text)
        if is_lasting(text, tr("Ready")):
            self.lasting = text
            self.news_timer.stop()
        else:
            self.news_timer.start(NEWS_MSECS)

    def show_endpoint(self, config: dict[str, Any], ready: bool = True) -> None:
        """The endpoint and model in use; none (`ready` False: no key, or a model of this
        computer that does not run) says so rather than naming a default nobody chose."""
        if not ready:
            self.endpoint_label.set_endpoint(tr("no model yet"), "", tr(
                "Nothing to chat with yet: the notice above the chat offers a model on "
                "this computer or an API key."))
            return
        url = config.get("base_url", "")
        host = url.split("://", 1)[-1].split("/", 1)[0] or url
        if local.is_own(url):  # the app's own runtime: say where, not the setting's word
            host, url = tr("this computer"), tr("The model runs on this computer; nothing "
                                               "you say leaves it.")
        self.endpoint_label.set_endpoint(host, config.get("model", ""), url)

    def show_tokens(self, last: int, session: int) -> None:
        self.tokens_label.setText(tr("Tokens: last {last} · session {session}",
                                     last=f"{last:,}", session=f"{session:,}"))

    def show_meaning(self, status: dict[str, Any]) -> None:
        """The indexer's progress: a status part while it catches up, gone once ready."""
        state = status.get("state")
        text, tip = "", ""
        if state == "indexing" and status.get("waiting"):
            text = tr("Indexing: {count} left", count=f"{status['waiting']:,}")
            tip = tr("Memories are being indexed for recall by meaning, on this computer "
                     "({count} done). Recall works meanwhile; what is not indexed yet is found "
                     "by its words.", count=f"{status.get('indexed', 0):,}")
        elif state == "failed":
            text, tip = tr("Recall by words only"), status.get("problem") or ""
        self.meaning_label.setText(text)
        self.meaning_label.setToolTip(tip)

    def show_counts(self, state: dict[str, Any]) -> None:
        counts = state["counts"]
        self.memory_label.setText(tr("Memory: {counts}", counts=state["counts_line"]))
        self.memory_label.setToolTip(tr(
            "{counts} (active memories), plus {others} and {history} kept as history. An "
            "export holds all of them.", counts=state["counts_line"],
            others=count_of(counts["other_facts"], tr("1 persona or task fact"),
                            tr("{n} persona or task facts")),
            history=count_of(counts["history"], tr("1 replaced, archived or deleted fact"),
                             tr("{n} replaced, archived or deleted facts"))))

    def show_sync(self, state: dict[str, Any]) -> None:
        """The last sync and what needs the person: a failure, conflicts, refused files."""
        if not state.get("joined"):
            self.sync_label.setText("")
            return
        last = time.strftime("%H:%M", time.localtime(state["last_sync"])) \
            if state.get("last_sync") else "—"
        if state.get("error"):
            text, tip = tr("Sync failed"), state["error"]
        elif state.get("refused"):
            text = tr("Sync: {count} files refused", count=len(state["refused"]))
            tip = "\n".join(f"{r['file']}: {r['reason']}" for r in state["refused"][:5])
        else:
            text = tr("Synced {time}", time=last)
            if state.get("conflicts"):
                text += " · " + count_of(state["conflicts"], tr("1 conflict"),
                                         tr("{n} conflicts"))
            tip = tr("{devices} other devices; {arrived} rows arrived at the last sync. "
                     "Click for the devices and conflicts.",
                     devices=len(state.get("devices") or []), arrived=state.get("arrived", 0))
        self.sync_label.setText(text)
        self.sync_label.setToolTip(tip)

    def counts_unavailable(self, error: str) -> None:
        self.memory_label.setText(tr("Memory: unavailable"))
        self.memory_label.setToolTip(error)

    def show_review_count(self, count: int, keys: str) -> None:
        self.review_label.setText(tr("Review: {count}", count=f"{count:,}") if count
                                  else tr("Nothing to review"))
        self.review_label.setToolTip(
            tr("{changes} the assistant or other apps made to the memory wait for your "
               "review: click, or press {keys}",
               changes=count_of(count, tr("1 change"), tr("{n} changes")), keys=keys)
            if count else tr("You have reviewed everything the assistant remembered."))
