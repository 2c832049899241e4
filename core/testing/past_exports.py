"""Small invented exports of past conversations, in each app's shape, for the tests and
the benchmarks. Everyone in them is made up; no real export is copied.

ChatGPT's conversation `i` (from 0), on its current branch, shows exactly:
    user       "Hi, I am Mira Kovač. Conversation {i}."
    assistant  "Nice to meet you, Mira."
    user       "Here is my cat Pixel."           (with an image beside it)
    assistant  "Pixel looks very happy."         (after a tool call and its output)
    user       "I moved to Bergen last spring."  (with branches: an edit of "... Oslo ...")
    assistant  "Bergen is rainy but lovely."
around a system prompt, a hidden context message, a tool's call and output, and, with
branches, the abandoned branch "I moved to Oslo last spring." / "Oslo is lovely.".
"""

from __future__ import annotations

import json
import zipfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

T0 = 1_714_557_600.0  # 2024-05-01 10:00 UTC
DAY = 86_400.0


# -- ChatGPT -----------------------------------------------------------------------------

def _node(node_id: str, parent: str | None, message: dict[str, Any] | None) -> dict[str, Any]:
    return {"id": node_id, "message": message, "parent": parent, "children": []}


def _chatgpt_message(node_id: str, role: str, parts: list[Any], when: float | None, *,
                     content_type: str = "text",
                     metadata: dict[str, Any] | None = None) -> dict[str, Any]:
    return {"id": node_id, "author": {"role": role, "name": None, "metadata": {}},
            "create_time": when, "update_time": None,
            "content": {"content_type": content_type, "parts": parts},
            "status": "finished_successfully", "end_turn": True, "weight": 1.0,
            "metadata": metadata or {}, "recipient": "all", "channel": None}


def _chain(mapping: dict[str, Any], parent: str, node_id: str,
           message: dict[str, Any] | None) -> str:
    """Adds a node under `parent`; answers its id, the next node's parent."""
    mapping[node_id] = _node(node_id, parent, message)
    mapping[parent]["children"].append(node_id)
    return node_id


def chatgpt_conversation(i: int, *, branches: bool = True) -> dict[str, Any]:
    """Conversation `i` in ChatGPT's shape (what it shows: the module's docstring)."""
    start = T0 + i * DAY
    n = f"c{i}"
    mapping = {"client-created-root": _node("client-created-root", None, None)}
    at = _chain(mapping, "client-created-root", f"{n}-system", _chatgpt_message(
        f"{n}-system", "system", [""], None,
        metadata={"is_visually_hidden_from_conversation": True}))
    at = _chain(mapping, at, f"{n}-context", _chatgpt_message(
        f"{n}-context", "user", [], start, content_type="user_editable_context",
        metadata={"is_visually_hidden_from_conversation": True}))
    steps = [
        ("user", [f"Hi, I am Mira Kovač. Conversation {i}."], {}),
        ("assistant", ["Nice to meet you, Mira."], {}),
        ("user", [{"content_type": "image_asset_pointer", "asset_pointer":
                   "file-service://file-invented", "width": 64, "height": 64},
                  "Here is my cat Pixel."], {"content_type": "multimodal_text"}),
    ]
    for step, (role, parts, extra) in enumerate(steps):
        at = _chain(mapping, at, f"{n}-m{step}", _chatgpt_message(
            f"{n}-m{step}", role, parts, start + 60 * (step + 1), **extra))
    at = _chain(mapping, at, f"{n}-call", {
        **_chatgpt_message(f"{n}-call", "assistant", [], start + 250),
        "content": {"content_type": "code", "language": "python", "text": "print('hi')"},
        "recipient": "python"})
    at = _chain(mapping, at, f"{n}-output", {
        **_chatgpt_message(f"{n}-output", "tool", [], None),
        "content": {"content_type": "execution_output", "text": "hi"}})
    at = _chain(mapping, at, f"{n}-m3", _chatgpt_message(
        f"{n}-m3", "assistant", ["Pixel looks very happy."], start + 300))
    if branches:  # the first version of the next question, edited away since
        old = _chain(mapping, at, f"{n}-old-q", _chatgpt_message(
            f"{n}-old-q", "user", ["I moved to Oslo last spring."], start + 360))
        _chain(mapping, old, f"{n}-old-a", _chatgpt_message(
            f"{n}-old-a", "assistant", ["Oslo is lovely."], start + 370))
    at = _chain(mapping, at, f"{n}-m4", _chatgpt_message(
        f"{n}-m4", "user", ["I moved to Bergen last spring."], start + 420))
    at = _chain(mapping, at, f"{n}-m5", _chatgpt_message(
        f"{n}-m5", "assistant", ["Bergen is rainy but lovely."], start + 480))
    return {"title": f"Moving house {i}", "create_time": start, "update_time": start + 480,
            "mapping": mapping, "moderation_results": [], "current_node": at,
            "plugin_ids": None, "conversation_id": f"conv-{i:04d}", "id": f"conv-{i:04d}",
            "is_archived": False, "default_model_slug": "gpt-4o"}


def chatgpt_export(path: str | Path, conversations: int = 3, *, zip: bool = False,
                   branches: bool = True) -> Path:
    """ChatGPT's conversations.json at `path`, or, with `zip`, a zip holding it beside the
    other files ChatGPT's export has."""
    path = Path(path)
    text = json.dumps([chatgpt_conversation(i, branches=branches)
                       for i in range(conversations)], ensure_ascii=False)
    if not zip:
        path.write_text(text, "utf-8")
        return path
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("user.json", json.dumps({"id": "user-invented", "email":
                                                  "mira@example.invalid"}))
        archive.writestr("chat.html", "<html><body>invented</body></html>")
        archive.writestr("message_feedback.json", "[]")
        archive.writestr("conversations.json", text)
    return path


def big_chatgpt_export(path: str | Path, conversations: int = 10_000,
                       messages: int = 20) -> Path:
    """A large ChatGPT export, written a conversation at a time (memory stays at one), of
    `conversations` linear conversations of `messages` messages each."""
    path = Path(path)
    with path.open("w", encoding="utf-8") as file:
        file.write("[")
        for i in range(conversations):
            file.write(("," if i else "") + json.dumps(_linear(i, messages),
                                                       ensure_ascii=False))
        file.write("]")
    return path


def _linear(i: int, count: int) -> dict[str, Any]:
    start = T0 + i * 3600.0
    mapping = {"root": _node("root", None, None)}
    at = "root"
    for k in range(count):
        role = "user" if k % 2 == 0 else "assistant"
        words = f"Question {k} of conversation {i}: what should I cook tonight?" \
            if role == "user" else f"Answer {k}: a mushroom risotto, stirred slowly. " * 4
        at = _chain(mapping, at, f"b{i}-{k}", _chatgpt_message(f"b{i}-{k}", role, [words],
                                                              start + k * 30))
    return {"title": f"Cooking {i}", "create_time": start, "update_time": start + count * 30,
            "mapping": mapping, "current_node": at, "id": f"big-{i}",
            "conversation_id": f"big-{i}"}


# -- Claude ------------------------------------------------------------------------------

def _iso(seconds: float) -> str:
    return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def claude_conversation(i: int) -> dict[str, Any]:
    """Conversation `i` in Claude's shape: a person's question, a reply whose `text` is
    empty (its words are in text blocks around a tool call), an empty message, a second
    question and its reply."""
    start = T0 + i * DAY
    ident = f"00000000-0000-4000-8000-{i:012d}"

    def message(k: int, sender: str, text: str, content: list[dict[str, Any]]) -> dict:
        return {"uuid": f"10000000-0000-4000-8000-{i:06d}{k:06d}", "text": text,
                "content": content, "sender": sender, "created_at": _iso(start + 60 * k),
                "updated_at": _iso(start + 60 * k), "attachments": [], "files": []}

    def block(text: str) -> dict[str, Any]:
        return {"type": "text", "text": text, "citations": []}

    chat = [
        message(1, "human", f"Hello, I'm Tomas Lindqvist ({i}).",
                [block(f"Hello, I'm Tomas Lindqvist ({i}).")]),
        message(2, "assistant", "", [block("Hello Tomas!"), {
            "type": "tool_use", "name": "web_search", "input": {"query": "invented"}},
            {"type": "tool_result", "content": [{"type": "text", "text": "results"}]},
            block("How can I help?")]),
        message(3, "human", "", []),
        message(4, "human", "I keep bees on my roof.", [block("I keep bees on my roof.")]),
        message(5, "assistant", "Rooftop bees are wonderful.",
                [block("Rooftop bees are wonderful.")]),
    ]
    return {"uuid": ident, "name": f"Bees {i}", "summary": "", "created_at": _iso(start),
            "updated_at": _iso(start + 300), "account": {"uuid": "account-invented"},
            "chat_messages": chat}


def claude_export(path: str | Path, conversations: int = 3) -> Path:
    """Claude's conversations.json at `path`."""
    path = Path(path)
    path.write_text(json.dumps([claude_conversation(i) for i in range(conversations)]),
                    "utf-8")
    return path


# -- LoCoMo ------------------------------------------------------------------------------

LOCOMO_SAMPLE = "inv-7"


def locomo_sample() -> dict[str, Any]:
    """One invented sample in LoCoMo's shape: two sessions (written out of order, as the
    file does not promise any), a third session's date with no turns, a shared photo."""
    return {
        "sample_id": LOCOMO_SAMPLE,
        "qa": [
            {"question": "What does Iris grow on her balcony?", "answer": "tomatoes",
             "evidence": ["D1:1"], "category": 4},
            {"question": "When did Iris start a pottery class?", "answer": "March 2023",
             "evidence": ["D2:1", "D2:3"], "category": 2},
            {"question": "What is Iris's brother's name?", "evidence": [], "category": 5,
             "adversarial_answer": "Karl"},
        ],
        "conversation": {
            "speaker_a": "Iris", "speaker_b": "Oskar",
            "session_2_date_time": "4:05 pm on 20 March, 2023",
            "session_2": [
                {"speaker": "Iris", "dia_id": "D2:1",
                 "text": "I started a pottery class this week!"},
                {"speaker": "Oskar", "dia_id": "D2:2", "text": "Have you made a bowl yet?"},
                {"speaker": "Iris", "dia_id": "D2:3", "text": "A wobbly one.",
                 "img_url": ["https://example.invalid/bowl.jpg"],
                 "blip_caption": "a photo of a small clay bowl", "query": "clay bowl"},
            ],
            "session_1_date_time": "10:30 am on 2 February, 2023",
            "session_1": [
                {"speaker": "Iris", "dia_id": "D1:1",
                 "text": "My balcony is full of tomato plants."},
                {"speaker": "Oskar", "dia_id": "D1:2", "text": "I only grow cacti."},
                {"speaker": "Iris", "dia_id": "D1:3", "text": "Cacti suit you."},
            ],
            "session_3_date_time": "9:00 am on 1 April, 2023",
        },
        "event_summary": {}, "observation": {}, "session_summary": {},
    }


def locomo_export(path: str | Path) -> Path:
    """A LoCoMo file of one invented sample at `path`."""
    path = Path(path)
    path.write_text(json.dumps([locomo_sample()], ensure_ascii=False), "utf-8")
    return path
