"""The compact memory snapshot put in front of the model with every user message.

It always carries who the user is (a bounded profile: the most-mentioned facts about the
"User" node and about the names the user goes by), the assistant's persona and the active
tasks, then the memories that share words with the message. Small models rarely recall on
their own, so what a person asks about themselves most must already be here.
"""

from __future__ import annotations

from core.store import GraphStore
from core.store.search import EDGE_SELECT, search_edges
from core.store.text import normalize_name
from core.tools.base import PERSON_NODE, fact_line
from core.tools.persona import persona_text
from core.tools.tasks import task_line

SNAPSHOT_MEMORIES = 12
SNAPSHOT_TASKS = 5
PROFILE_FACTS = 15
PROFILE_CHARS = 1_500
# Relations that give the user's name: facts about that name belong to the profile too.
NAME_RELATIONS = ("name", "name is", "is called", "called", "is named", "named", "叫",
                  "名字", "名字是", "名叫", "姓名")


def person_profile(store: GraphStore) -> list[dict]:
    """The user's core facts, most mentioned and newest first, within PROFILE_FACTS."""
    person = store.find_node(PERSON_NODE)
    if person is None:
        return []
    names = [r["target_id"] for r in store.query(
        "SELECT target_id FROM edges WHERE source_id = ? AND status = 'active' AND"
        f" norm_relation IN ({', '.join('?' * len(NAME_RELATIONS))})",
        (person["id"], *[normalize_name(r) for r in NAME_RELATIONS]))]
    subjects = [person["id"], *names[:3]]
    marks = ", ".join("?" * len(subjects))
    return store.query(
        EDGE_SELECT + f" WHERE (e.source_id IN ({marks}) OR e.target_id = ?) AND e.status ="
        " 'active' AND e.category = 'general' ORDER BY e.source_id != ?, e.mention_count"
        " DESC, e.updated_at DESC LIMIT ?", (*subjects, person["id"], person["id"],
                                            PROFILE_FACTS))


def glance(store: GraphStore, facts: int = 6) -> dict[str, object]:
    """What a new chat shows it already knows: the persona and the facts about the user
    mentioned most (every conversation shares the memory)."""
    persona = persona_text(store)
    lines = []
    for edge in person_profile(store)[:facts]:
        about = "" if edge["source_name"] == PERSON_NODE else f"{edge['source_name']} "
        lines.append(f"{about}{edge['relation']} {edge['target_name']}")
    return {"persona": "" if persona.endswith("(empty)") else persona.removeprefix("Persona: "),
            "facts": lines}


def active_tasks(store: GraphStore, limit: int = SNAPSHOT_TASKS) -> list[dict]:
    """The tasks in progress or paused, newest first."""
    return store.query("SELECT * FROM nodes WHERE kind = 'task' AND deleted_at IS NULL"
                       " AND state IN ('in_progress', 'paused') ORDER BY created_at DESC"
                       " LIMIT ?", (limit,))


def related_facts(store: GraphStore, message: str, profile: list[dict]) -> list[dict]:
    """The facts most relevant to `message` that the profile does not hold already."""
    shown = {e["id"] for e in profile}
    return [e for e in search_edges(store, message, categories=["general"],
                                    limit=SNAPSHOT_MEMORIES + len(shown))
            if e["id"] not in shown][:SNAPSHOT_MEMORIES]


PEOPLE_FACTS = 12


def their_people(store: GraphStore, profile: list[dict]) -> list[dict]:
    """Facts about the people the person is linked to ("User -sister-> Mei": where Mei
    lives, what she does), most mentioned first: asked "where does my sister live?", a
    small model answered the person's own city when Mei's was not in front of it."""
    from core.turn.whose import is_relative  # noqa: PLC0415  (whose reads the turn)

    people = {e["target_id"] for e in profile
              if e["source_name"] == PERSON_NODE and is_relative(e["relation"])}
    if not people:
        return []
    marks = ", ".join("?" * len(people))
    shown = {e["id"] for e in profile}
    return [e for e in store.query(
        EDGE_SELECT + f" WHERE e.source_id IN ({marks}) AND e.status = 'active' AND"
        " e.category = 'general' ORDER BY e.mention_count DESC, e.updated_at DESC LIMIT ?",
        (*people, PEOPLE_FACTS)) if e["id"] not in shown]


def plain_line(edge: dict) -> str:
    """A fact as a short sentence a small model answers from: "lives in Shanghai" under
    the person's heading, "Mei lives in Beijing" for anyone else; no arrows, counts or
    dates (a 1.5B model said "I don't have enough information" with
    `User -pets-> guitar (x2, 2026-11-30)` in front of it)."""
    about = "" if edge["source_name"] == PERSON_NODE else f"{edge['source_name']} "
    target = "you" if edge["target_name"] == PERSON_NODE else edge["target_name"]
    return f"- {about}{edge['relation']} {target}"


def memory_snapshot(store: GraphStore, message: str, plain: bool = False) -> str:
    """Profile, persona, active tasks and the memories most relevant to `message`; a
    section with nothing in it is left out. `plain`: facts as short sentences, for a
    model that answers from the snapshot and calls no tools."""
    profile = person_profile(store)
    if plain:
        profile = sorted(profile, key=lambda e: e["source_name"] != PERSON_NODE)
    heading = "About the user (you are talking to them):" if plain else "About the user:"
    lines = [heading + (" nothing yet" if not profile else "")]
    used = 0
    for edge in profile:
        line = plain_line(edge) if plain else f"  {fact_line(edge)}"
        used += len(line)
        if used > PROFILE_CHARS:
            break
        lines.append(line)
    people = their_people(store, profile) if plain else []
    if people:
        lines.append("People in their life:")
        lines += [plain_line(e) for e in people]
    persona = persona_text(store)
    if not persona.endswith("(empty)"):
        lines.append(persona)
    tasks = active_tasks(store)
    if tasks:  # empty sections are left out: every line is sent with every message
        lines.append("Active tasks:")
        lines += [f"  {task_line(store, t)}" for t in tasks]
    relevant = related_facts(store, message, profile + people)
    if relevant:
        lines.append("Related memories:")
        lines += [plain_line(e) if plain else f"  {fact_line(e)}" for e in relevant]
    return quoted("\n".join(lines))


def quoted(text: str) -> str:
    """Stored text cannot close the snapshot's tags and pose as the prompt around it."""
    return text.replace("<memory_snapshot", "‹memory_snapshot").replace(
        "</memory_snapshot", "‹/memory_snapshot")
