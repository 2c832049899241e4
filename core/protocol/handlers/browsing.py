"""The Memory tab's reads: the node list, rows, a neighbourhood, a node, the changes."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from core.i18n import N_
from core.meaning import engine
from core.protocol.handlers.table import LIMIT, TEXT, Refusal, handles
from core.protocol.packets import PacketType
from core.store import browse

if TYPE_CHECKING:
    from core.protocol.backend_interface import HandlerBackend


@handles(PacketType.LIST_NODES, {"query": TEXT, "kinds": {"type": ["array", "null"]},
                                 "status": {}, "sort": {}, "descending": {}}, reads=True)
def list_nodes(backend: HandlerBackend, body: dict[str, Any]) -> dict[str, Any]:
    store = backend.need_store()
    query = body.get("query", "")
    ids = browse.list_node_ids(store, query=query, kinds=body.get("kinds") or [],
                               status=body.get("status", "any"),
                               sort=body.get("sort", "name"),
                               descending=bool(body.get("descending")))
    found: dict[str, Any] = {"ids": ids, "total": len(ids)}
    if query.strip() and not ids:
        found["why"] = why = browse.why_nothing(store, query)
        if why["meaning"] == "off" and not why["problem"]:
            why["problem"] = engine.problem() or N_("recall by meaning is switched off")
    return found


@handles(PacketType.NODE_ROWS, {"ids": {"type": "array"}}, reads=True)
def node_rows(backend: HandlerBackend, body: dict[str, Any]) -> dict[str, Any]:
    if "ids" not in body:
        raise Refusal(N_("ids must be a list"))
    return {"rows": browse.node_rows(backend.need_store(), body["ids"])}


@handles(PacketType.GET_SUBGRAPH, {"node_id": {}, "depth": {}, "limit": LIMIT}, reads=True)
def get_subgraph(backend: HandlerBackend, body: dict[str, Any]) -> dict[str, Any]:
    return browse.subgraph(backend.need_store(), body.get("node_id"),
                           depth=body.get("depth", 1),
                           limit=body.get("limit", browse.SUBGRAPH_LIMIT))


@handles(PacketType.GET_NODE, {"node_id": {}}, reads=True)
def get_node(backend: HandlerBackend, body: dict[str, Any]) -> dict[str, Any]:
    return browse.node_details(backend.need_store(), body.get("node_id"))


@handles(PacketType.LIST_CHANGES, {"limit": LIMIT}, reads=True)
def list_changes(backend: HandlerBackend, body: dict[str, Any]) -> dict[str, Any]:
    return {"changes": browse.recent_changes(backend.need_store(), body.get("limit", 50))}
