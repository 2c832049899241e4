"""Relations that hold one value at a time for a subject: where one lives, one's job,
diet, name, partner, age. When a new value arrives for one of them, the app replaces the
old (kept as superseded, with the time it stopped being true), whatever the model wrote:
a small model stores "moved to Rome" as one more fact beside "lives in Paris", and both
were then active. Relations that hold many values (likes, plays, friends) are left alone.

Which relations: the families below, in English and Chinese, matched on the relation's
normalised words; and, learnt from the memory itself, any relation whose value for that
subject was replaced before (by the person in the Memory tab, the model or an app).
"""

from __future__ import annotations

import re

from core.meaning.names import is_place, same_value
from core.store import GraphStore, Row
from core.store.text import normalize_name

# A new value replaces the old only when it is sure: a guess (a fact a model put in its
# own words, or one whose slot the person's message did not speak of, see
# core.writer.slots) is added beside the old value for the person's Review.
SURE = 0.9

# Each family is one slot: a new value under any of its relations replaces a value under
# any other ("moved to Rome" replaces "lives in Paris").
FAMILIES: dict[str, tuple[str, ...]] = {
    "home": ("lives in", "lives at", "live in", "living in", "lives", "resides in",
             "moved to", "moved", "moved into", "relocated to", "home", "home city",
             "city", "current city", "location", "residence", "place of residence",
             "based in", "住在", "住", "居住在", "居住", "居住地", "所在地", "常住地", "住址",
             "住处", "住所", "居所", "现居地",
             "家在", "现居", "现住", "搬到",
             "搬去", "所在城市", "城市"),
    "job": ("job", "works as", "work as", "occupation", "profession", "job title",
            "career", "职业", "工作是", "是一名"),
    "employer": ("works at", "works for", "work at", "work for", "employer", "company",
                 "employed by", "在工作", "就职于", "公司", "供职于"),
    "diet": ("diet", "eats diet", "is on diet", "饮食", "饮食习惯", "吃素"),
    "name": ("name", "name is", "is called", "called", "is named", "named", "goes by",
             "叫", "名字", "名字是", "名叫", "姓名"),
    "partner": ("partner", "spouse", "married to", "wife", "husband", "girlfriend",
                "boyfriend", "dating", "伴侣", "配偶", "妻子", "丈夫", "老婆", "老公",
                "女朋友", "男朋友", "对象"),
    "age": ("age", "is aged", "years old", "年龄", "岁", "年纪"),
    "birthday": ("birthday", "born on", "date of birth", "生日", "出生日期"),
    "school": ("studies at", "student at", "attends", "goes to school at", "school",
               "university", "在读", "就读于", "学校"),
    "phone": ("phone", "phone number", "mobile", "电话", "手机", "手机号"),
    "email": ("email", "email address", "e-mail", "邮箱", "电子邮件"),
}
_FAMILY_OF = {normalize_name(relation): family for family, relations in FAMILIES.items()
              for relation in relations}
# "is a vegetarian", "is vegan" say a diet without naming it: the object decides.
_DIET_WORDS = re.compile(r"\b(vegetarian|vegan|pescatarian|carnivore|keto|paleo|"
                         r"omnivore|gluten[- ]free|halal|kosher)\b|素食|吃素|纯素|荤",
                         re.IGNORECASE)


_SAYS_A_DIET = {normalize_name(r) for r in ("is", "is a", "am", "是", "eats", "follows", "吃")}


# "Wang Fang -is-> Cairo", "马军 -在-> 青岛": a town after a bare "is" or "in" says where
# someone is
_SAYS_WHERE = {normalize_name(r) for r in ("is", "is in", "in", "at", "is at", "是", "在")}


# "Wang Fang -is-> in Cairo": the town after its preposition
_AFTER_WHERE = re.compile(r"^\s*(?:in|at|住在|在)\s*", re.IGNORECASE)


# "生活" (to live) says where only with a town: "在布拉格生活" is where one lives
_LIVES_AT = {normalize_name(r) for r in ("生活在", "在生活", "生活", "在住")}


def _without_place(relation: str, target: str) -> str | None:
    """A relation that holds its own town ("孙慧 -在布拉格生活-> 布拉格", "lives in Paris"
    -> Paris), without it; None for any other. Kept as it was, a later town did not
    replace it and the old one stayed."""
    if not target.strip() or target.strip() not in relation or not is_place(target):
        return None
    return normalize_name(relation.replace(target.strip(), ""))


def family(relation: str, target: str = "") -> str | None:
    """The slot a relation fills (None: it may hold many values)."""
    found = _FAMILY_OF.get(normalize_name(relation))
    if found is None and target and (bare := _without_place(relation, target)) is not None:
        found = "home" if bare in _LIVES_AT else _FAMILY_OF.get(bare)
    if found is None and target and normalize_name(relation) in _LIVES_AT and \
            is_place(target):
        found = "home"
    if found is None and normalize_name(relation) in _SAYS_A_DIET and _DIET_WORDS.search(target):
        return "diet"
    if found is None and target and normalize_name(relation) in _SAYS_WHERE and \
            is_place(_AFTER_WHERE.sub("", target)):
        return "home"
    return found


def _relations_of(family_name: str) -> list[str]:
    return [normalize_name(r) for r in FAMILIES[family_name]]


def replaced_before(store: GraphStore, source_id: int, norm_relation: str) -> bool:
    """The memory itself says this relation holds one value for this subject: a value
    of it was replaced by another of the same relation before."""
    return store.query_one(
        "SELECT 1 AS yes FROM edges old JOIN edges new ON new.id = old.superseded_by"
        " WHERE old.source_id = ? AND old.norm_relation = ? AND old.status = 'superseded'"
        " AND new.norm_relation = old.norm_relation AND new.target_id != old.target_id"
        " LIMIT 1", (source_id, norm_relation)) is not None


def older_values(store: GraphStore, edge: Row, target_name: str) -> list[Row]:
    """The active facts a new fact `edge` replaces: the same subject's values in the
    same one-value slot, other than the new fact itself and other than the same value in
    another script or spelling ("Lyon" and "里昂": see `core.meaning.names`; a pair the
    tables cannot tell apart is not replaced either). A guess replaces nothing."""
    if edge["confidence"] < SURE:
        return []
    return [old for old in slot_values(store, edge, target_name)
            if old["target_id"] == edge["target_id"]  # "moved Shanghai" for "home Shanghai"
            or same_value(old["target_name"], target_name) is False]


def same_in_slot(store: GraphStore, source_id: int, relation: str, target_name: str
                 ) -> Row | None:
    """The subject's active value in this relation's one-value slot that names
    `target_name` in another script or spelling, if there is one."""
    probe = {"id": 0, "source_id": source_id, "relation": relation, "target_id": 0,
             "norm_relation": normalize_name(relation)}
    return next((old for old in slot_values(store, probe, target_name)
                 if normalize_name(old["target_name"]) != normalize_name(target_name)
                 and same_value(old["target_name"], target_name)), None)


def slot_values(store: GraphStore, edge: Row, target_name: str) -> list[Row]:
    """The subject's other active values in the one-value slot `edge` fills (none when
    its relation holds many values)."""
    slot = family(edge["relation"], target_name)
    if slot is not None:
        relations = _relations_of(slot)
    elif replaced_before(store, edge["source_id"], edge["norm_relation"]):
        relations = [edge["norm_relation"]]
    else:
        return []
    if slot == "diet":  # "is vegetarian" said a diet too
        relations += sorted(_SAYS_A_DIET)
    if slot == "home":  # "is Cairo" said where too
        relations += sorted(_SAYS_WHERE)
    marks = ", ".join("?" * len(relations))
    # The same value under another relation of the slot goes too: "moved Shanghai" beside
    # "home Shanghai" is one fact said twice. A relation that holds its own value ("在布拉格
    # 生活") is in the slot `family` reads from it.
    candidates = store.query(
        "SELECT e.*, t.name AS target_name FROM edges e JOIN nodes t ON t.id = e.target_id"
        f" WHERE e.source_id = ? AND e.status = 'active' AND e.category = 'general' AND"
        f" e.id != ? AND (e.target_id != ? OR e.norm_relation != ?) AND"
        f" (e.norm_relation IN ({marks}) OR instr(e.relation, t.name) > 0)",
        (edge["source_id"], edge["id"], edge["target_id"], edge["norm_relation"], *relations))
    if slot is None:
        return [c for c in candidates if c["norm_relation"] in relations]
    # "is a" holds many values: only what says a diet is replaced by a new diet
    return [c for c in candidates if family(c["relation"], c["target_name"]) == slot]
