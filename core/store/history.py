"""The chat history shown to the person: kept in the same database, apart from the graph,
one conversation at a time."""

from __future__ import annotations

import json
from typing import Any

from core.i18n import from_store, to_store
from core.redaction import scrub_value
from core.store import GraphStore, StoreError, conversations

JSON_FIELDS = ("tool_calls", "rejected_tools", "usage")
# Kept on files from version 13 on: a regenerated reply's earlier replies, and why each
# refused call was refused.
LATER_FIELDS = ("versions", "refused_why")
CONVERSATIONS_SCHEMA = 8  # the schema version that brought conversations
DELETED_SCHEMA = 13  # ...and the one that keeps deleted exchanges, marked
SENT_SCHEMA = 14  # ...and the one that keeps what the model was shown with a message
ROLES = ("user", "assistant", "system")


def clean_text(value: Any) -> Any:
    """`value` with lone surrogates (which a broken stream or model can send, and which
    UTF-8 cannot store) replaced by U+FFFD, so a reply is never lost over one bad
    character."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
        return value
    if isinstance(value, dict):
        return {k: clean_text(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [clean_text(v) for v in value]
    return value


class History:
    """The messages of one conversation (by default the one used last)."""

    def __init__(self, store: GraphStore, conversation_id: int | None = None) -> None:
        self.store = store
        # A file too damaged to migrate is read as it is: before conversations, it held
        # one history.
        self.legacy = store.schema_version() < CONVERSATIONS_SCHEMA
        self.conversation_id = conversation_id if conversation_id is not None or \
            self.legacy else conversations.current(store)
        # what is shown: not the exchanges the person deleted (on files that mark them)
        self.shown = " AND deleted_at IS NULL" \
            if store.schema_version() >= DELETED_SCHEMA else ""
        self.later = (*LATER_FIELDS, "sent") if store.schema_version() >= SENT_SCHEMA \
            else LATER_FIELDS if self.shown else ()

    def append(self, role: str, content: str, titles: bool = True, **fields: Any) -> int:
        """Add one message; `fields` may carry tool_calls, rejected_tools, usage, partial,
        error, turn_id, reasoning, round_trips, versions, refused_why and `sent` (what the
        model was shown with a person's message, see `core.turn.prompt_window`). Without
        `titles`, a first message does not name the conversation (one never sent)."""
        if self.store.read_only:
            raise StoreError(self.store.read_only)
        first = titles and role == "user" and self.store.query_one(
            "SELECT 1 AS yes FROM messages WHERE conversation_id = ? AND role = 'user'"
            + self.shown + " LIMIT 1", (self.conversation_id,)) is None
        with self.store.conn:
            message_id = self._insert({"role": role, "content": content, **fields})
        conversations.touch(self.store, self.conversation_id, content if first else None)
        return message_id

    def messages(self, limit: int | None = None, cap: int | None = None,
                 sent: bool = False) -> list[dict[str, Any]]:
        """Oldest first; with `limit`, only the newest `limit` messages. With `cap`, text
        longer than `cap` characters is cut there, with a note saying how much is left
        out, and SQLite never hands the rest over: one 50 MB reply must not slow every
        start. `sent`: with what the model was shown with each (the turn's own business,
        not the window's)."""
        later = [name for name in self.later if sent or name != "sent"]
        text = "".join(f"{name}, " for name in later) + (
            "content, reasoning" if cap is None else (
            "substr(content, 1, :cap) AS content, length(content) AS content_length,"
            " substr(reasoning, 1, :cap) AS reasoning, length(reasoning) AS reasoning_length"))
        rows = self.store.query(
            "SELECT id, role, " + text + ", tool_calls, rejected_tools, usage, partial, error,"
            " turn_id, created_at, round_trips FROM messages"
            + ("" if self.legacy else " WHERE conversation_id = :conversation" + self.shown)
            + " ORDER BY id DESC LIMIT :limit",
            {"cap": cap, "limit": limit if limit is not None else -1,
             "conversation": self.conversation_id})
        for row in rows:
            for name in (*JSON_FIELDS, *later):
                if name in row:
                    row[name] = json.loads(row[name]) if row[name] else None
            row["partial"] = bool(row["partial"])
            row["error"] = from_store(row["error"])  # in the language chosen now
            for name in ("content", "reasoning"):
                length = row.pop(f"{name}_length", None)
                if cap is not None and length is not None and length > cap:
                    row[name] += f"\n\n[… {length - cap:,} more characters not shown]"
        return rows[::-1]

    def replace(self, messages: Any) -> None:
        """Store exactly `messages` (SAVE_HISTORY); an empty list clears the history."""
        if not isinstance(messages, list):
            raise ValueError("messages must be a list")
        for i, message in enumerate(messages):
            if not isinstance(message, dict) or message.get("role") not in ROLES \
                    or not isinstance(message.get("content"), str):
                raise ValueError(f"messages[{i}] must be an object with a role "
                                 f"({', '.join(ROLES)}) and text content")
        with self.store.conn:
            self.store.conn.execute("BEGIN IMMEDIATE")
            self.store.conn.execute("DELETE FROM messages WHERE conversation_id = ?",
                                    (self.conversation_id,))
            for message in messages:
                self._insert(message)

    def add_to_reply(self, turn_id: str, tool_calls: list[dict[str, Any]],
                     rejected_tools: list[Any], refused_why: list[str], note: str) -> None:
        """What was done after a reply went out (the memory-writing step), kept with the
        reply: its calls and refusals after the reply's own, and a note under its text."""
        row = self.store.query_one(
            "SELECT id, content, tool_calls, rejected_tools" + (", refused_why" if self.shown
                                                                 else "")
            + " FROM messages WHERE turn_id = ? AND role = 'assistant' ORDER BY id DESC"
            " LIMIT 1", (turn_id,))
        if row is None or not (tool_calls or rejected_tools or note):
            return
        def kept(name: str, more: list[Any]) -> str | None:
            merged = (json.loads(row[name]) if row.get(name) else []) + list(more)
            return json.dumps(scrub_value(clean_text(merged)), ensure_ascii=False) \
                if merged else None
        values = {"content": (row["content"] or "") + scrub_value(clean_text(note)),
                  "tool_calls": kept("tool_calls", tool_calls),
                  "rejected_tools": kept("rejected_tools", rejected_tools)}
        if self.shown:
            values["refused_why"] = kept("refused_why", refused_why)
        with self.store.conn:
            self.store.conn.execute(
                "UPDATE messages SET " + ", ".join(f"{k} = ?" for k in values)
                + " WHERE id = ?", (*values.values(), row["id"]))

    def latest_turn(self) -> str | None:
        row = self.store.query_one("SELECT turn_id FROM messages WHERE conversation_id = ?"
                                   + self.shown + " ORDER BY id DESC LIMIT 1",
                                   (self.conversation_id,))
        return row["turn_id"] if row else None

    def turns_from(self, turn_id: str) -> list[str]:
        """The shown turns from `turn_id` to the newest, in order; [] when the
        conversation does not show it."""
        rows = self.store.query(
            "SELECT turn_id FROM messages WHERE conversation_id = :c AND turn_id IS NOT NULL"
            + self.shown + " AND id >= (SELECT min(id) FROM messages WHERE turn_id = :t AND"
            " conversation_id = :c" + self.shown + ") GROUP BY turn_id ORDER BY min(id)",
            {"c": self.conversation_id, "t": turn_id})
        return [r["turn_id"] for r in rows]

    def drop_turn(self, turn_id: str) -> int:
        """Remove a turn's messages (a retried or regenerated turn); answers how many."""
        with self.store.conn:
            return self.store.conn.execute(
                "DELETE FROM messages WHERE turn_id = ? AND conversation_id = ?",
                (turn_id, self.conversation_id)).rowcount

    def turn_messages(self, turn_id: str) -> list[dict[str, Any]]:
        """A shown turn's messages (role and content), oldest first."""
        return self.store.query("SELECT role, content FROM messages WHERE turn_id = ? AND"
                                " conversation_id = ?" + self.shown + " ORDER BY id",
                                (turn_id, self.conversation_id))

    def reply_versions(self, turn_id: str) -> list[dict[str, Any]]:
        """The replies a turn's reply replaced and the reply itself, oldest first: what a
        regenerated reply keeps to look back at."""
        if not self.shown:
            return []
        row = self.store.query_one(
            "SELECT content, created_at, versions FROM messages WHERE turn_id = ? AND"
            " conversation_id = ? AND role = 'assistant' ORDER BY id DESC LIMIT 1",
            (turn_id, self.conversation_id))
        if row is None:
            return []
        earlier = json.loads(row["versions"]) if row["versions"] else []
        return [*earlier, {"content": row["content"], "created_at": row["created_at"]}]

    def hide_turn(self, turn_id: str, hidden: bool) -> int:
        """Delete an exchange the person can bring back (hidden), or bring it back;
        answers how many messages changed. A file without the mark drops it for good."""
        if not self.shown:
            return self.drop_turn(turn_id) if hidden else 0
        # an exchange kept aside with its branch comes back only with the branch
        aside = " AND branch_hidden IS NULL" if self.store.schema_version() >= 16 else ""
        with self.store.conn:
            return self.store.conn.execute(
                "UPDATE messages SET deleted_at = ? WHERE turn_id = ? AND conversation_id = ?"
                " AND (deleted_at IS NULL) = ?" + aside,
                (self.store.clock() if hidden else None, turn_id, self.conversation_id,
                 int(hidden))).rowcount

    def _insert(self, message: dict[str, Any]) -> int:
        # The one door into the history (and so into backups and exports): no known key
        # passes it, whoever wrote the words (a server's error, a model, a pasted key).
        message = scrub_value(clean_text({**message, "error": to_store(message.get("error"))}))
        extra = {k: message[k] for k in JSON_FIELDS if message.get(k) is not None}
        cursor = self.store.conn.execute(
            "INSERT INTO messages(id, role, content, tool_calls, rejected_tools, usage,"
            " partial, error, turn_id, created_at, reasoning, round_trips, conversation_id)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (self.store.new_id("messages"), message["role"], message["content"],
             *(json.dumps(extra[k], ensure_ascii=False) if k in extra else None
               for k in JSON_FIELDS),
             int(bool(message.get("partial"))), message.get("error"), message.get("turn_id"),
             message.get("created_at") or self.store.clock(), message.get("reasoning") or None,
             message.get("round_trips"), self.conversation_id))
        for name in self.later:
            if message.get(name):
                self.store.conn.execute(f"UPDATE messages SET {name} = ? WHERE id = ?",
                                        (json.dumps(message[name], ensure_ascii=False),
                                         cursor.lastrowid))
        return cursor.lastrowid
