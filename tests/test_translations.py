"""Every text marked for translation has its Chinese, with the same placeholders, and the
catalogues hold nothing the source no longer says."""

from __future__ import annotations

import ast
import re
import string
from pathlib import Path

from core import i18n

ROOT = Path(__file__).resolve().parents[1]
MARKERS = {"tr", "N_", "tr_kept"}  # tr_kept: tr() that remembers its text (core.i18n)


def marked_texts() -> dict[str, str]:
    """Each literal passed to tr() or N_() in app/ and core/, with where it is."""
    found: dict[str, str] = {}
    for folder in ("app", "core"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text("utf-8"))):
                if isinstance(node, ast.Call) and node.args and (
                        (isinstance(node.func, ast.Name) and node.func.id in MARKERS)
                        or (isinstance(node.func, ast.Attribute)
                            and node.func.attr in MARKERS)):
                    first = node.args[0]
                    if isinstance(first, ast.Constant) and isinstance(first.value, str):
                        found.setdefault(first.value, f"{path.relative_to(ROOT)}:"
                                                      f"{node.lineno}")
    return found


def fields(text: str) -> set[str]:
    return {name for _lit, name, _spec, _conv in string.Formatter().parse(text) if name}


def test_every_marked_text_has_a_chinese_translation_with_the_same_placeholders():
    catalog = i18n.load_catalog(i18n.CHINESE)
    texts = marked_texts()
    assert len(texts) > 100
    missing = [f"{where}: {text!r}" for text, where in texts.items() if text not in catalog]
    assert missing == [], f"{len(missing)} without a translation:\n" + "\n".join(missing)
    wrong = [f"{texts[t]}: {t!r} -> {catalog[t]!r}" for t in texts
             if fields(t) != fields(catalog[t])]
    assert wrong == [], "placeholders differ:\n" + "\n".join(wrong)


def test_the_catalogues_hold_no_text_the_source_no_longer_marks():
    stale = sorted(set(i18n.load_catalog(i18n.CHINESE)) - set(marked_texts()))
    assert stale == [], "translations nothing uses:\n" + "\n".join(map(repr, stale))


def test_texts_are_not_built_by_formatting_before_translation():
    """tr(f"...") would look up a text no catalogue can hold (a constant marked N_ where
    it is defined may be passed by name)."""
    offenders = []
    for folder in ("app", "core"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text("utf-8"))):
                name = getattr(node.func, "id", getattr(node.func, "attr", None)) \
                    if isinstance(node, ast.Call) else None
                if name in MARKERS and node.args and isinstance(
                        node.args[0], (ast.JoinedStr, ast.BinOp, ast.Call)):
                    offenders.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert offenders == []


def test_the_chinese_reads_as_chinese():
    """No translation is the English copied over (names and code aside)."""
    catalog = i18n.load_catalog(i18n.CHINESE)
    latin_only = [k for k, v in catalog.items()
                  if re.search(r"[a-z]{4,}", re.sub(r"\{\w+\}", "", k))  # words, not {names}
                  and not re.search(r"[\u4e00-\u9fff]", v)]
    allowed = {"TrulyMEM", "Claude Desktop", "Cursor", "Cherry Studio", "DeepSeek", "OpenAI"}
    assert [k for k in latin_only if k not in allowed] == []


def test_the_catalogue_reader_keeps_escapes_and_joined_lines():
    text = ('msgid ""\nmsgstr "Language: zh_CN\\n"\n\n# a comment\n'
            'msgid "Say \\"hi\\"\\n"\n"and more"\nmsgstr "说“你好”\\n"\n"还有"\n')
    assert i18n.read_po(text) == {'Say "hi"\nand more': "说“你好”\n还有"}


def test_a_text_in_two_catalogues_is_translated_the_same_in_both():
    seen: dict[str, tuple[str, str]] = {}
    clashes = []
    for path in sorted(i18n.catalog_folder(i18n.CHINESE).glob("*.po")):
        for key, value in i18n.read_po(path.read_text("utf-8")).items():
            if key in seen and seen[key][1] != value:
                clashes.append(f"{key!r}: {seen[key][0]} {seen[key][1]!r}, "
                               f"{path.name} {value!r}")
            seen.setdefault(key, (path.name, value))
    assert clashes == []
