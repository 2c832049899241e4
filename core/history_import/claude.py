"""Claude's export (claude.ai, Settings > Privacy > Export data): each conversation's
messages in order, the person as "human", times as ISO 8601 text. A message's words are
its `text`, or, where that is empty, its content's text blocks (tool use and thinking
blocks were never shown as the reply); attachments are left out."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from datetime import UTC, datetime
from typing import Any

from core.history_import.readers import (
    PastConversation,
    PastMessage,
    broken,
    past_conversation,
    read_each,
    text_of,
)

ROLES = {"human": "user", "assistant": "assistant"}


def conversations(items: Iterable[Any]) -> Iterator[PastConversation]:
    return read_each(items, _conversation)


def _conversation(item: dict[str, Any], number: int) -> PastConversation:
    chat = item.get("chat_messages") or []
    if not isinstance(chat, list):
        raise broken(number, "its chat_messages is not a list")
    messages = [m for index, raw in enumerate(chat) if (m := _message(raw, index, number))]
    return past_conversation(
        "claude", item.get("uuid"), number, messages, title=text_of(item.get("name")),
        created_at=iso_seconds(item.get("created_at")),
        updated_at=iso_seconds(item.get("updated_at")))


def _message(raw: Any, index: int, number: int) -> PastMessage | None:
    if not isinstance(raw, dict):
        raise broken(number, f"its message {index + 1} is not an object")
    sender = raw.get("sender")
    role = ROLES.get(sender) if isinstance(sender, str) else None
    text = text_of(raw.get("text")) or _content_text(raw.get("content"))
    if role is None or not text:
        return None
    ident = raw.get("uuid")
    return PastMessage(role=role, text=text, created_at=iso_seconds(raw.get("created_at")),
                       source_id=ident if isinstance(ident, str) and ident else str(index))


def _content_text(content: Any) -> str:
    if not isinstance(content, list):
        return ""
    texts = (text_of(block.get("text")) for block in content
             if isinstance(block, dict) and block.get("type") == "text")
    return "\n\n".join(t for t in texts if t)


def iso_seconds(value: Any) -> float | None:
    """ISO 8601 text ("2024-05-01T10:00:00.123456Z") as Unix seconds; without a zone it
    is taken as UTC, which is what Claude writes."""
    if not isinstance(value, str) or not value.strip():
        return None
    try:
        moment = datetime.fromisoformat(value.strip())
    except ValueError:
        return None
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment.timestamp()
