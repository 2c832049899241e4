"""ChatGPT's export: each conversation is a tree of messages, with a branch for every
edited question and regenerated reply. Only the branch the person last saw (from
`current_node` up to the root) is what they remember, so only it is read; system
prompts, tool calls and their output, hidden messages and images are left out."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from core.history_import.readers import (
    PastConversation,
    PastMessage,
    broken,
    past_conversation,
    read_each,
    seconds,
    text_of,
)

ROLES = ("user", "assistant")
SHOWN_TYPES = ("text", "multimodal_text")  # not code, execution output, thoughts, context
HIDDEN_FLAGS = ("is_visually_hidden_from_conversation", "is_user_system_message")


def conversations(items: Iterable[Any]) -> Iterator[PastConversation]:
    return read_each(items, _conversation)


def _conversation(item: dict[str, Any], number: int) -> PastConversation:
    mapping = item.get("mapping") or {}
    if not isinstance(mapping, dict):
        raise broken(number, "its mapping is not an object")
    branch = _branch(mapping, item.get("current_node"), number)
    messages = [m for node_id in branch if (m := _message(node_id, mapping[node_id]))]
    # old exports may lack an id (newer conversations' roots all share one:
    # "client-created-root")
    return past_conversation(
        "chatgpt", item.get("id") or item.get("conversation_id"), number, messages,
        title=text_of(item.get("title")), created_at=seconds(item.get("create_time")),
        updated_at=seconds(item.get("update_time")))


def _node(mapping: dict[str, Any], node_id: str, number: int) -> dict[str, Any]:
    node = mapping[node_id]
    if not isinstance(node, dict):
        raise broken(number, f"its message {node_id} is not an object")
    return node


def _branch(mapping: dict[str, Any], current: Any, number: int) -> list[str]:
    """The node ids from the root to the current node. Without a current node (an older
    export), down the last child from the root: the newest edit or reply."""
    seen: list[str] = []
    if isinstance(current, str) and current in mapping:
        node_id: Any = current
        while isinstance(node_id, str) and node_id in mapping and node_id not in seen:
            seen.append(node_id)
            node_id = _node(mapping, node_id, number).get("parent")
        return seen[::-1]
    node_id = next((key for key in mapping if not _has_parent(mapping, key, number)), None)
    while isinstance(node_id, str) and node_id in mapping and node_id not in seen:
        seen.append(node_id)
        children = _node(mapping, node_id, number).get("children")
        node_id = children[-1] if isinstance(children, list) and children else None
    return seen


def _has_parent(mapping: dict[str, Any], node_id: str, number: int) -> bool:
    parent = _node(mapping, node_id, number).get("parent")
    return isinstance(parent, str) and parent in mapping


def _message(node_id: str, node: dict[str, Any]) -> PastMessage | None:
    """The node's message as the person saw it, or None when it was not shown."""
    message = node.get("message")
    if not isinstance(message, dict):
        return None
    author = message.get("author")
    role = author.get("role") if isinstance(author, dict) else None
    metadata = message.get("metadata")
    content = message.get("content")
    if role not in ROLES or not isinstance(content, dict) \
            or content.get("content_type") not in SHOWN_TYPES \
            or message.get("recipient", "all") not in ("all", None) \
            or (isinstance(metadata, dict) and any(metadata.get(f) for f in HIDDEN_FLAGS)):
        return None  # a system prompt, a tool's call or output, a hidden context message
    text = _text(content.get("parts"))
    if not text:
        return None
    return PastMessage(role=role, text=text, created_at=seconds(message.get("create_time")),
                       source_id=node_id)


def _text(parts: Any) -> str:
    """The parts that are text, joined: a string, or what a voice message said (an image
    or a recording is not text)."""
    if not isinstance(parts, list):
        return ""
    texts = (text_of(part.get("text") if isinstance(part, dict) and part.get(
        "content_type") == "audio_transcription" else part) for part in parts)
    return "\n\n".join(t for t in texts if t)
