"""The handler table: `@handles(PacketType.X, schema)` puts a handler in `HANDLERS`.

Each handler takes the backend (what `core.protocol.backend_interface` lists: the open
store, the config, the model session) and the packet's body, checked first against the
handler's JSON Schema, and answers the data of a successful answer. It refuses with
`Refusal` (or any `core.errors.CodedError`), whose code and words become the failed
answer.

Two marks say how a packet may be scheduled: `reads` (it only reads the memory, through
`need_store()`, `history()` and `memory_state()`, so the read lane may answer it on its
own connection) and `long_running` (it can take minutes: an import, an undo, a turn; the
read lane answers reads while one runs, and a caller's timeout stops it rather than
leaving it to finish unseen).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from jsonschema import Draft202012Validator

from core.errors import CodedError, ErrorCode
from core.i18n import N_
from core.protocol.packets import PacketType
from core.tools.validation import describe_problem

if TYPE_CHECKING:
    from core.protocol.backend_interface import HandlerBackend

Run = Callable[["HandlerBackend", dict[str, Any]], Any]


class Refusal(CodedError):
    """A packet that cannot be served: its code, words, and what is known (`data`)."""

    def __init__(self, template: str, /, code: ErrorCode | None = None, data: Any = None,
                 **params: Any) -> None:
        super().__init__(template, code, **params)
        self.data = data


@dataclass(frozen=True)
class Handler:
    run: Run
    validator: Draft202012Validator | None
    # True, or a test of the body: EXECUTE_TOOL reads when its tool only reads
    reads: bool | Callable[[dict[str, Any]], bool] = False
    long_running: bool = False

    def check(self, body: dict[str, Any]) -> None:
        """Refuse a body that does not fit the schema, naming the first problem."""
        if self.validator is None:
            return
        errors = sorted(self.validator.iter_errors(body), key=lambda e: list(e.path))
        if errors:
            raise Refusal(N_("the packet's body does not fit: {problem}"),
                          ErrorCode.INVALID, problem=describe_problem(errors[0], "body"))


HANDLERS: dict[PacketType, Handler] = {}


def handles(packet_type: PacketType, schema: dict[str, Any] | None = None, *,
            reads: bool | Callable[[dict[str, Any]], bool] = False,
            long_running: bool = False) -> Callable[[Run], Run]:
    """Register the decorated function as the handler of `packet_type`. `schema` lists
    the body's properties (an object schema is made around them when only properties
    are given); `reads` and `long_running` are the marks the module docstring explains."""
    if schema is not None and "type" not in schema:
        schema = {"type": "object", "properties": schema}

    def register(run: Run) -> Run:
        if packet_type in HANDLERS:
            raise RuntimeError(f"{packet_type} has two handlers")
        HANDLERS[packet_type] = Handler(run, Draft202012Validator(schema) if schema else None,
                                        reads, long_running)
        return run

    return register


def reads_memory(packet_type: PacketType, body: Any = None) -> bool:
    """Whether a packet only reads the memory (the read lane may answer it)."""
    handler = HANDLERS.get(packet_type)
    if handler is None:
        return False
    if callable(handler.reads):
        return isinstance(body, dict) and bool(handler.reads(body))
    return handler.reads


def runs_long(packet_type: PacketType) -> bool:
    handler = HANDLERS.get(packet_type)
    return handler is not None and handler.long_running


# Schema parts the handlers share.
WHOLE = {"type": "integer", "not": {"type": "boolean"}}
TEXT = {"type": "string"}
NAME = {"type": "string", "minLength": 1}
ID_LIST = {"type": "array", "items": WHOLE}
LIMIT = {"type": "integer", "minimum": 1, "maximum": 1000}
