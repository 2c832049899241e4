"""BackendClient: one method per packet; every answer a dict, nothing raised."""

from __future__ import annotations

from typing import Any

from core.protocol.packets import Packet, PacketType
from core.protocol.server import BackendServer


class BackendClient:
    def __init__(self, server: BackendServer) -> None:
        self.server = server

    def _send(self, type_: PacketType, body: dict[str, Any] | None = None,
              timeout: float | None = None) -> dict[str, Any]:
        try:
            return self.server.send(Packet.make(type_, body), timeout=timeout).body
        except Exception as error:  # the seed promises dicts, never exceptions
            return {"success": False, "data": None, "error": f"{type(error).__name__}: {error}",
                    "code": "internal", "params": None}

    def request(self, type_: PacketType, body: dict[str, Any] | None = None) -> dict[str, Any]:
        """Any packet, for the types without a method of their own (the browser's)."""
        return self._send(type_, body)

    def process_message(self, user_input: str, timeout: float | None = None) -> dict[str, Any]:
        return self._send(PacketType.PROCESS_MESSAGE, {"user_input": user_input}, timeout)

    def execute_tool(self, tool_name: str, arguments: Any = None) -> dict[str, Any]:
        return self._send(PacketType.EXECUTE_TOOL,
                          {"tool_name": tool_name, "arguments": arguments or {}})

    def undo(self, change_id: int) -> dict[str, Any]:
        return self._send(PacketType.UNDO, {"change_id": change_id})

    def undo_turn(self, turn_id: str | None = None) -> dict[str, Any]:
        """Take back every memory change of one turn (PROCESS_MESSAGE answers its turn_id),
        or of the newest turn that has changes left."""
        return self._send(PacketType.UNDO_TURN, {"turn_id": turn_id} if turn_id else {})

    def cancel(self) -> dict[str, Any]:
        return self._send(PacketType.CANCEL)

    def test_connection(self, **settings: Any) -> dict[str, Any]:
        return self._send(PacketType.TEST_CONNECTION, settings)

    def get_status(self) -> dict[str, Any]:
        return self._send(PacketType.GET_STATUS)

    def get_config(self) -> dict[str, Any]:
        return self._send(PacketType.GET_CONFIG)

    def update_config(self, api_key: str | None, base_url: str | None = None,
                      model: str | None = None, **settings: Any) -> dict[str, Any]:
        body = {"api_key": api_key, "base_url": base_url, "model": model, **settings}
        return self._send(PacketType.SET_CONFIG, {k: v for k, v in body.items() if v is not None})

    def get_tool_limits(self) -> dict[str, Any]:
        return self._send(PacketType.GET_TOOL_LIMITS)

    def update_tool_limits(self, **limits: int) -> dict[str, Any]:
        return self._send(PacketType.SET_TOOL_LIMITS, limits)

    def get_history(self) -> dict[str, Any]:
        return self._send(PacketType.GET_HISTORY)

    def save_history(self, messages: list[dict[str, Any]]) -> dict[str, Any]:
        return self._send(PacketType.SAVE_HISTORY, {"messages": messages})

    def shutdown(self) -> dict[str, Any]:
        answer = self._send(PacketType.SHUTDOWN)
        self.server.shutdown()
        return answer
