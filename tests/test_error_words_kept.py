"""An error reply kept in the history is said in the language chosen now: it was kept as
the words it was written in, and a Chinese window showed an English error after a switch
(and the other way round)."""

from __future__ import annotations

import json

from core import i18n
from core.protocol.packets import Packet, PacketType
from tests.test_review import ask, backend  # noqa: F401  (the fixture)


def test_an_error_reply_is_said_again_in_the_language_chosen_later(backend, llm):  # noqa: F811
    llm.play({"status": 401, "message": "bad key"})
    dispatcher = backend()
    failed = dispatcher.handle(Packet.make(PacketType.PROCESS_MESSAGE, {"user_input": "hi"}))
    assert not failed.success and failed.error.startswith("the API key was rejected (401")
    stored = dispatcher.backend.store.query_one(
        "SELECT error FROM messages WHERE role = 'assistant'")
    kept = json.loads(stored["error"])  # the words it was made of, not one language's
    assert kept["words"].startswith("the API key was rejected")
    english = ask(dispatcher, PacketType.GET_HISTORY)["history"][-1]["error"]
    assert english == failed.error
    try:
        i18n.set_language(i18n.CHINESE)
        chinese = ask(dispatcher, PacketType.GET_HISTORY)["history"][-1]["error"]
    finally:
        i18n.set_language(i18n.ENGLISH)
    assert chinese != english and "401" in chinese and "bad key" in chinese
    assert "rejected" not in chinese


def test_kept_words_come_back_whole_and_plain_text_stays_as_it_was():
    inner = i18n.tr_kept("timeout: the API did not answer in time")
    outer = i18n.tr_kept("the API sent an empty stream, and then failed without streaming: "
                         "{error}", error=inner)
    stored = i18n.to_store(outer)
    assert i18n.from_store(stored) == outer
    try:
        i18n.set_language(i18n.CHINESE)
        again = i18n.from_store(stored)
    finally:
        i18n.set_language(i18n.ENGLISH)
    assert "timeout" not in again and "stream" not in again  # the inner one too
    for plain in (None, "", "a server said {no}", '{"words": broken'):
        assert i18n.from_store(i18n.to_store(plain)) == plain
