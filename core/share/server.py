"""The MCP server over one memory folder, built on the official SDK's low-level `Server`.

The tools are the registry's tools marked for apps (`core.tools.registry.APPS`), with
the descriptions written for them and the validator's own schemas; each call runs
through the same `ToolExecutor` as the model's, on a worker thread, one at a time (the
store has one connection). The resources are what an app reads before it answers: who
the person is, the assistant's persona and the tasks under way.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import anyio
import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.shared.exceptions import MCPError

from core.config import Config, load_config
from core.paths import config_path, database_path, secure_home
from core.share.budget import AppBudget
from core.share.identity import client_actor, http_via, stdio_via
from core.store import GraphStore
from core.store.opening import open_checked
from core.tools import REGISTRY, ToolExecutor, approvals
from core.tools.persona import persona_text
from core.tools.registry import APPS
from core.tools.schemas import PARAMETERS
from core.tools.tasks import task_query
from core.turn.snapshot import memory_snapshot

SERVER_NAME = "TrulyMEM"
INSTRUCTIONS = (
    "TrulyMEM is the person's own long-term memory: a graph of facts about them, the "
    "people and things in their life, and the tasks they are working on, kept on their "
    "computer and shared with you. Recall before answering anything personal; save what "
    "the person tells you about themselves as short facts (\"User\" is the person); "
    "forget or correct only when they ask. The person sees and can undo every change.")
RESOURCES = {
    "memory://snapshot": ("Snapshot", "Who the person is (their most-mentioned facts), the "
                          "assistant's persona and the tasks under way, in a few lines."),
    "memory://persona": ("Persona", "How the person wants their assistant to be: name, "
                         "role, speaking style."),
    "memory://tasks": ("Active tasks", "The person's tasks in progress, newest first."),
}


class SharedMemory:
    """One memory folder as other apps use it: the store, its executor, recall by
    meaning (when on), and a budget per app session."""

    def __init__(self, home: Path, read_only: bool = False) -> None:
        secure_home(home)
        config, self.config_warning = load_config(config_path(home))
        self.config: Config = config
        opened = open_checked(database_path(home), config.trash_days)
        if opened.store is None:
            raise RuntimeError(opened.error or "the memory cannot be opened")
        self.store: GraphStore = opened.store
        # `--read-only`, or a damaged file opened for reading only, holds whatever the
        # settings say
        self._forced_read_only = bool(read_only) or bool(self.store.read_only)
        self.read_only = config.share_read_only or self._forced_read_only
        self.store_warning = opened.warning
        self.executor = ToolExecutor(self.store)
        self.meaning: Any = None
        self._lock = threading.Lock()  # one call at a time on the one connection
        self._budgets: dict[str, AppBudget] = {}
        self._vias: dict[str, str] = {}
        self._config_file = config_path(home)
        self._config_stamp = self._stamp()

    def _stamp(self) -> tuple[int, int] | None:
        try:
            info = self._config_file.stat()
        except OSError:
            return None
        return info.st_mtime_ns, info.st_size

    def follow_settings(self) -> str | None:
        """The person's sharing switches take effect at the next call, without a restart:
        answers why calls are refused now (sharing turned off), or None."""
        stamp = self._stamp()
        if stamp != self._config_stamp:
            self._config_stamp = stamp
            config, _warning = load_config(self._config_file)
            self.config = config
            self.read_only = config.share_read_only or self._forced_read_only
        if not self.config.share_memory:
            return ("the person has stopped sharing this memory with other apps (TrulyMEM "
                    "settings: Share memory with other apps); nothing was read or written")
        return None

    def start_meaning(self) -> None:
        """Recall by meaning in this process too; it follows the window's index when the
        window keeps it (see `core.meaning.indexer`)."""
        from core.meaning import engine  # noqa: PLC0415  (numpy only when wanted)

        if not self.config.recall_by_meaning or engine.problem() is not None:
            return
        from core.meaning.indexer import Meaning  # noqa: PLC0415

        self.meaning = Meaning(self.store.path, writable=not self.store.read_only)
        self.store.meaning = self.meaning
        self.store.on_commit.append(lambda change: self.meaning.changed(change.touched()))
        self.meaning.start()

    def close(self) -> None:
        with self._lock:
            if self.meaning is not None:
                self.meaning.stop()
                self.meaning = None
            self.store.close()

    def tools(self) -> list[str]:
        """The tools offered: those for apps, and only the reading ones when read-only."""
        return [name for name, spec in REGISTRY.items()
                if APPS in spec.audience and not (self.read_only and spec.writes)]

    def via_of(self, session: str, find: Any) -> str:
        """How the session's app reached the memory, found once per session (over HTTP
        that reads the system's socket tables)."""
        via = self._vias.get(session)
        if via is None:
            via = self._vias[session] = find()
        return via

    def budget(self, session: str) -> AppBudget:
        budget = self._budgets.get(session)
        if budget is None:
            budget = AppBudget(self.store, self.config.tool_limits["destroyed_rows_max"],
                               self.config.share_write_rows)
            self._budgets[session] = budget
        return budget

    def call(self, tool: str, arguments: Any, client: str | None,
             session: str, via: str | None = None) -> dict[str, Any]:
        """Run one tool for an app; `{"success": False, "error": ...}` on any refusal.
        `via` is how the app reached the memory (`core.share.identity`)."""
        stopped = self.follow_settings()
        if stopped:
            return {"success": False, "error": stopped}
        spec = REGISTRY.get(tool)
        if spec is None or APPS not in spec.audience:
            offered = ", ".join(self.tools())
            return {"success": False, "error": f"unknown tool {tool!r}; the tools are: "
                                                f"{offered}"}
        if spec.writes and self.read_only:
            why = self.store.read_only or "the person shares this memory read-only"
            return {"success": False, "error": f"{tool}: {why}; nothing was written"}
        with self._lock:
            budget, actor = self.budget(session), client_actor(client)
            result = self.executor.execute(tool, arguments, actor=actor, limiter=budget,
                                           via=via)
            over = result.get("over_budget")
            if result["success"] or not over:
                return result
            asked, full = approvals.app_request(self.store, over, actor, via)
            asked_id = asked["id"] if asked is not None else None
            return {"success": False, "error": budget.refusal_text(tool, over, asked_id, full),
                    "approval_id": asked_id}

    def read(self, uri: str) -> str:
        stopped = self.follow_settings()
        if stopped:
            raise PermissionError(stopped)
        with self._lock:
            if uri == "memory://persona":
                return persona_text(self.store)
            if uri == "memory://tasks":
                return task_query(self.store, {"state_filter": "in_progress",
                                               "limit": 20}).text
            if uri == "memory://snapshot":
                return memory_snapshot(self.store, "")
        raise ValueError(f"unknown resource {uri!r}; the resources are: "
                         + ", ".join(RESOURCES))


def _client_name(ctx: ServerRequestContext[Any]) -> str | None:
    params = ctx.session.client_params
    return params.client_info.name if params is not None else None


def _via(ctx: ServerRequestContext[Any]) -> str:
    """How this app reached the memory: the HTTP connection's other end, else the
    program that started this stdio server."""
    request = ctx.request
    scope = getattr(request, "scope", None)
    if not isinstance(scope, dict) or scope.get("type") != "http":
        return stdio_via()
    server = scope.get("server") or (None, None)
    return http_via(scope.get("client"), server[1])


def _session_key(ctx: ServerRequestContext[Any]) -> str:
    """One budget per connection: the HTTP session when there is one, else the client
    (a stdio server serves one client)."""
    headers = getattr(ctx.request, "headers", None)
    session_id = headers.get("mcp-session-id") if headers is not None else None
    return session_id or f"client:{_client_name(ctx)}"


def build_server(memory: SharedMemory) -> Server[Any]:
    """The SDK's server with this memory's tools and resources."""

    def tool_of(name: str) -> types.Tool:
        spec = REGISTRY[name]
        return types.Tool(
            name=name, description=spec.for_apps, input_schema=PARAMETERS[name],
            annotations=types.ToolAnnotations(
                read_only_hint=not spec.writes, destructive_hint=bool(spec.destroys),
                idempotent_hint=not spec.writes, open_world_hint=False))

    async def list_tools(_ctx: ServerRequestContext[Any],
                         _params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        return types.ListToolsResult(tools=[tool_of(n) for n in memory.tools()])

    async def call_tool(ctx: ServerRequestContext[Any],
                        params: types.CallToolRequestParams) -> types.CallToolResult:
        client, session = _client_name(ctx), _session_key(ctx)
        via = await anyio.to_thread.run_sync(memory.via_of, session, lambda: _via(ctx))
        result = await anyio.to_thread.run_sync(
            memory.call, params.name, params.arguments or {}, client, session, via)
        if not result["success"]:
            return types.CallToolResult(
                content=[types.TextContent(text=result["error"])], is_error=True)
        data = result["data"]
        return types.CallToolResult(content=[types.TextContent(text=data["result"])])

    async def list_resources(
            _ctx: ServerRequestContext[Any],
            _params: types.PaginatedRequestParams | None) -> types.ListResourcesResult:
        return types.ListResourcesResult(resources=[
            types.Resource(uri=uri, name=name, description=text, mime_type="text/plain")
            for uri, (name, text) in RESOURCES.items()])

    async def read_resource(ctx: ServerRequestContext[Any],
                            params: types.ReadResourceRequestParams) -> types.ReadResourceResult:
        uri = str(params.uri)
        try:
            text = await anyio.to_thread.run_sync(memory.read, uri)
        except (ValueError, PermissionError) as error:  # the client's mistake, said plainly
            raise MCPError(types.INVALID_PARAMS, str(error)) from None
        return types.ReadResourceResult(contents=[
            types.TextResourceContents(uri=uri, text=text, mime_type="text/plain")])

    return Server(SERVER_NAME, version=_version(), instructions=INSTRUCTIONS,
                  on_list_tools=list_tools, on_call_tool=call_tool,
                  on_list_resources=list_resources, on_read_resource=read_resource)


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version  # noqa: PLC0415

    try:
        return version("trulymem")
    except PackageNotFoundError:
        return "0"
