"""Settings (Ctrl+,): endpoint, key, model, timeouts. The dialog edits a copy: Cancel changes
nothing, OK saves through SET_CONFIG and stays open if the backend refuses a value."""

from __future__ import annotations

from dataclasses import dataclass
from types import SimpleNamespace
from typing import Any

from PySide6.QtCore import QSize, Qt
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QDialogButtonBox,
    QDoubleSpinBox,
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QMessageBox,
    QPlainTextEdit,
    QPushButton,
    QScrollArea,
    QSpinBox,
    QTabWidget,
    QVBoxLayout,
    QWidget,
)

from app.backend_host import BackendHost
from app.dialogs.host_dialog import SavingDialog
from app.dialogs.key_note import key_note
from app.dialogs.local_models import LocalModels
from app.dialogs.sharing import SharingPage
from app.dialogs.sync_page import SyncPage
from app.looks.notes import quiet
from app.looks.sizes import TITLE_BAR, chars, fit_on_screen
from app.looks.text_marks import unbroken_at_hyphens
from app.status.model_shutdown import ShutdownNote
from core import desktop_files, i18n
from core.config import DEFAULT_MODEL
from core.endpoint import profiles
from core.i18n import N_, tr
from core.models import catalogue, local
from core.paths import memory_label
from core.protocol.packets import PacketType

LOCAL_KEY = "not-needed"  # local servers ignore the key, but the protocol needs one
# Timeouts in seconds (request = between chunks, first token, whole turn). A small model
# on a laptop CPU can read a long prompt for minutes before its first token.
_TIMEOUT_NAMES = ("first_token_timeout", "request_timeout", "turn_timeout")
CLOUD_TIMEOUTS = dict(zip(_TIMEOUT_NAMES, profiles.CLOUD_TIMEOUTS, strict=True))
LOCAL_TIMEOUTS = dict(zip(_TIMEOUT_NAMES, profiles.LOCAL_TIMEOUTS, strict=True))


@dataclass(frozen=True)
class Preset:
    name: str
    base_url: str
    model: str
    local: bool = False


# Each preset names the model its provider recommends (checked 2026-12-04):
# - DeepSeek, Models & Pricing (api-docs.deepseek.com/quick_start/pricing): "use the model
#   name deepseek-flash" (DeepSeek-V4.1-Flash; deepseek-v4-flash still answers, served by it).
# - OpenAI, Models (developers.openai.com/api/docs/models): GPT-6 Luna "for cost-sensitive,
#   high-volume workloads", and the deprecations page's replacement for gpt-4o-mini, which
#   shuts down on 2027-01-14.
# - Ollama's README and quickstart (docs.ollama.com/quickstart): `ollama run gemma4`.
# - llama-server and LM Studio answer with whatever model they loaded, whatever the name.
LOCAL_PRESET = N_("On this computer (no key; nothing leaves it)")
PRESETS = (
    Preset(LOCAL_PRESET, local.LOCAL, catalogue.DEFAULT, True),
    Preset("DeepSeek", "https://api.deepseek.com", DEFAULT_MODEL),
    Preset("OpenAI", "https://api.openai.com/v1", "gpt-6-luna"),
    Preset(N_("llama.cpp server (local)"), "http://127.0.0.1:8080/v1", "local-model", True),
    Preset(N_("Ollama (local)"), "http://localhost:11434/v1", "gemma4", True),
    Preset(N_("LM Studio (local)"), "http://localhost:1234/v1", "local-model", True),
)
# Models earlier presets named: a field still holding one follows the preset chosen.
FORMER_PRESET_MODELS = {"deepseek-v4-flash", "gpt-4o-mini", "llama3.1"}
CUSTOM = N_("Custom endpoint")
WRITER_CHOICES = (("auto", N_("Automatic (a step after the answer for small local models)")),
                  ("tools", N_("The model's tool calls")),
                  ("extract", N_("A step after each answer")))
# The language setting's choices; the languages are named in their own language.
LANGUAGE_CHOICES = ((i18n.SYSTEM, N_("Follow the system")),
                    *((code, name) for code, name in i18n.LANGUAGES.items()))


def local_words(model_id: str) -> str:
    """What choosing the app's own runtime means (each model's state is its row's)."""
    said = [tr("The app runs the model itself with llama.cpp's server: no key, and nothing "
               "you say leaves this computer.")]
    if catalogue.find(model_id) is None:
        said.append(tr("The model must be one of: {ids}.",
                       ids=", ".join(m.id for m in catalogue.CATALOGUE)))
    return " ".join(said)


def _seconds_box(value: Any, maximum: int, name: str, tip: str) -> QDoubleSpinBox:
    box = QDoubleSpinBox()
    box.setDecimals(0)
    box.setRange(1, maximum)
    box.setSuffix(tr(" s"))
    box.setValue(float(value))
    box.setAccessibleName(name)
    box.setToolTip(tip)
    return box


class Scrolling(QScrollArea):
    """A page that scrolls when the screen is too short for it (800×500, or Chinese text,
    whose lines are taller) instead of pushing the dialog's buttons off the screen; where
    there is room it asks for the page's whole height, so nothing scrolls."""

    def __init__(self, page: QWidget) -> None:
        super().__init__()
        self.setWidget(page)
        self.setWidgetResizable(True)
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)

    def sizeHint(self) -> QSize:
        wanted = self.widget().sizeHint()
        return QSize(wanted.width() + self.verticalScrollBar().sizeHint().width(),
                     wanted.height())


class SettingsDialog(SavingDialog):
    packet = PacketType.SET_CONFIG

    def __init__(self, host: BackendHost, config: dict[str, Any],
                 parent: QWidget | None = None) -> None:
        super().__init__(host, config, "settingsDialog", tr("Settings"), parent)
        self._make_fields(config)
        self._make_instructions(config)
        self.sync_page = SyncPage(host)  # acts at once: nothing of it waits for OK
        self.key_note = key_note(config)  # in the system keychain, or in a private file
        self.local_note = QLabel()
        self.local_note.setObjectName("localNote")
        self.local_note.setWordWrap(True)
        self.local_models = LocalModels(host)  # the catalogue: fetch, use, remove
        self.local_models.use.connect(self.model.setText)
        self.local_models.said.connect(self.result.setText)
        self._lay_out()
        self._match_preset()
        if self.api_key.text().strip():
            self.fetch_models()
        self.preset.currentIndexChanged.connect(self._apply_preset)
        # DeepSeek's thinking mode only where it applies: other endpoints ignore it; what
        # runs on this computer is said where it is chosen
        for follow in (self._show_thinking, self._show_local):
            self.base_url.textChanged.connect(follow)
            follow(self.base_url.text())
        self.model.textChanged.connect(lambda _text: self._show_local(self.base_url.text()))
        self.base_url.textEdited.connect(lambda _text: self._match_preset())

    def _apps_activity(self, answer: dict[str, Any]) -> None:
        if answer["success"]:
            self.sharing.show_activity(answer["data"])

    def _make_fields(self, config: dict[str, Any]) -> None:
        self.preset = QComboBox()
        self.preset.setAccessibleName(tr("Provider"))
        for name in [p.name for p in PRESETS] + [CUSTOM]:
            self.preset.addItem(i18n.tr(name), name)
        self.base_url = QLineEdit(config.get("base_url", ""))
        self.base_url.setAccessibleName(tr("Base URL"))
        self.api_key = QLineEdit(config.get("api_key", ""))
        self.api_key.setAccessibleName(tr("API key"))
        self.api_key.setEchoMode(QLineEdit.EchoMode.Password)
        self.api_key.setPlaceholderText("sk-…")
        self.show_key = QPushButton(tr("Show"))
        self.show_key.setCheckable(True)
        self.show_key.setAccessibleName(tr("Show the API key"))
        self.show_key.toggled.connect(self._reveal)
        self._make_model(config)
        self._make_timeouts(config)
        self.writer = QComboBox()
        self.writer.setAccessibleName(tr("Who writes the memory"))
        for code, name in WRITER_CHOICES:
            self.writer.addItem(i18n.tr(name), code)
        self.writer.setCurrentIndex(max(0, self.writer.findData(
            config.get("memory_writer") or "auto")))
        self.writer.setToolTip(tr(
            "Small models call tools badly: for them a separate step reads each of your "
            "messages for new, changed and forgotten facts after the answer."))
        self.round_trips = QSpinBox()
        self.round_trips.setRange(1, 100)
        self.round_trips.setValue(int(config.get("max_round_trips", 12)))
        self.round_trips.setAccessibleName(tr("Model requests per turn"))
        self.trash_days = QSpinBox()
        self.trash_days.setRange(1, 3650)
        self.trash_days.setSuffix(tr(" days"))
        self.trash_days.setValue(int(config.get("trash_days", 30)))
        self.trash_days.setAccessibleName(tr("Days deleted memories stay in the trash at "
                                             "least"))
        self.trash_days.setToolTip(tr("The assistant can never remove anything deleted more "
                                      "recently than this; only you empty the trash."))
        self._make_meaning(config)
        self.language = QComboBox()
        self.language.setObjectName("languageChoice")
        self.language.setAccessibleName(tr("Language"))
        for code, name in LANGUAGE_CHOICES:
            self.language.addItem(i18n.tr(name), code)
        self.language.setCurrentIndex(max(0, self.language.findData(
            config.get("language") or i18n.SYSTEM)))
        self._make_general(config)
        self.sharing = SharingPage(config)
        self.host.send(PacketType.APPS_ACTIVITY, None, self._apps_activity)
        self.test_button = QPushButton(tr("&Test connection"))
        self.test_button.clicked.connect(self.test_connection)
        self.result = QLabel()
        self.result.setObjectName("connectionResult")
        self.result.setWordWrap(True)
        self.result.setAccessibleName(tr("Connection test result"))
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                        | QDialogButtonBox.StandardButton.Cancel)
        self.buttons.accepted.connect(self.save)
        self.buttons.rejected.connect(self.reject)

    def _make_model(self, config: dict[str, Any]) -> None:
        # The model picker: the endpoint's own list, fetched on the backend thread; any
        # name can still be typed. `model` is its text field.
        self.model_box = QComboBox()
        self.model_box.setEditable(True)
        self.model_box.setInsertPolicy(QComboBox.InsertPolicy.NoInsert)
        self.model_box.setAccessibleName(tr("Model"))
        self.model = self.model_box.lineEdit()
        self.model.setAccessibleName(tr("Model"))
        self.model.setText(config.get("model", ""))
        self.refresh_models = QPushButton("↻")
        self.refresh_models.setAccessibleName(tr("Fetch the endpoint's models"))
        self.refresh_models.setToolTip(tr("Fetch the list of models from the endpoint"))
        self.refresh_models.clicked.connect(lambda: self.fetch_models(refresh=True))
        self.model_shutdown = ShutdownNote(self.model)  # the date the endpoint announces
        self.thinking = QCheckBox(tr("&DeepSeek thinking mode: think before answering"))
        self.thinking.setChecked(bool(config.get("thinking", False)))
        self.thinking.setToolTip(tr(
            "DeepSeek's thinking mode: slower and dearer, sometimes better at hard "
            "questions. Other providers choose by model name."))

    def _make_general(self, config: dict[str, Any]) -> None:
        self.start_at_login = QCheckBox(tr("Start TrulyMEM when I lo&g in"))
        self.start_at_login.setChecked(bool(config.get("start_at_login")))
        self.start_at_login.setToolTip(tr("Adds TrulyMEM to the programs your desktop starts "
                                          "when you log in (its startup settings list it too)."))
        self.memory_name = QLineEdit(config.get("memory_name") or "")
        self.memory_name.setObjectName("memoryName")
        self.memory_name.setMaxLength(60)
        self.memory_name.setPlaceholderText(memory_label(config.get("home")) or
                                            tr("none (the only memory)"))
        self.memory_name.setAccessibleName(tr("Name of this memory"))
        self.memory_name.setToolTip(tr("Shown in the title bar and the tray, to tell two "
                                       "memories (two --home folders) apart"))

    def _make_instructions(self, config: dict[str, Any]) -> None:
        """The person's own words on how the assistant replies, sent with every turn."""
        self.instructions_note = QLabel(tr(
            "What the assistant should always keep to when it replies: how long, how "
            "formal, what to call you. It reads them with every message you send."))
        self.instructions_note.setWordWrap(True)
        quiet(self.instructions_note)
        self.instructions = QPlainTextEdit(config.get("instructions") or "")
        self.instructions.setObjectName("instructions")
        self.instructions.setTabChangesFocus(True)  # Tab leaves the box, as in a form
        self.instructions.setPlaceholderText(tr(
            "For example: Answer questions about facts in a few words. Call me Sam."))
        self.instructions.setAccessibleName(tr("Your instructions for the assistant"))
        self.instructions.setAccessibleDescription(self.instructions_note.text())
        self.instructions.setMinimumHeight(5 * self.fontMetrics().lineSpacing())

    def _make_meaning(self, config: dict[str, Any]) -> None:
        self.recall_by_meaning = QCheckBox(tr("Also find memories by m&eaning"))
        self.recall_by_meaning.setChecked(bool(config.get("recall_by_meaning", True)))
        meaning = config.get("meaning") or {}
        self.meaning_note = QLabel()
        self.meaning_note.setWordWrap(True)
        quiet(self.meaning_note)
        if meaning.get("state") == "unavailable":
            self.recall_by_meaning.setEnabled(False)
            self.meaning_note.setText(tr("Not available here: {problem}.",
                                         problem=meaning.get("problem")))
        else:
            self.meaning_note.setText(tr("A small multilingual model on this computer: "
                                         "nothing is sent anywhere."))
        self.recall_by_meaning.setToolTip(tr(
            "Recall finds \"musical instrument\" in \"plays the cello\", in English and "
            "Chinese alike. Off: recall finds only memories that share a word."))

    def _make_timeouts(self, config: dict[str, Any]) -> None:
        # The values in force: a local address left at the cloud defaults waits as long
        # as a local server needs (profiles.timeouts), and the boxes say so.
        config = {**config, **dict(zip(_TIMEOUT_NAMES, profiles.timeouts(SimpleNamespace(
            base_url=config.get("base_url", ""),
            **{n: float(config.get(n, CLOUD_TIMEOUTS[n])) for n in _TIMEOUT_NAMES})),
            strict=True))}
        self.first_token_timeout = _seconds_box(
            config.get("first_token_timeout", 120), 3600, tr("First token timeout in seconds"),
            tr("How long the model may take before it starts answering (reading the prompt). "
               "Keep-alive messages from the server do not count as an answer."))
        self.request_timeout = _seconds_box(
            config.get("request_timeout", 60), 3600, tr("Request timeout in seconds"),
            tr("How long the model may pause once it has started answering."))
        self.turn_timeout = _seconds_box(
            config.get("turn_timeout", 300), 24 * 3600, tr("Turn timeout in seconds"),
            tr("How long one message may take in all, tool calls included."))

    def _lay_out(self) -> None:
        key_row = self.key_row = QHBoxLayout()
        key_row.addWidget(self.api_key)
        key_row.addWidget(self.show_key)
        form = self.form = QFormLayout()
        form.addRow(tr("&Provider"), self.preset)
        form.addRow(tr("Base &URL"), self.base_url)
        key_label = QLabel(tr("API &key"))
        key_label.setBuddy(self.api_key)
        form.addRow(key_label, key_row)
        form.addRow("", self.key_note)
        form.addRow("", self.local_note)
        form.addRow("", self.local_models)
        model_row = QHBoxLayout()
        model_row.addWidget(self.model_box, 1)
        model_row.addWidget(self.refresh_models)
        model_label = QLabel(tr("&Model"))
        model_label.setBuddy(self.model_box)
        form.addRow(model_label, model_row)
        form.addRow("", self.model_shutdown)
        form.addRow("", self.thinking)
        form.addRow(tr("Wait for the &first token"), self.first_token_timeout)
        form.addRow(tr("Wait for the &next token"), self.request_timeout)
        form.addRow(tr("W&hole turn at most"), self.turn_timeout)
        form.addRow(tr("Model &requests per turn"), self.round_trips)
        form.addRow(tr("Memory &written by"), self.writer)
        form.addRow(tr("Keep deleted memories"), self.trash_days)
        form.addRow(tr("Recall"), self.recall_by_meaning)
        form.addRow("", self.meaning_note)
        self._general_rows(form)

        test_row = QHBoxLayout()
        test_row.addWidget(self.test_button)
        test_row.addWidget(self.result, 1)
        model_page = QWidget()
        model_layout = QVBoxLayout(model_page)
        model_layout.addLayout(form)
        model_layout.addStretch(1)
        model_layout.addLayout(test_row)
        self.tabs = QTabWidget()
        self.tabs.addTab(Scrolling(model_page), tr("M&odel and memory"))
        instructions_page = QWidget()
        instructions_layout = QVBoxLayout(instructions_page)
        instructions_layout.addWidget(self.instructions_note)
        instructions_layout.addWidget(self.instructions, 1)
        self.tabs.addTab(instructions_page, tr("&Instructions"))
        self.tabs.addTab(Scrolling(self.sharing), tr("Other app&s"))
        self.tabs.addTab(Scrolling(self.sync_page), tr("S&ync"))
        layout = QVBoxLayout(self)
        layout.addWidget(self.tabs)
        layout.addWidget(self.buttons)
        self.setMinimumWidth(chars(self, 80))

    def showEvent(self, event) -> None:
        super().showEvent(event)
        fit_on_screen(self)

    def _reveal(self, shown: bool) -> None:
        self.api_key.setEchoMode(QLineEdit.EchoMode.Normal if shown
                                 else QLineEdit.EchoMode.Password)
        self.show_key.setText(tr("Hide") if shown else tr("Show"))

    def _match_preset(self) -> None:
        url = self.base_url.text().strip().rstrip("/")
        name = next((p.name for p in PRESETS if p.base_url.rstrip("/") == url), CUSTOM)
        self.preset.blockSignals(True)
        self.preset.setCurrentIndex(self.preset.findData(name))
        self.preset.blockSignals(False)

    def choose_preset(self, name: str) -> None:
        self.preset.setCurrentIndex(self.preset.findData(name))

    def _show_local(self, base_url: str) -> None:
        own = local.is_own(base_url)
        self.form.setRowVisible(self.local_note, own)
        self.form.setRowVisible(self.local_models, own)
        for key_part in (self.key_row, self.key_note):  # no key for the own runtime
            self.form.setRowVisible(key_part, not own)
        if own:
            self.local_note.setText(local_words(self.model.text().strip()))

    def _show_thinking(self, base_url: str) -> None:
        self.form.setRowVisible(self.thinking, profiles.is_deepseek(base_url.strip()))

    def _apply_preset(self, index: int) -> None:
        name = self.preset.itemData(index)
        preset = next((p for p in PRESETS if p.name == name), None)
        if preset is None:
            return
        defaults = {p.model for p in PRESETS} | FORMER_PRESET_MODELS
        self.base_url.setText(preset.base_url)
        if not self.model.text().strip() or self.model.text().strip() in defaults or (
                local.is_own(preset.base_url) and catalogue.find(self.model.text()) is None):
            self.model.setText(preset.model)  # the own runtime runs the catalogue's only
        if preset.local and not self.api_key.text().strip():
            self.api_key.setText(LOCAL_KEY)
        # Timeouts follow the kind of endpoint, unless the person chose their own.
        fitting, other = (LOCAL_TIMEOUTS, CLOUD_TIMEOUTS) if preset.local else \
            (CLOUD_TIMEOUTS, LOCAL_TIMEOUTS)
        boxes = self._timeout_boxes()
        if all(boxes[k].value() in (other[k], fitting[k]) for k in boxes):
            for setting, box in boxes.items():
                box.setValue(fitting[setting])

    def _timeout_boxes(self) -> dict[str, QDoubleSpinBox]:
        return {"request_timeout": self.request_timeout,
                "first_token_timeout": self.first_token_timeout,
                "turn_timeout": self.turn_timeout}

    def _general_rows(self, form: QFormLayout) -> None:
        form.addRow(tr("&Language"), self.language)
        form.addRow(tr("Name of this &memory"), self.memory_name)
        if desktop_files.SUPPORTED:  # an XDG autostart entry: Linux and BSD desktops
            form.addRow("", self.start_at_login)

    def values(self) -> dict[str, Any]:
        return {"api_key": self.api_key.text().strip(), "base_url": self.base_url.text().strip(),
                "model": self.model.text().strip(),
                "thinking": self.thinking.isChecked(),
                "instructions": self.instructions.toPlainText().strip(),
                "request_timeout": self.request_timeout.value(),
                "first_token_timeout": self.first_token_timeout.value(),
                "turn_timeout": self.turn_timeout.value(),
                "max_round_trips": self.round_trips.value(),
                "memory_writer": self.writer.currentData(),
                "trash_days": self.trash_days.value(),
                "recall_by_meaning": self.recall_by_meaning.isChecked(),
                "language": self.language.currentData(),
                "start_at_login": self.start_at_login.isChecked(),
                "memory_name": self.memory_name.text().strip(),
                **self.sharing.values()}

    def fetch_models(self, refresh: bool = False) -> None:
        """Fill the picker from the endpoint (cached by the backend unless `refresh`)."""
        values = self.values()
        body = {k: values[k] for k in ("api_key", "base_url")}
        body["refresh"] = refresh
        self.refresh_models.setEnabled(False)
        self.host.send(PacketType.LIST_MODELS, body, self._models_fetched)

    def _models_fetched(self, answer: dict[str, Any]) -> None:
        self.refresh_models.setEnabled(True)
        if not answer["success"]:
            self.result.setText(tr("Models not listed: {error}", error=answer["error"]))
            return
        typed = self.model.text()
        self.model_box.blockSignals(True)
        self.model_box.clear()
        self.model_box.addItems(answer["data"]["models"])
        self.model_shutdown.set_dates(answer["data"].get("shutdowns") or {})
        self.model.setText(typed)
        self.model_box.blockSignals(False)

    def test_connection(self) -> None:
        self.test_button.setEnabled(False)
        self.result.setText(tr("Testing…"))
        values = self.values()
        self.host.send(PacketType.TEST_CONNECTION,
                       {k: values[k] for k in ("api_key", "base_url", "model")},
                       self._tested)

    def _tested(self, answer: dict[str, Any]) -> None:
        self.test_button.setEnabled(True)
        # a model's name stays on one line ("deepseek-/v4-flash" broke at its hyphen)
        self.result.setText(unbroken_at_hyphens(
            answer["message"] if answer["success"]
            else tr("Failed: {error}", error=answer["error"])))
        self.show_result()

    def show_result(self) -> None:
        """On a short screen the page scrolls: bring the test's answer into view."""
        page = self.tabs.widget(0)
        if isinstance(page, Scrolling):
            self._grow_for(page)
            page.ensureWidgetVisible(self.result)

    def _grow_for(self, page: Scrolling) -> None:
        """Taller by what the page now needs at its width (a wrapped answer), where the
        screen has room: the page scrolls only on a screen too short for it."""
        layout = page.widget().layout()
        width = page.viewport().width()
        needed = layout.totalHeightForWidth(width) if layout.hasHeightForWidth() \
            else page.widget().sizeHint().height()
        extra = needed - page.viewport().height()
        if extra > 0:
            screen = self.screen().availableGeometry()
            frame = max(self.frameGeometry().height() - self.height(), TITLE_BAR)
            height = min(self.height() + extra, screen.height() - frame)
            self.resize(self.width(), height)
            if self.y() + height + frame > screen.bottom():
                self.move(self.x(), max(screen.top(), screen.bottom() - height - frame))

    def changes(self) -> dict[str, Any]:
        return {k: v for k, v in self.values().items() if v != self.original.get(k)}

    def refused(self, words: str) -> None:
        self.result.setText(words)
        self.show_result()

    def kept(self) -> None:
        if self.values()["language"] != (self.original.get("language") or i18n.SYSTEM):
            QMessageBox.information(self, tr("Settings"),
                                    tr("The language changes the next time TrulyMEM starts."))
