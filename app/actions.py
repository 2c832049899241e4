"""One registry of actions: menus, the command palette, the shortcut list and the keymap all
read it. Default shortcuts are data here; the person's overrides are data in the config."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMenuBar, QWidget

MENUS = ("File", "Chat", "View", "Memory", "Help")


@dataclass(frozen=True)
class ActionSpec:
    name: str  # stable id, the key of an override in the config ("view.trace")
    text: str  # what menus and the palette show
    shortcut: str  # default key sequence in portable text ("Ctrl+T"), or ""
    menu: str  # one of MENUS
    tip: str = ""


# The window's actions, in menu order. Shortcuts of DESIGN section 6 plus a few more.
SPECS: tuple[ActionSpec, ...] = (
    ActionSpec("app.settings", "Settings…", "Ctrl+,", "File",
               "Endpoint, key, model and timeouts"),
    ActionSpec("app.limits", "Tool limits…", "Ctrl+L", "File",
               "How many memory tools the model may call per turn"),
    ActionSpec("memory.export_json", "Export memory as JSON…", "", "File",
               "The whole memory, lossless; import it here or on another machine"),
    ActionSpec("memory.export_graphml", "Export memory as GraphML…", "", "File",
               "For Gephi or yEd"),
    ActionSpec("memory.import", "Import memory…", "", "File",
               "Merge a JSON export into this memory"),
    ActionSpec("memory.restore_backup", "Restore from backup…", "", "File",
               "Put an automatic backup in place of the memory"),
    ActionSpec("app.quit", "Quit", "Ctrl+Q", "File"),
    ActionSpec("chat.new", "New chat", "Ctrl+N", "Chat",
               "Start a new conversation; the assistant still remembers you"),
    ActionSpec("chat.export", "Export conversation as Markdown…", "", "Chat"),
    ActionSpec("chat.switch_model", "Switch model…", "Ctrl+Shift+M", "Chat",
               "Pick the model for the next message from the endpoint's list"),
    ActionSpec("chat.send", "Send message", "Ctrl+Return", "Chat"),
    ActionSpec("chat.stop", "Stop reply", "Esc", "Chat", "Stop the running turn"),
    ActionSpec("chat.retry", "Retry failed message", "Ctrl+R", "Chat"),
    ActionSpec("chat.regenerate", "Regenerate last reply", "Ctrl+Shift+R", "Chat",
               "Ask again; what the old reply wrote to the memory is taken back first"),
    ActionSpec("chat.edit_last", "Edit last message", "Ctrl+Shift+E", "Chat",
               "Change your last message and send it in place of the old exchange"),
    ActionSpec("chat.copy_reply", "Copy last reply", "Ctrl+Shift+C", "Chat"),
    ActionSpec("chat.focus_input", "Focus message box", "Ctrl+I", "Chat"),
    ActionSpec("chat.clear", "Clear conversation…", "Ctrl+Shift+Del", "Chat",
               "Clear the shown conversation; the memory stays"),
    ActionSpec("view.palette", "Command palette…", "Ctrl+K", "View", "Find any action"),
    ActionSpec("view.trace", "Tool trace", "Ctrl+T", "View", "Show or hide the tool calls"),
    ActionSpec("view.sidebar", "Conversations sidebar", "Ctrl+B", "View",
               "Show or hide the list of conversations"),
    ActionSpec("view.graph", "Memory graph", "Ctrl+G", "Memory",
               "Browse what the assistant remembers"),
    ActionSpec("memory.review", "Review what the assistant remembered", "Ctrl+Shift+I",
               "Memory", "Keep, correct or undo each change the assistant made to its memory"),
    ActionSpec("memory.undo", "Undo last memory change", "Ctrl+Z", "Memory",
               "Take back the newest change to the memory, the assistant's or yours"),
    ActionSpec("memory.redo", "Redo memory change", "Ctrl+Shift+Z", "Memory",
               "Bring back what the last undo took back"),
    ActionSpec("memory.undo_turn", "Undo this turn's memory changes", "Ctrl+Alt+Z", "Memory",
               "Take back every change one turn made to the memory: the selected message's "
               "turn, or the last one"),
    ActionSpec("memory.empty_trash", "Empty trash…", "", "Memory",
               "Remove deleted memories for good; until then they can be restored"),
    ActionSpec("memory.search", "Search the memory", "Ctrl+F", "Memory"),
    ActionSpec("node.rename", "Rename node…", "F2", "Memory",
               "Rename the node chosen in the Memory tab"),
    ActionSpec("node.merge", "Merge node into…", "Ctrl+Shift+J", "Memory",
               "Move the chosen node's facts onto another node, found by typing its name"),
    ActionSpec("node.delete", "Delete node", "Ctrl+Del", "Memory",
               "Delete (or restore) the chosen node and its facts; the trash keeps them"),
    ActionSpec("node.add_fact", "Add a fact…", "Ctrl+Shift+A", "Memory",
               "Add a fact about the chosen node yourself"),
    ActionSpec("fact.edit", "Edit fact…", "Ctrl+E", "Memory",
               "Correct the chosen fact: its subject, relation or object"),
    ActionSpec("fact.delete", "Delete fact", "Del", "Memory",
               "Delete (or restore) the chosen fact; the trash keeps it"),
    ActionSpec("fact.open_message", "Go to message", "Ctrl+M", "Memory",
               "Show the chat message the chosen fact came from"),
    ActionSpec("fact.open_other", "Go to other node", "Return", "Memory",
               "Make the fact's other end the centre of the picture"),
    ActionSpec("change.undo", "Undo this change", "", "Memory",
               "Undo the change chosen in the node's Changes list"),
    ActionSpec("memory.refresh", "Refresh memory", "F5", "Memory"),
    ActionSpec("help.shortcuts", "Keyboard shortcuts", "F1", "Help"),
    ActionSpec("help.about", "About TrulyMEM", "", "Help"),
)


class ActionRegistry:
    def __init__(self, window: QWidget) -> None:
        self.window = window
        self.specs: dict[str, ActionSpec] = {s.name: s for s in SPECS}
        self.actions: dict[str, QAction] = {}
        self.problems: list[str] = []

    def bind(self, name: str, handler: Callable[[], object], *, checkable: bool = False,
             scope: QWidget | None = None) -> QAction:
        """`scope`: the key works only while focus is in that widget (a Delete key for the
        memory must not fire in the chat box); menus and the palette reach it anywhere."""
        spec = self.specs[name]
        action = QAction(spec.text, self.window)
        action.setObjectName(name)
        action.setCheckable(checkable)
        if spec.tip:
            action.setStatusTip(spec.tip)
        action.setShortcutContext(Qt.ShortcutContext.WidgetWithChildrenShortcut if scope
                                  else Qt.ShortcutContext.WindowShortcut)
        if spec.shortcut:
            action.setShortcut(QKeySequence(spec.shortcut))
        if checkable:
            action.toggled.connect(lambda _checked: handler())
        else:
            action.triggered.connect(lambda _checked=False: handler())
        (scope or self.window).addAction(action)
        self.actions[name] = action
        return action

    def apply_overrides(self, overrides: dict[str, str]) -> None:
        """Rebind keys from the config; unknown actions, bad keys and clashes are skipped
        and listed in `problems` rather than breaking the window."""
        self.problems = []
        for name, action in self.actions.items():
            action.setShortcut(QKeySequence(self.specs[name].shortcut))
        for name, keys in overrides.items():
            action = self.actions.get(name)
            sequence = QKeySequence(keys)
            if action is None:
                self.problems.append(f"unknown action {name!r}")
                continue
            if keys and (sequence.isEmpty() or sequence.toString() == ""):
                self.problems.append(f"{name}: {keys!r} is not a key sequence")
                continue
            clash = next((other for other, a in self.actions.items()
                          if other != name and keys and a.shortcut() == sequence), None)
            if clash:
                self.problems.append(f"{name}: {keys} is already used by {clash}")
                continue
            action.setShortcut(sequence)

    def build_menus(self, bar: QMenuBar) -> None:
        menus = {title: bar.addMenu(f"&{title}") for title in MENUS}
        for name, action in self.actions.items():
            menus[self.specs[name].menu].addAction(action)

    def shortcut_text(self, name: str) -> str:
        return self.actions[name].shortcut().toString(QKeySequence.SequenceFormat.NativeText)

    def ordered(self) -> list[tuple[ActionSpec, QAction]]:
        return [(self.specs[name], action) for name, action in self.actions.items()]
