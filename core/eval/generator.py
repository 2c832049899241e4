"""Conversations made from a seed, with what the memory must hold after each derived from
the script itself, not written by hand.

A seed picks a person (name, home, job, hobby, instrument, allergy, pet), a relative and
a plan from `core.eval.pools`, the language the person mostly writes in, and one of a
few phrasings for every message; the cases follow in order:

1. an introduction with five facts at once;
2. a relative, named, with their city and job;
3. an instrument and a pet;
4. a move (the old home must not stay current);
5. the new home said again in the other language (one fact, not a change);
6. a correction of the relative's city ("not X, I meant Y");
7. a request that is no fact about the person (a poem, a translation…);
8. a plan with three steps, 9. the first step done;
10. a forget asked in the other language from the one the fact was told in, of the
    person's allergy or of the relative's job (only that fact may go);
11–15. questions about each, some in the other language, after a restart.

Expectations are facts that must be active (by whom: the person or the relative, and
the value in either language), values that must not be (stale, forgotten, a request's
topic), the tasks and their states, and each answer's words in either language.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from core.eval import pools
from core.eval.conversation import Turn

PERSON, RELATIVE = "person", "relative"


@dataclass(frozen=True)
class Expected:
    """A value `whose` (PERSON or RELATIVE) in `slot`, written any of `forms`."""

    whose: str
    slot: str
    forms: tuple[str, ...]


@dataclass
class Conversation:
    seed: int
    language: str  # what the person mostly writes: "en" or "zh"
    turns: list[Turn]
    facts: list[Expected]  # active at the end
    stale: list[Expected]  # replaced or corrected: not active
    forgotten: list[Expected]  # asked to forget: not active
    requests: list[tuple[str, ...]]  # a request's topic: in no active fact
    tasks: list[tuple[tuple[str, ...], str | None]]  # (forms of a step, state or None)
    person_names: tuple[str, ...]
    relative_words: tuple[str, ...]  # the relative's name and how they are called
    answers: dict[int, list[tuple[str, ...]]] = field(default_factory=dict)  # turn → groups
    truth: dict[str, tuple[str, str]] = field(default_factory=dict)  # slot → (en, zh)


def _say(rng: random.Random, language: str, options: dict[str, tuple[str, ...]],
         **values: str) -> str:
    return rng.choice(options[language]).format(**values)


INTRO = {
    "en": ("Hi! I'm {name}. I live in {city} and I work as a {job}. I'm allergic to "
           "{allergy}, and in my free time I love {hobby}.",
           "Hello, my name is {name}. I work as a {job} and live in {city}. I love "
           "{hobby}. One more thing: I'm allergic to {allergy}.",
           "Nice to meet you! I'm {name}, a {job} living in {city}; I'm allergic to "
           "{allergy} and I really enjoy {hobby}."),
    "zh": ("你好！我叫{name}，住在{city}，是一名{job}。我对{allergy}过敏，平时喜欢{hobby}。",
           "你好，我是{name}。我在{city}生活，职业是{job}，喜欢{hobby}，还有我对{allergy}过敏。",
           "认识你很高兴！我叫{name}，现在住在{city}，工作是{job}；我喜欢{hobby}，对{allergy}过敏。"),
}
RELATIVE_SAYS = {
    "en": ("My {kin} {rname} lives in {rcity} and works as a {rjob}.",
           "My {kin}, {rname}, is a {rjob} in {rcity}.",
           "My {kin} is called {rname}; {rname} lives in {rcity} and works as a {rjob}."),
    "zh": ("我{kin}叫{rname}，住在{rcity}，是一名{rjob}。",
           "我的{kin}{rname}在{rcity}生活，职业是{rjob}。",
           "我{kin}的名字是{rname}，{rname}住在{rcity}，工作是{rjob}。"),
}
PET = {
    "en": ("I play the {instrument}, and I have a {pet_kind} called {pet}.",
           "I have a {pet_kind} named {pet}. I also play the {instrument}.",
           "My {pet_kind} is called {pet}, and I've played the {instrument} for years."),
    "zh": ("我会弹{instrument}，还养了一只{pet_kind}，叫{pet}。",
           "我养了一只{pet_kind}，名字叫{pet}。我也会演奏{instrument}。",
           "我的{pet_kind}叫{pet}，我学{instrument}好几年了。"),
}
MOVE = {
    "en": ("Actually, I moved to {city} last month.", "Big news: I just moved to {city}.",
           "I don't live in {old} anymore, I moved to {city}."),
    "zh": ("其实我上个月搬到{city}了。", "告诉你个消息：我刚搬到了{city}。",
           "我已经不住在{old}了，我搬到{city}了。"),
}
RESTATE = {
    "en": ("I live in {city} now, by the way.", "Just so you know, my home is in {city}."),
    "zh": ("顺便说一下，我现在住在{city}。", "对了，我家现在在{city}。"),
}
CORRECT = {
    "en": ("Sorry, I got that wrong: my {kin} lives in {rcity}, not {old}.",
           "Correction: my {kin} doesn't live in {old}, I meant {rcity}."),
    "zh": ("不好意思，我说错了：我{kin}住在{rcity}，不是{old}。",
           "更正一下：我{kin}不住在{old}，我是说{rcity}。"),
}
PLAN = {
    "en": ("Help me plan {plan}: {s1}, {s2} and {s3}.",
           "Can you help me organise {plan}? I need to {s1}, {s2} and {s3}."),
    "zh": ("帮我规划{plan}：{s1}、{s2}、{s3}。", "帮我安排一下{plan}吧，要{s1}、{s2}，还要{s3}。"),
}
DONE = {
    "en": ("I already did it: {s1}, done.", "Done: {s1}. That's finished already."),
    "zh": ("{s1}已经做好了。", "我已经完成了{s1}。"),
}
FORGET_ALLERGY = {
    "en": ("Please forget that I'm allergic to {allergy}, that was a mistake.",
           "Forget my {allergy} allergy, please."),
    "zh": ("请忘掉我对{allergy}过敏这件事。", "忘记我对{allergy}过敏吧，那是说错了。"),
}
FORGET_RELATIVE_JOB = {
    "en": ("Please forget that my {kin} works as a {rjob}.",
           "Forget what I said about my {kin}'s job as a {rjob}."),
    "zh": ("请忘掉我{kin}是{rjob}这件事。", "忘掉我{kin}做{rjob}的事吧。"),
}
QUESTIONS = {
    "home": {"en": ("Where do I live now?", "Which city is my home?"),
             "zh": ("我现在住在哪里？", "我家在哪个城市？")},
    "job": {"en": ("What do I do for work?", "What's my job?"),
            "zh": ("我是做什么工作的？", "我的职业是什么？")},
    "relative_home": {"en": ("Where does my {kin} live?", "Which city is my {kin} in?"),
                      "zh": ("我{kin}住在哪里？", "我{kin}在哪个城市？")},
    "instrument": {"en": ("What instrument do I play?", "Which instrument do I play?"),
                   "zh": ("我会什么乐器？", "我弹什么乐器？")},
    "pet": {"en": ("What is my pet called?", "What's my {pet_kind}'s name?"),
            "zh": ("我的宠物叫什么名字？", "我的{pet_kind}叫什么？")},
    "name": {"en": ("What's my name?", "Do you remember my name?"),
             "zh": ("我叫什么名字？", "你还记得我的名字吗？")},
    "hobby": {"en": ("What do I love doing in my free time?", "What's my hobby?"),
              "zh": ("我平时喜欢做什么？", "我的爱好是什么？")},
    "plan": {"en": ("What's left to do for {plan}?", "Which steps of {plan} are still open?"),
             "zh": ("{plan}还剩哪些事要做？", "{plan}还有什么没做？")},
}


def _pick(rng: random.Random, pool: tuple, n: int) -> list:
    return rng.sample(list(pool), n)


def generate(seed: int) -> Conversation:
    """The conversation of `seed` (the same seed, the same conversation)."""
    rng = random.Random(seed)
    main = rng.choice(("en", "zh"))
    other = "zh" if main == "en" else "en"
    person, relative_name = _pick(rng, pools.PEOPLE, 2)
    city, city2, rcity, rcity2 = _pick(rng, pools.CITIES, 4)
    job, rjob = _pick(rng, pools.JOBS, 2)
    hobby, instrument = rng.choice(pools.HOBBIES), rng.choice(pools.INSTRUMENTS)
    allergy, pet_kind = rng.choice(pools.ALLERGIES), rng.choice(pools.PET_KINDS)
    pet = rng.choice(pools.PET_NAMES)
    _kind, kin_en, kin_zh = rng.choice(pools.RELATIVES)
    (plan_en, plan_zh), steps = rng.choice(pools.PLANS)
    request = rng.choice(pools.REQUESTS)
    index = 0 if main == "en" else 1

    def v(pair: tuple[str, str], language: str) -> str:
        return pair[0 if language == "en" else 1]

    kin = {"en": kin_en, "zh": kin_zh}
    plan = {"en": plan_en.format(city=city2[0], who=kin_en),
            "zh": plan_zh.format(city=city2[1], who=kin_zh)}
    turns: list[Turn] = []
    answers: dict[int, list[tuple[str, ...]]] = {}

    def said(text: str) -> None:
        turns.append(Turn(text))

    said(_say(rng, main, INTRO, name=v(person, main), city=v(city, main), job=v(job, main),
              allergy=v(allergy, main), hobby=v(hobby, main)))
    told_relative = rng.choice((main, other))
    said(_say(rng, told_relative, RELATIVE_SAYS, kin=kin[told_relative],
              rname=v(relative_name, told_relative), rcity=v(rcity, told_relative),
              rjob=v(rjob, told_relative)))
    said(_say(rng, main, PET, instrument=v(instrument, main), pet_kind=v(pet_kind, main),
              pet=pet))
    said(_say(rng, main, MOVE, city=v(city2, main), old=v(city, main)))
    said(_say(rng, other, RESTATE, city=v(city2, other)))
    said(_say(rng, main, CORRECT, kin=kin[main], rcity=v(rcity2, main), old=v(rcity, main)))
    said(request[index] if rng.random() < 0.5 else request[1 - index])
    said(_say(rng, main, PLAN, plan=plan[main], s1=v(steps[0], main), s2=v(steps[1], main),
              s3=v(steps[2], main)))
    said(_say(rng, main, DONE, s1=v(steps[0], main)))
    forget_relative = rng.random() < 0.5
    if forget_relative:
        said(_say(rng, other, FORGET_RELATIVE_JOB, kin=kin[other], rjob=v(rjob, other)))
    else:
        said(_say(rng, other, FORGET_ALLERGY, allergy=v(allergy, other)))

    asked = rng.sample(["home", "job", "relative_home", "instrument", "pet", "name",
                        "hobby", "plan"], 6)
    truth = {"name": person, "home": city2, "job": job, "relative_home": rcity2,
             "instrument": instrument, "pet": (pet, pet), "hobby": hobby}
    in_other = set(rng.sample(range(6), 2))
    for n, topic in enumerate(asked):
        language = other if n in in_other else main
        text = _say(rng, language, QUESTIONS[topic], kin=kin[language], plan=plan[language],
                    pet_kind=v(pet_kind, language))
        turns.append(Turn(text, restart=n == 0))
        if topic == "plan":
            answers[len(turns) - 1] = [tuple(steps[1]), tuple(steps[2])]
        else:
            answers[len(turns) - 1] = [tuple(dict.fromkeys(truth[topic]))]

    facts = [Expected(PERSON, "name", person), Expected(PERSON, "home", city2),
             Expected(PERSON, "job", job), Expected(PERSON, "hobby", hobby),
             Expected(PERSON, "instrument", instrument), Expected(PERSON, "pet", (pet,)),
             Expected(RELATIVE, "home", rcity2)]
    forgotten = [Expected(RELATIVE, "job", rjob)] if forget_relative else [
        Expected(PERSON, "allergy", allergy)]
    if not forget_relative:
        facts.append(Expected(RELATIVE, "job", rjob))
    return Conversation(
        seed=seed, language=main, turns=turns, facts=facts,
        stale=[Expected(PERSON, "home", city), Expected(RELATIVE, "home", rcity)],
        forgotten=forgotten, requests=[request[2]],
        tasks=[(tuple(steps[0]), "completed"), (tuple(steps[1]), None),
               (tuple(steps[2]), None)],
        person_names=tuple(dict.fromkeys(person)),
        relative_words=tuple(dict.fromkeys((*relative_name, kin_en, kin_zh))),
        answers=answers,
        truth={**truth, "allergy": allergy, "relative_job": rjob, "old_home": city,
               "old_relative_home": rcity, "relative_name": relative_name,
               "pet_kind": pet_kind})
