"""One registry of actions: menus, the command palette, the shortcut list and the keymap all
read it. Default shortcuts are data here; the person's overrides are data in the config."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from PySide6.QtCore import Qt
from PySide6.QtGui import QAction, QKeySequence
from PySide6.QtWidgets import QMenuBar, QWidget

from core import i18n
from core.i18n import N_, tr

MENUS = (N_("File"), N_("Chat"), N_("View"), N_("Memory"), N_("Help"))
# The menu bar's titles, with their mnemonics.
MENU_TITLES = {"File": N_("&File"), "Chat": N_("&Chat"), "View": N_("&View"),
               "Memory": N_("&Memory"), "Help": N_("&Help")}


@dataclass(frozen=True)
class ActionSpec:
    name: str  # stable id, the key of an override in the config ("view.trace")
    text: str  # what menus and the palette show
    shortcut: str  # default key sequence in portable text ("Ctrl+T"), or ""
    menu: str  # one of MENUS
    tip: str = ""
    also: tuple[str, ...] = ()  # more default keys for the same action (Ctrl++ for Ctrl+=)


# The window's actions, in menu order, with their default shortcuts (the README's
# Keyboard section lists them; Settings may change any).
SPECS: tuple[ActionSpec, ...] = (
    ActionSpec("app.settings", N_("Settings…"), "Ctrl+,", "File",
               N_("Endpoint, key, model and timeouts")),
    ActionSpec("app.limits", N_("Tool limits…"), "Ctrl+L", "File",
               N_("How many memory tools the model may call per turn")),
    ActionSpec("memory.export_json", N_("Export memory as JSON…"), "", "File",
               N_("The whole memory, lossless; import it here or on another machine")),
    ActionSpec("memory.export_graphml", N_("Export memory as GraphML…"), "", "File",
               N_("For Gephi or yEd")),
    ActionSpec("memory.import", N_("Import memory…"), "", "File",
               N_("Merge a JSON export into this memory")),
    ActionSpec("history.import", N_("Import conversations…"), "", "File",
               N_("Bring in ChatGPT, Claude or LoCoMo conversations, then build the memory "
                  "from them")),
    ActionSpec("memory.restore_backup", N_("Restore from backup…"), "", "File",
               N_("Put an automatic backup in place of the memory")),
    ActionSpec("app.sync", N_("Sync…"), "", "File",
               N_("The same memory on your other devices, through a shared folder")),
    ActionSpec("app.sync_now", N_("Sync now"), "", "File",
               N_("Send this device's changes and apply the other devices'")),
    ActionSpec("app.global_shortcut", N_("Shortcut from anywhere…"), "", "File",
               N_("A key that shows or hides TrulyMEM from any app")),
    ActionSpec("app.quit", N_("Quit"), "Ctrl+Q", "File"),
    ActionSpec("chat.new", N_("New chat"), "Ctrl+N", "Chat",
               N_("Start a new conversation; the assistant still remembers you")),
    ActionSpec("chat.export", N_("Export conversation as Markdown…"), "", "Chat"),
    ActionSpec("chat.switch_model", N_("Switch model…"), "Ctrl+Shift+M", "Chat",
               N_("Pick the model for the next message from the endpoint's list")),
    ActionSpec("chat.send", N_("Send message"), "Ctrl+Return", "Chat"),
    ActionSpec("chat.stop", N_("Stop reply"), "Esc", "Chat", N_("Stop the running turn")),
    ActionSpec("chat.retry", N_("Retry failed message"), "Ctrl+R", "Chat"),
    ActionSpec("chat.regenerate", N_("Regenerate last reply"), "Ctrl+Shift+R", "Chat",
               N_("Ask again; what the old reply wrote to the memory is taken back first")),
    ActionSpec("chat.edit_last", N_("Edit last message"), "Ctrl+Shift+E", "Chat",
               N_("Change your last message and send it in place of the old exchange")),
    ActionSpec("chat.copy_reply", N_("Copy last reply"), "Ctrl+Shift+C", "Chat"),
    ActionSpec("chat.focus_input", N_("Focus message box"), "Ctrl+I", "Chat"),
    ActionSpec("chat.clear", N_("Clear conversation…"), "Ctrl+Shift+Del", "Chat",
               N_("Clear the shown conversation; the memory stays")),
    ActionSpec("view.palette", N_("Command palette…"), "Ctrl+K", "View",
               N_("Find any action")),
    ActionSpec("view.trace", N_("Tool trace"), "Ctrl+T", "View",
               N_("Show or hide the tool calls")),
    ActionSpec("view.sidebar", N_("Conversations sidebar"), "Ctrl+B", "View",
               N_("Show or hide the list of conversations")),
    ActionSpec("view.zoom_in", N_("Larger text"), "Ctrl+=", "View",
               N_("Make the chat's and the Memory tab's text larger"), also=("Ctrl++",)),
    ActionSpec("view.zoom_out", N_("Smaller text"), "Ctrl+-", "View",
               N_("Make the chat's and the Memory tab's text smaller")),
    ActionSpec("view.zoom_reset", N_("Actual text size"), "Ctrl+0", "View",
               N_("The chat's and the Memory tab's text at 100%")),
    ActionSpec("view.close_to_tray", N_("Keep running in the tray when closed"), "", "View",
               N_("Closing the window hides it in the tray; Quit ends TrulyMEM")),
    ActionSpec("view.graph", N_("Memory graph"), "Ctrl+G", "Memory",
               N_("Browse what the assistant remembers")),
    ActionSpec("memory.review", N_("Review what the assistant remembered"), "Ctrl+Shift+I",
               "Memory",
               N_("Keep, correct or undo each change the assistant made to its memory")),
    ActionSpec("memory.undo", N_("Undo last memory change"), "Ctrl+Z", "Memory",
               N_("Take back the newest change to the memory, the assistant's or yours")),
    ActionSpec("memory.redo", N_("Redo memory change"), "Ctrl+Shift+Z", "Memory",
               N_("Bring back what the last undo took back")),
    ActionSpec("memory.undo_import", N_("Undo import…"), "", "Memory",
               N_("Take back every fact an import of conversations put in the memory")),
    ActionSpec("memory.undo_turn", N_("Undo this turn's memory changes"), "Ctrl+Alt+Z",
               "Memory", N_("Take back every change one turn made to the memory: the selected "
                            "message's turn, or the last one")),
    ActionSpec("memory.empty_trash", N_("Empty trash…"), "", "Memory",
               N_("Remove deleted memories for good; until then they can be restored")),
    ActionSpec("memory.search", N_("Search the memory"), "Ctrl+F", "Memory"),
    ActionSpec("node.rename", N_("Rename node…"), "F2", "Memory",
               N_("Rename the node chosen in the Memory tab")),
    ActionSpec("node.merge", N_("Merge node into…"), "Ctrl+Shift+J", "Memory",
               N_("Move the chosen node's facts onto another node, found by typing its name")),
    ActionSpec("node.delete", N_("Delete node"), "Ctrl+Del", "Memory",
               N_("Delete (or restore) the chosen node and its facts; the trash keeps them")),
    ActionSpec("node.add_fact", N_("Add a fact…"), "Ctrl+Shift+A", "Memory",
               N_("Add a fact about the chosen node yourself")),
    ActionSpec("fact.edit", N_("Edit fact…"), "Ctrl+E", "Memory",
               N_("Correct the chosen fact: its subject, relation or object")),
    ActionSpec("fact.delete", N_("Delete fact"), "Del", "Memory",
               N_("Delete (or restore) the chosen fact; the trash keeps it")),
    ActionSpec("fact.open_message", N_("Go to message"), "Ctrl+M", "Memory",
               N_("Show the chat message the chosen fact came from")),
    ActionSpec("fact.open_other", N_("Go to other node"), "Return", "Memory",
               N_("Make the fact's other end the centre of the picture")),
    ActionSpec("change.undo", N_("Undo this change"), "", "Memory",
               N_("Undo the change chosen in the node's Changes list")),
    ActionSpec("memory.refresh", N_("Refresh memory"), "F5", "Memory"),
    ActionSpec("help.shortcuts", N_("Keyboard shortcuts"), "F1", "Help"),
    ActionSpec("help.about", N_("About TrulyMEM"), "", "Help"),
)


class ActionRegistry:
    def __init__(self, window: QWidget) -> None:
        self.window = window
        # As shown: text, tip and menu in the chosen language (the palette and the shortcut
        # list read them from here); the name and the shortcut stay the stable data.
        self.specs: dict[str, ActionSpec] = {
            s.name: replace(s, text=i18n.tr(s.text), tip=i18n.tr(s.tip), menu=i18n.tr(s.menu))
            for s in SPECS}
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
        action.setShortcuts(self.default_keys(name))
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
            action.setShortcuts(self.default_keys(name))
        for name, keys in overrides.items():
            action = self.actions.get(name)
            sequence = QKeySequence(keys)
            if action is None:
                self.problems.append(tr("unknown action {name}", name=repr(name)))
                continue
            if keys and (sequence.isEmpty() or sequence.toString() == ""):
                self.problems.append(tr("{name}: {keys} is not a key sequence", name=name,
                                        keys=repr(keys)))
                continue
            clash = next((other for other, a in self.actions.items()
                          if other != name and keys and a.shortcut() == sequence), None)
            if clash:
                self.problems.append(tr("{name}: {keys} is already used by {other}",
                                        name=name, keys=keys, other=clash))
                continue
            action.setShortcut(sequence)

    def default_keys(self, name: str) -> list[QKeySequence]:
        spec = self.specs[name]
        return [QKeySequence(keys) for keys in (spec.shortcut, *spec.also) if keys]

    def build_menus(self, bar: QMenuBar) -> None:
        """The menus in SPECS' order (not the order the window bound them), with a line
        between groups: where an action's kind (`memory.`, `node.`, `fact.`) changes."""
        menus = {i18n.tr(menu): bar.addMenu(i18n.tr(MENU_TITLES[menu])) for menu in MENUS}
        last_kind: dict[str, str] = {}
        for spec in SPECS:
            action = self.actions.get(spec.name)
            if action is None:
                continue
            menu, kind = self.specs[spec.name].menu, spec.name.split(".")[0]
            if last_kind.get(menu, kind) != kind:
                menus[menu].addSeparator()
            last_kind[menu] = kind
            menus[menu].addAction(action)

    def shortcut_text(self, name: str) -> str:
        return self.actions[name].shortcut().toString(QKeySequence.SequenceFormat.NativeText)

    def ordered(self) -> list[tuple[ActionSpec, QAction]]:
        """As the menu bar has them (File, Chat, View, Memory, Help, each menu in its own
        order), in every language: the palette and the shortcut list listed the actions
        in the order the window happened to bind them, which read as random."""
        rank = {menu: i for i, menu in enumerate(MENUS)}
        return [(self.specs[spec.name], self.actions[spec.name])
                for spec in sorted(SPECS, key=lambda spec: rank.get(spec.menu, len(rank)))
                if spec.name in self.actions]
