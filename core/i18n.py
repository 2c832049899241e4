"""The words a person reads, in English or Simplified Chinese: one mechanism for the window,
the terminal chat and the messages `core` hands either of them.

Text is written in English in the source and marked where it is shown:
`tr("Review: {count}", count=3)` answers the text in the chosen language, with the
parameters put in after translation (so a translation may reorder them). A text defined
before the language is known (a module's constant) is marked `N_("…")` where it is
defined and passed through `tr` where it is shown.

The translations are gettext catalogues, `resources/i18n/<language>/*.po`, read when the
language is set: the source of truth is the text file, so no compiled copy can go stale.
`tests/test_translations.py` fails when a marked text has no translation. What the model
reads (tool results, the prompt) is never translated: it is data, not the window's words.
"""

from __future__ import annotations

import ast
import contextlib
import json
import locale
import os
from importlib import resources
from pathlib import Path
from typing import Any

ENGLISH, CHINESE = "en", "zh_CN"
LANGUAGES = {ENGLISH: "English", CHINESE: "简体中文"}  # each named in its own language
SYSTEM = "system"

_catalog: dict[str, str] = {}
_language = ENGLISH


def N_(text: str) -> str:
    """Marks a text for translation where it cannot be translated yet (a constant)."""
    return text


def tr(text: str, /, **params: object) -> str:
    """`text` in the chosen language, with `params` filled in."""
    translated = _catalog.get(text, text) or text
    return translated.format(**params) if params else translated


def language() -> str:
    return _language


def system_language() -> str:
    """Chinese when the system's locale is (LANGUAGE, LC_ALL, LC_MESSAGES, LANG, or the
    platform's own), else English."""
    names = [os.environ.get(v, "") for v in ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")]
    with contextlib.suppress(ValueError):
        names.append(locale.getlocale()[0] or "")
    first = next((n for n in names if n and n not in ("C", "POSIX", "C.UTF-8")), "")
    return CHINESE if first.lower().startswith("zh") else ENGLISH


def resolve(choice: str | None) -> str:
    """A setting ("system", "en", "zh_CN") as the language to use."""
    return choice if choice in LANGUAGES else system_language()


def set_language(choice: str | None) -> str:
    """Use `choice` ("system" follows the locale) from now on; answers the language."""
    global _catalog, _language  # noqa: PLW0603  (one language per process)
    chosen = resolve(choice)
    _catalog = load_catalog(chosen) if chosen != ENGLISH else {}
    _language = chosen
    return chosen


def catalog_folder(lang: str) -> Path:
    return Path(str(resources.files("resources") / "i18n" / lang))


def load_catalog(lang: str) -> dict[str, str]:
    """Every translated message of `lang`'s catalogues (empty ones are left out, so the
    English shows rather than nothing)."""
    messages: dict[str, str] = {}
    folder = catalog_folder(lang)
    for path in sorted(folder.glob("*.po")) if folder.is_dir() else []:
        messages.update({k: v for k, v in read_po(path.read_text("utf-8")).items() if v})
    return messages


def read_po(text: str) -> dict[str, str]:
    """msgid → msgstr of a gettext catalogue (no contexts or plurals: the source's
    sentences are whole, and Chinese has no plural forms). The header entry is skipped."""
    messages: dict[str, str] = {}
    key: str | None = None
    parts: dict[str, list[str]] = {}
    current: list[str] | None = None

    def flush() -> None:
        if "msgid" in parts:
            msgid, msgstr = "".join(parts["msgid"]), "".join(parts.get("msgstr", []))
            if msgid:
                messages[msgid] = msgstr

    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        for key in ("msgid ", "msgstr "):
            if line.startswith(key):
                if key == "msgid ":
                    flush()
                    parts = {}
                current = parts.setdefault(key.strip(), [])
                line = line[len(key):]
                break
        if current is not None and line.startswith('"'):
            current.append(ast.literal_eval(line))
    flush()
    return messages


class Words(str):
    """Text in the person's language that remembers what it was made from, so a kept copy
    (an error reply in the history) is said again in the language chosen later."""

    template: str = ""
    params: dict[str, object] = {}  # noqa: RUF012  (each instance sets its own)

    def english(self) -> str:
        """The same words in English, as a log keeps them."""
        if not self.template:
            return str(self)
        return self.template.format(**{k: v.english() if isinstance(v, Words) else v
                                       for k, v in self.params.items()})


def tr_kept(text: str, /, **params: object) -> Words:
    """`tr(text, **params)`, remembering `text` and `params` (see `Words`)."""
    words = Words(tr(text, **params))
    words.template, words.params = text, params
    return words


_STORED = '{"words": '


def to_store(text: str | None) -> str | None:
    """`text` as kept in a file: a `Words` as its English template and parameters (JSON,
    a parameter that is `Words` too kept the same way), anything else as it is."""
    if isinstance(text, Words) and text.template:
        return json.dumps(_made_of(text), ensure_ascii=False, default=str)
    return text


def _made_of(words: Words) -> dict[str, object]:
    return {"words": words.template, "params": {
        k: _made_of(v) if isinstance(v, Words) and v.template else v
        for k, v in words.params.items()}}


def from_store(text: str | None) -> str | None:
    """A kept text in the language chosen now (see `to_store`)."""
    if not text or not text.startswith(_STORED):
        return text
    try:
        return _said_again(json.loads(text))
    except (ValueError, KeyError, TypeError, IndexError, AttributeError):
        return text


def _said_again(made: dict[str, Any]) -> str:
    return tr(made["words"], **{
        k: _said_again(v) if isinstance(v, dict) and "words" in v else v
        for k, v in made["params"].items()})
