"""What went wrong, as a code a program acts on and words a person reads.

Every refusal the backend gives carries an `ErrorCode` and the parameters its words are
made from; the words (`PacketResponse.error`) are in the person's language, and no code
anywhere looks inside them. Tools hand the model the same error in English: what the model
reads is data, not the window's words.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from core.i18n import tr


class ErrorCode(StrEnum):
    """Why a packet was not served; the README lists them with the packets."""

    CANCELLED = "cancelled"  # the person stopped it: not a fault
    NO_KEY = "no_key"  # no API key is set
    NOT_FOUND = "not_found"  # the row, turn, change, backup or file is not there
    NOTHING_TO_DO = "nothing_to_do"  # nothing left to undo, redo or take back
    CONFLICT = "conflict"  # a later change stands in the way
    INVALID = "invalid"  # the body, a setting or an argument does not fit
    READ_ONLY = "read_only"  # the memory is open for reading only
    STORE = "store"  # the memory store is not open, damaged, locked or full
    TIMEOUT = "timeout"  # it took longer than its limit
    ENDPOINT = "endpoint"  # the model's service refused or failed
    MODEL_NOT_FOUND = "model_not_found"  # the service does not know the model
    NOT_RUNNING = "not_running"  # the backend has stopped
    INTERNAL = "internal"  # a bug: the log has its trace


class CodedError(Exception):
    """An error with its code and the parameters of its message.

    `template` is the English text marked for translation (`N_`), with `{name}` fields
    filled from `params`: `str(error)` is the English (for the model and the log),
    `said()` the person's language. A subclass names its usual code.
    """

    code: ErrorCode = ErrorCode.INVALID

    def __init__(self, template: str, /, code: ErrorCode | None = None,
                 **params: Any) -> None:
        self.template, self.params = template, params
        if code is not None:
            self.code = code
        super().__init__(template.format(**params) if params else template)

    def said(self) -> str:
        """The message in the person's language."""
        return tr(self.template, **self.params)
