"""The compact memory snapshot put in front of the model with every user message.

It always carries who the user is (a bounded profile: the most-mentioned facts about the
"User" node and about the names the user goes by), the assistant's persona and the active
tasks, then what recall finds for the message (`core.recall`): the facts that match it and
the turns of earlier conversations they came from or that say what it asks, with their
dates. Small models rarely recall on their own, so what a person asks about must already
be here.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass

from core.i18n import tr
from core.recall import TURN_BUDGET, recall
from core.recall.lines import by_day, fact_text, turn_parts, turn_text
from core.store import GraphStore
from core.store.search import EDGE_SELECT, contains_name, named_subjects, search_edges
from core.store.text import normalize_name, short_question
from core.tools.base import PERSON_NODE, fact_line
from core.tools.persona import persona_text
from core.tools.tasks import LIVE_TASKS, task_line
from core.turn.asking import asks_what_remains
from core.writer.grounding import mentions
from core.writer.language import in_first_person

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
    # their name first: a question names them ("What did Caroline research?")
    return store.query(
        EDGE_SELECT + f" WHERE (e.source_id IN ({marks}) OR e.target_id = ?) AND e.status ="
        " 'active' AND e.category = 'general' ORDER BY e.source_id != ?, e.norm_relation !="
        " 'name', e.mention_count DESC, e.updated_at DESC LIMIT ?",
        (*subjects, person["id"], person["id"], PROFILE_FACTS))


def others_named(store: GraphStore, message: str, person: set[str]) -> list[dict]:
    """The subjects `message` names by a whole name that are not the person (`person`:
    the names they go by, casefolded)."""
    return [n for n in named_subjects(store, message) if str(n["name"]).casefold() not in person]


def names_person(message: str, person: set[str]) -> bool:
    """`message` names the person by a name of theirs ("What did Caroline make?";
    `person`: the names they go by, casefolded)."""
    from core.writer.grounding import PERSON  # noqa: PLC0415  (as below)

    folded = normalize_name(message)
    return any(len(name) > 1 and contains_name(folded, normalize_name(name))
               for name in person - PERSON)


def _asks_of_others(store: GraphStore, message: str, profile: list[dict]) -> bool:
    """A question about someone else the memory knows, by name, not about the person
    ("What pets does Melanie have?"): the person's every fact is noise before it (on a
    1.5B model, and seconds of reading on 2 cores). A question that names no one the
    memory knows ("any book for me?", "what's left for the Kyoto trip?") keeps them: they
    say what suits the person, and a capital letter is no one."""
    from core.writer.forget_scope import person_names  # noqa: PLC0415  (as below)

    if not short_question(message) or in_first_person(message):
        return False
    person = person_names(profile)
    return not names_person(message, person) and bool(others_named(store, message, person))


def glance(store: GraphStore, facts: int = 6) -> dict[str, object]:
    """What a new chat shows it already knows: the persona and the facts about the user
    mentioned most (every conversation shares the memory)."""
    persona = persona_text(store)
    lines = []
    for edge in person_profile(store)[:facts]:
        about = "" if edge["source_name"] == PERSON_NODE else f"{edge['source_name']} "
        # "Mei is the sister of you", not "… of User": the person reads it
        target = tr("you") if edge["target_name"] == PERSON_NODE else edge["target_name"]
        lines.append(f"{about}{edge['relation']} {target}")
    return {"persona": "" if persona.endswith("(empty)") else persona.removeprefix("Persona: "),
            "facts": lines}


def active_tasks(store: GraphStore, limit: int = SNAPSHOT_TASKS) -> list[dict]:
    """The tasks in progress or paused, newest first."""
    return store.query(LIVE_TASKS + " AND state IN ('in_progress', 'paused')"
                       " ORDER BY created_at DESC LIMIT ?", (limit,))


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
    from core.writer.whose import is_relative  # noqa: PLC0415  (whose reads the turn)

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
    """A fact as a short sentence (see `core.recall.lines.fact_text`)."""
    return fact_text(edge)


@dataclass(frozen=True)
class Item:
    """One line of a snapshot. `key` names what it shows (a fact `e12`, the persona, the
    task list) and `sense` what it says, without counts or dates: a later snapshot in the
    same conversation shows the line again only when the sense changed."""

    section: str  # profile, people, persona, tasks, related or history
    key: str
    line: str
    sense: str
    day: str = ""  # a turn's: turns are shown under their day (`core.recall.lines.by_day`)


def _fact(section: str, edge: dict, plain: bool) -> Item:
    return Item(section, f"e{edge['id']}", plain_line(edge) if plain else f"  {fact_line(edge)}",
                f"{edge['source_name']}|{edge['relation']}|{edge['target_name']}")


def snapshot_items(store: GraphStore, message: str, plain: bool = False,
                   in_prompt: Collection[int] = (), budget: int = TURN_BUDGET) -> list[Item]:
    """Profile, people, persona, active tasks and what recall finds for `message`, as
    lines. `plain`: facts as short sentences, for a model that answers from the snapshot
    and calls no tools. `in_prompt`: the messages the model is shown already (the
    conversation's recent ones), not quoted again. `budget`: recall's, in estimated
    tokens (`core.turn.pace`)."""
    profile = person_profile(store)
    lean = plain and _asks_of_others(store, message, profile)
    if lean:  # who the person is, not all they said
        profile = [e for e in profile if e["source_name"] == PERSON_NODE
                   and normalize_name(e["relation"]) == "name"]
    if plain:
        profile = sorted(profile, key=lambda e: e["source_name"] != PERSON_NODE)
    items, used = [], 0
    for edge in profile:
        item = _fact("profile", edge, plain)
        used += len(item.line)
        if used > PROFILE_CHARS:
            break
        items.append(item)
    if lean:  # the profile is not "nothing yet": it is left out
        items.append(Item("lean", "lean", "", ""))
    people = their_people(store, profile) if plain and not lean else []
    items += [_fact("people", e, plain) for e in people]
    persona = persona_text(store)
    if not persona.endswith("(empty)"):
        items.append(Item("persona", "persona", persona, persona))
    tasks = "\n".join(f"  {task_line(store, t)}" for t in active_tasks(store))
    items.append(Item("tasks", "tasks", tasks, tasks))
    found = recall(store, message, budget=budget, exclude_messages=in_prompt,
                   skip_facts={int(i.key[1:]) for i in items if i.key.startswith("e")},
                   fact_line=plain_line if plain else lambda e: f"  {fact_line(e)}")
    if found.span is not None and found.span.shown():
        line = f"The time asked about: {found.span.shown()}."
        items.append(Item("span", "span", line, line))
    items += [_fact("related", e, plain) for e in found.facts]
    turns = found.turns
    if asks_what_remains(message):
        turns = _without_done_steps(store, turns)
    items += [_turn(m) for m in turns]
    return items


def _without_done_steps(store: GraphStore, turns: list[dict]) -> list[dict]:
    """Asked what remains, the turns that name a step now done are left out: the task
    list says what is left, and the turn that made the plan names every step ("buy the
    wine" quoted beside the open tasks was listed as left, in Chinese, by the 1.5B model)."""
    done = [str(t["name"]) for t in store.query(
        LIVE_TASKS + " AND state NOT IN ('in_progress', 'paused')"
        " ORDER BY updated_at DESC LIMIT ?", (SNAPSHOT_TASKS,))]
    if not done:
        return turns
    still_open = [str(t["name"]) for t in active_tasks(store)]
    return [m for m in turns
            if not any(mentions(name, m["content"], still_open) for name in done)]


def _turn(message: dict) -> Item:
    """A turn of an earlier conversation as a line (see `core.recall.lines.turn_text`)."""
    day, said = turn_parts(message)
    return Item("history", f"m{message['id']}", said, turn_text(message), day)


def _section_lines(items: list[Item], section: str) -> list[str]:
    """A section's lines; turns under their day."""
    shown = [i for i in items if i.section == section and i.line]
    if section == "history":
        return by_day([(i.day, i.line) for i in shown])
    return [i.line for i in shown]


HEADINGS = {"people": "People in their life:", "tasks": "Active tasks:",
            "related": "Related memories:",
            "history": "From earlier conversations (the words as said then; the memories"
                       " above say what is true now):"}


def _profile_heading(plain: bool) -> str:
    return "About the user (you are talking to them):" if plain else "About the user:"


def render_full(items: list[Item], plain: bool = False) -> str:
    """Every section, in order; an empty one is left out (every line is sent with the
    message), except the profile, which says "nothing yet"."""
    profile = [i.line for i in items if i.section == "profile"]
    lean = any(i.section == "lean" for i in items)
    lines = [] if lean and not profile else [
        _profile_heading(plain) + (" nothing yet" if not profile else ""), *profile]
    for section in ("people", "persona", "tasks", "related", "history", "span"):
        shown = _section_lines(items, section)
        if shown and section in HEADINGS:
            lines.append(HEADINGS[section])
        lines += shown
    return quoted("\n".join(lines))


def gone_keys(items: list[Item], shown: dict[str, str], active: set[str]) -> list[str]:
    """The shown facts (key → sense) no longer true: not active any more (`active`: the
    shown fact keys still active), or saying something else now."""
    current = {i.key: i.sense for i in items}
    return [k for k in shown if k.startswith("e") and (
        k not in active or (k in current and current[k] != shown[k]))]


def render_changes(items: list[Item], shown: dict[str, str], lines_shown: dict[str, str],
                   gone_now: list[str]) -> str:
    """What changed since the snapshot earlier in this conversation (`shown`: key →
    sense; `lines_shown`: key → line, as sent): new lines, the facts no longer true
    (`gone_now`, see `gone_keys`), a task list that changed, related memories not shown
    yet. The earlier messages stay exactly as they were sent, so a server's prompt cache
    reuses them, and only this is new."""
    new = [i for i in items if shown.get(i.key) != i.sense]
    gone = [lines_shown[k] for k in gone_now]
    lines = []
    facts = [i.line for i in new if i.section in ("profile", "people")]
    if facts:
        lines += ["New about the user and their people:", *facts]
    if gone:
        lines += ["No longer true (replaced or forgotten):", *gone]
    for item in new:
        if item.section == "persona":
            lines.append(item.line)
        elif item.section == "tasks":
            lines += ["Active tasks now:", item.line] if item.line else ["Active tasks now: none"]
    for section in ("related", "history"):
        shown_now = _section_lines(new, section)
        if shown_now:
            lines += [HEADINGS[section], *shown_now]
    lines += [i.line for i in new if i.section == "span"]
    return quoted("\n".join(["Changes since the snapshot above:", *lines] if lines else
                            ["No changes since the snapshot above."]))


def memory_snapshot(store: GraphStore, message: str, plain: bool = False) -> str:
    """The whole snapshot for `message` (see `snapshot_items`)."""
    return render_full(snapshot_items(store, message, plain), plain)


def active_fact_keys(store: GraphStore, keys: list[str]) -> set[str]:
    """Which of the fact keys (`e12`) still name an active fact."""
    ids = [int(k[1:]) for k in keys if k.startswith("e") and k[1:].isdigit()]
    found: set[str] = set()
    for start in range(0, len(ids), 500):
        chunk = ids[start:start + 500]
        found |= {f"e{r['id']}" for r in store.query(
            f"SELECT id FROM edges WHERE id IN ({', '.join('?' * len(chunk))}) AND status ="
            " 'active'", tuple(chunk))}
    return found


def quoted(text: str) -> str:
    """Stored text cannot close the snapshot's tags and pose as the prompt around it."""
    return text.replace("<memory_snapshot", "‹memory_snapshot").replace(
        "</memory_snapshot", "‹/memory_snapshot")
