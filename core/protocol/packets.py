"""The packet protocol between a front end and the backend (the seed's API, kept as is)."""

from __future__ import annotations

import queue
import time
import uuid
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from core.errors import CodedError, ErrorCode


class PacketType(Enum):
    PROCESS_MESSAGE = "process_message"
    EXECUTE_TOOL = "execute_tool"
    GET_STATUS = "get_status"
    GET_CONFIG = "get_config"
    SET_CONFIG = "set_config"
    GET_TOOL_LIMITS = "get_tool_limits"
    SET_TOOL_LIMITS = "set_tool_limits"
    GET_HISTORY = "get_history"
    SAVE_HISTORY = "save_history"
    SHUTDOWN = "shutdown"
    CANCEL = "cancel"  # beyond the seed: stop the running turn
    UNDO = "undo"  # beyond the seed: undo one logged memory change
    TEST_CONNECTION = "test_connection"  # beyond the seed: try settings before saving them
    # beyond the seed: the graph browser's reads and the person's corrections
    LIST_NODES = "list_nodes"
    NODE_ROWS = "node_rows"
    GET_SUBGRAPH = "get_subgraph"
    GET_NODE = "get_node"
    LIST_CHANGES = "list_changes"
    CORRECT_MEMORY = "correct_memory"
    EXPORT_MEMORY = "export_memory"
    IMPORT_MEMORY = "import_memory"
    # beyond the seed: the person stays in charge of what the model destroys
    UNDO_TURN = "undo_turn"
    LIST_APPROVALS = "list_approvals"
    DECIDE_APPROVAL = "decide_approval"
    TRASH_STATUS = "trash_status"
    EMPTY_TRASH = "empty_trash"
    # beyond the seed: backups
    LIST_BACKUPS = "list_backups"
    RESTORE_BACKUP = "restore_backup"
    UNDO_RESTORE = "undo_restore"
    # beyond the seed: what a turn touched, and deleting an exchange
    TURN_TOUCHED = "turn_touched"
    DELETE_TURN = "delete_turn"
    RESTORE_TURN = "restore_turn"
    # beyond the seed: an edited message's branches
    SWITCH_BRANCH = "switch_branch"
    # beyond the seed: the endpoint's models (the model picker)
    LIST_MODELS = "list_models"
    # beyond the seed: conversations
    LIST_CONVERSATIONS = "list_conversations"
    NEW_CONVERSATION = "new_conversation"
    OPEN_CONVERSATION = "open_conversation"
    RENAME_CONVERSATION = "rename_conversation"
    DELETE_CONVERSATION = "delete_conversation"
    RESTORE_CONVERSATION = "restore_conversation"
    SEARCH_CONVERSATIONS = "search_conversations"
    EXPORT_CONVERSATION = "export_conversation"
    # beyond the seed: the review inbox, redo, and the counts the status bar shows
    REVIEW_LIST = "review_list"
    REVIEW_KEEP = "review_keep"
    REDO = "redo"
    MEMORY_STATE = "memory_state"
    # beyond the seed: what other apps wrote and took away in the last hour
    APPS_ACTIVITY = "apps_activity"
    # beyond the seed: past conversations brought in from elsewhere
    IMPORT_HISTORY = "import_history"  # keep an export's conversations (sends nothing)
    BUILD_MEMORY = "build_memory"  # start building the memory from them, between packets
    STOP_BUILDING = "stop_building"  # stop once the current conversation is remembered
    LIST_IMPORTS = "list_imports"  # the imports, and the build's estimate and state
    UNDO_IMPORT = "undo_import"  # take back every fact an import made, as one change
    # beyond the seed: the same memory on every device, through a synced folder
    SYNC_STATUS = "sync_status"  # this device, the others, conflicts, refused files
    SYNC_START = "sync_start"  # start a set in a folder; answers the pairing code
    SYNC_JOIN = "sync_join"  # join the set in a folder with its code
    SYNC_NOW = "sync_now"  # write this device's changes, apply the others'
    SYNC_LEAVE = "sync_leave"  # this device stops syncing; its memory stays
    # beyond the seed: models this computer runs itself (see core.models)
    LOCAL_MODELS = "local_models"  # the catalogue: what is here, what the computer lacks
    MODEL_GET = "model_get"  # fetch one beside the chat ("model_download" events)
    MODEL_CANCEL = "model_cancel"  # stop its download; the part stays
    MODEL_REMOVE = "model_remove"  # delete its file
    BUILD_RUNTIME = "build_runtime"  # build llama-server once ("runtime_build" events)
    STOP_RUNTIME_BUILD = "stop_runtime_build"


@dataclass
class Packet:
    id: str
    type: PacketType
    body: dict[str, Any] = field(default_factory=dict)
    response_queue: queue.Queue | None = None
    created_at: float = field(default_factory=time.time)

    @classmethod
    def make(cls, type_: PacketType, body: dict[str, Any] | None = None) -> Packet:
        return cls(id=uuid.uuid4().hex, type=type_, body=body or {})


@dataclass
class PacketResponse:
    """The answer to one packet. `success`, `data` and `error` are the seed's; `code`
    (an `ErrorCode` value) and `params` say why a packet failed in a form a program acts
    on, while `error` says it in the person's language."""

    id: str
    success: bool
    data: Any = None
    error: str | None = None
    code: str | None = None
    params: dict[str, Any] | None = None

    @property
    def body(self) -> dict[str, Any]:
        """The answer as one dict: `success`, `data`, `error`, `code`, `params`, and for
        the seed's callers data's keys at the top level too (new code reads `data`)."""
        answer: dict[str, Any] = {}
        if isinstance(self.data, dict):
            answer.update(self.data)
        answer.update({"success": self.success, "data": self.data, "error": self.error,
                       "code": self.code, "params": self.params})
        return answer

    @classmethod
    def ok(cls, packet_id: str, data: Any = None) -> PacketResponse:
        return cls(packet_id, True, data)

    @classmethod
    def fail(cls, packet_id: str, error: str, code: ErrorCode = ErrorCode.INVALID,
             params: dict[str, Any] | None = None, data: Any = None) -> PacketResponse:
        return cls(packet_id, False, data, error, code.value, params)

    @classmethod
    def refused(cls, packet_id: str, error: CodedError, data: Any = None) -> PacketResponse:
        """A coded error as the answer: its code, parameters and words."""
        return cls.fail(packet_id, error.said(), error.code, _plain(error.params), data)


def _plain(params: dict[str, Any]) -> dict[str, Any]:
    """Parameters as JSON would carry them (an id stays a number, anything else text)."""
    return {k: v if isinstance(v, (int, float, str, bool, type(None))) else str(v)
            for k, v in params.items()}
