"""A relative is one node, whatever words name them; a thing of the person's that they
name is linked to them.

"My father …" in one turn became a node named "父亲" beside the father's named node, so a
later forget asked in the other language matched nothing and both copies stayed. So a
fact whose subject is only a kin word ("father", "my dad", "我父亲", "姐姐") is the fact
of the relative the person is linked to by that kind ("User -father-> Wang Jun"), when
there is exactly one.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from core.meaning.names import is_place
from core.store import GraphStore
from core.tools.base import PERSON_NODE
from core.tools.one_value import family
from core.writer import kin, own_words, slots, whose
from core.writer.calls import triplets_of, with_triplets

_OWN = ("my ", "我的", "我")
kin_person = {"user", "i", "me", "我", "用户", PERSON_NODE.casefold()}


def _kind_named(subject: str) -> str | None:
    """The kind of relative a subject made only of a kin word names ("my dad", "我姐姐")."""
    word = subject.strip().casefold()
    for own in _OWN:
        word = word.removeprefix(own).strip()
    return kin.kind_of(word)


def named(store: GraphStore) -> dict[str, list[str]]:
    """The person's relatives by kind: kind → the names they are linked by."""
    rows = store.query(
        "SELECT e.relation, t.name FROM edges e JOIN nodes s ON s.id = e.source_id"
        " JOIN nodes t ON t.id = e.target_id WHERE s.name = ? AND e.status = 'active'"
        " AND e.category = 'general'", (PERSON_NODE,))
    found: dict[str, list[str]] = {}
    for row in rows:
        kind = kin.kin_of_relation(row["relation"])
        if kind and _kind_named(row["name"]) is None and row["name"] not in found.get(
                kind, []):
            found.setdefault(kind, []).append(row["name"])
    return found


def _named_so(kind: str, name: str, message: str) -> bool:
    """The message gives the relative of `kind` this name ("my husband David", "我妈妈叫
    David"): a name that is also a town (David, Panama) is still their name."""
    return any(kin.kind_of(word) == kind and given.casefold() == name.strip().casefold()
               for word, given in whose.named_relatives(message).items())


def _where_they_live(triplet: Any, message: str) -> Any:
    """"User -sister-> Kunming", a town under a kin relation, is where the sister lives
    (a small model's way of writing "my sister lives in Kunming"), when the message says
    so (a sister named Sydney stays a sister)."""
    if not isinstance(triplet, dict) or not all(isinstance(triplet.get(k), str) for k in (
            "subject", "relation", "object")):
        return triplet
    kind = kin.kin_of_relation(triplet["relation"])
    if kind and triplet["subject"].strip().casefold() in kin_person and \
            is_place(triplet["object"]) and not _named_so(kind, triplet["object"], message):
        moved = {**triplet, "subject": triplet["relation"], "relation": "lives in"}
        if slots.grounds(moved, message):
            return moved
    return triplet


def _of_the_relative(triplet: Any) -> Any:
    """"User -husband lives in-> Osaka", the person given a fact of their husband's, is
    the husband's ("husband -lives in-> Osaka", named below when he is linked): kept as
    it was, it was stored under a node named "husband lives in", and his old city stayed."""
    if not _well_formed(triplet) or triplet["subject"].strip().casefold() not in kin_person:
        return triplet
    split = kin.leading(triplet["relation"])
    if split is None:
        return triplet
    word, rest = split
    return {**triplet, "subject": word, "relation": rest}


def resolved(triplets: list[dict[str, Any]], store: GraphStore, message: str = ""
             ) -> list[dict[str, Any]]:
    """The facts with a kin-word subject given to the one relative of that kind (a town
    under a kin relation is where they live, when `message` says so)."""
    triplets = [_where_they_live(_of_the_relative(t), message) for t in triplets]
    people: dict[str, list[str]] | None = None
    # links made in the same call count too ("我爸爸叫马军，住在青岛" in one message); a
    # town is no relative ("User -husband-> Nanjing" from "my husband doesn't live in
    # Nanjing, I meant Kunming" made two husbands, and Kunming went to neither)
    linking = {}
    for t in triplets:
        if isinstance(t, dict) and str(t.get("subject", "")).strip().casefold() in \
                kin_person and isinstance(t.get("relation"), str) and \
                isinstance(t.get("object"), str) and _kind_named(t["object"]) is None:
            kind = kin.kin_of_relation(t["relation"])
            if kind and (not is_place(t["object"]) or _named_so(kind, t["object"], message)):
                linking.setdefault(kind, []).append(t["object"])
    out = []
    for triplet in triplets:
        kind = _kind_named(str(triplet.get("subject", ""))) if isinstance(triplet, dict) \
            else None
        names: list[str] = []
        if kind:
            people = named(store) if people is None else people
            names = list(dict.fromkeys([*people.get(kind, []), *linking.get(kind, [])]))
        out.append({**triplet, "subject": names[0]} if len(names) == 1 else triplet)
    return out


Replacement = Literal["replaces", "theirs", "refused"]


def as_replacement(triplet: dict[str, Any], store: GraphStore, message: str
                   ) -> Replacement:
    """What a replacement of the person's link to a relative ("User -弟弟-> 王芳" made
    "User -弟弟-> Moscow") says: a new name only when the message names the relative so
    ("my brother is called Li Lei, not Wang Fang"): "replaces"; a town the relative
    lives in is a new fact, which a commit files as the relative's ("王芳 -lives in->
    Moscow", see `resolved`): "theirs"; anything else is no replacement: "refused". A
    relative is who they are: the 1.5B model replaced the person's brother with his city
    on "my brother lives in Moscow, not Beijing". A replacement of anything but such a
    link "replaces"."""
    kind = kin.kin_of_relation(str(triplet.get("relation", "")))
    if not kind or str(triplet.get("subject", "")).strip().casefold() not in kin_person \
            or not isinstance(triplet.get("object"), str):
        return "replaces"
    if _named_so(kind, triplet["object"], message):
        return "replaces"
    moved = resolved([triplet], store, message)[0]
    return "theirs" if moved != triplet else "refused"


def resolved_in_call(arguments: str, store: GraphStore, message: str = "") -> str:
    """A memory_commit's arguments with `resolved` facts; anything malformed as it is."""
    parsed = triplets_of(arguments)
    if parsed is None:
        return arguments
    args, triplets = parsed
    moved = resolved(triplets, store, message)
    return arguments if moved == triplets or not moved else with_triplets(args, moved)


def _mine(thing: str, message: str) -> bool:
    """The message speaks of `thing` as the person's ("my hamster", "我的仓鼠", "我仓鼠")."""
    word = re.escape(thing.strip())
    return bool(word) and re.search(
        rf"\bmy {word}\b|\bi(?: have|'ve got| own| adopted)(?: an?| two| three)? {word}|"
        rf"我的?{word}|我(?:养|有)了?(?:一|两|几)?[只条个匹头]?{word}", message,
        re.IGNORECASE) is not None


_NOUN_EN = r"([a-z][a-z-]{1,20})"
_NOUN_ZH = r"([\u3400-\u9fff]{1,3}?)"


def _named_as(name: str, message: str) -> str | None:
    """The thing or relative of the person's that `message` gives `name` to ("my parrot
    is called Pepper", "a dog named Luna", "我的兔子叫Max", "养了一只猫，叫咪咪"): the
    noun, or None when the name is not given to one."""
    word = re.escape(name.strip())
    if not word:
        return None
    found = re.search(
        rf"\b(?:my|our) {_NOUN_EN}(?:'s name is| is called| is named| called| named|,)? "
        rf"{word}\b|"
        rf"\b(?:an?|one|my) {_NOUN_EN} (?:called|named) {word}\b", message, re.IGNORECASE) \
        or re.search(rf"我的?{_NOUN_ZH}(?:的名字)?(?:叫做?|名叫|名字叫|的名字是){word}|"
                     rf"[只条个匹头位]{_NOUN_ZH}[，,]?\s*(?:名字)?叫做?{word}", message)
    if not found:
        return None
    noun = next(g for g in found.groups() if g)
    return None if noun.casefold() in {"name", "名字", "名"} else noun


# Having, in the words a small model wrote it with: "User -has-> Max" of "a cat named Max"
_HAVING = {"has", "have", "owns", "own", "got", "has got", "有", "养", "养了", "拥有"}


def _given_to_a_thing(triplet: dict[str, Any], message: str) -> dict[str, Any]:
    """"User -name-> Pepper" from "my parrot is called Pepper" is the parrot's name, and
    "User -has-> Max" of "a cat named Max" the cat's: the person's link to it ("User
    -parrot-> Pepper"), never a new name of theirs."""
    if str(triplet["subject"]).strip().casefold() not in kin_person or (
            family(triplet["relation"], triplet["object"]) != "name"
            and triplet["relation"].strip().casefold() not in _HAVING):
        return triplet
    noun = _named_as(triplet["object"], message)
    return triplet if noun is None else {**triplet, "relation": noun}


def named_things(triplets: list[Any], message: str) -> list[Any]:
    """The facts, and for each "my hamster is called Biscuit" given as "hamster -is
    called-> Biscuit", the person's link to it ("User -hamster-> Biscuit"): a small model
    left the pet unlinked, and "what is my pet called?" found nothing of the person's."""
    added = []
    triplets = [_given_to_a_thing(t, message) if _well_formed(t) else t for t in triplets]
    for t in triplets:
        if not _well_formed(t):
            continue
        for link in (_named_link(t, message), *_names_given(t, message)):
            # one link to a thing: "User -pet-> Mochi" stands, no "User -cat-> Mochi" beside
            # (a liking nobody said is no link: it goes, see `own_words.liking_checked`)
            if link is not None and not any(
                    _well_formed(o) and o["subject"].strip().casefold() in kin_person
                    and o["object"].strip() == link["object"]
                    and not own_words.liking_unsaid(o["relation"], message)
                    for o in (*triplets, *added)):
                added.append(link)
    return [*triplets, *added]


def _named_link(triplet: dict[str, Any], message: str) -> dict[str, str] | None:
    """"hamster -is called-> Biscuit" of "my hamster": User -hamster-> Biscuit."""
    subject = triplet["subject"].strip()
    if subject.casefold() in kin_person or kin.kind_of(subject) or \
            family(triplet["relation"], triplet["object"]) != "name" or \
            not _mine(subject, message):
        return None
    return {"subject": "User", "relation": subject, "object": triplet["object"]}


def _names_given(triplet: dict[str, Any], message: str) -> list[dict[str, str]]:
    """A name the message gives a thing of the person's, in a fact of any shape the model
    wrote it in ("User -has-> Max" of "I have a cat named Max", "Lucky -is-> cat" of "My
    cat is called Lucky"): User -cat-> Max. Relatives are linked by `whose`."""
    links = []
    for value in (triplet["subject"].strip(), triplet["object"].strip()):
        if value.casefold() in kin_person:
            continue
        noun = _named_as(value, message)
        if noun and not kin.kind_of(noun) and noun.casefold() != value.casefold():
            links.append({"subject": "User", "relation": noun, "object": value})
    return links


def _well_formed(triplet: Any) -> bool:
    return isinstance(triplet, dict) and all(isinstance(triplet.get(k), str)
                                             for k in ("subject", "relation", "object"))


def named_things_in_call(arguments: str, message: str) -> str:
    """A memory_commit's arguments with `named_things`; anything malformed as it is."""
    parsed = triplets_of(arguments)
    if parsed is None:
        return arguments
    args, triplets = parsed
    linked = named_things(triplets, message)
    return arguments if linked == triplets else with_triplets(args, linked)
