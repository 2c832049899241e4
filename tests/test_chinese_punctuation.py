"""Chinese text takes full-width punctuation: "新名称:" with an ASCII colon read as a
leftover. Every msgstr of every zh_CN catalogue is checked, so a new one stays right."""

from __future__ import annotations

import re

from core import i18n
from core.i18n import CHINESE

CJK = r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]"  # Han, CJK and full-width punctuation
# An ASCII mark right after Chinese (a space between allowed), or after a field that
# follows Chinese ("共 {n}:"); a full stop only where it ends a sentence (".zip" is a name).
WRONG = re.compile(rf"{CJK} ?(\{{[^}}]*\}})?([:;,?!]|\.(?=$|[\s”\"）)]))")


def test_checker_finds_ascii_marks_after_chinese():
    for wrong in ("新名称:", "好, 的", "完成.", "是吗?", "共 {n}: 项", "停!"):
        assert WRONG.search(wrong), wrong
    for right in ("新名称：", "导出文件：.zip、.json", "以 http:// 开头", "版本 1.0",
                  "Authorization: Bearer", "{error}：请重试"):
        assert not WRONG.search(right), right


def test_every_chinese_text_uses_full_width_punctuation():
    wrong = {text: said for text, said in i18n.load_catalog(CHINESE).items()
             if WRONG.search(said)}
    assert not wrong, "ASCII punctuation after Chinese:\n" + "\n".join(
        f"  {text!r}: {said!r}" for text, said in wrong.items())


def test_a_summary_made_a_sentence_ends_as_its_language_does():
    from app.status.status_parts import as_sentence

    assert as_sentence("emptied the trash") == "Emptied the trash."
    try:
        i18n.set_language(CHINESE)
        assert as_sentence("已清空回收站") == "已清空回收站。"
    finally:
        i18n.set_language(i18n.ENGLISH)
