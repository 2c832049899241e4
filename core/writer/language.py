"""Which language a message is written in, to name it to the model.

Told "Reply in the user's language", a 1.5B model answered the English question "Where
does my sister live?" in Chinese after one Chinese exchange, and "我最近在学日语。" in
English; told "The user writes in English:" it answered in English every time. So the
newest message names its language when it can be told from the text: by script, and
for Latin script by the little words of the common languages. When unsure, nothing is
named and the system prompt's rule stands alone.
"""

from __future__ import annotations

import re

_KANA = re.compile(r"[\u3040-\u30ff]")
_HAN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff]")
_SCRIPTS = (  # the script's characters (a CJK character is about a word) or its words
    ("Korean", re.compile(r"[\uac00-\ud7af]")),
    ("Chinese", _HAN),
    ("Russian", re.compile(r"[\u0400-\u04ff]+")),
    ("Arabic", re.compile(r"[\u0600-\u06ff]+")),
    ("Greek", re.compile(r"[\u0370-\u03ff]+")),
    ("Hebrew", re.compile(r"[\u0590-\u05ff]+")),
    ("Thai", re.compile(r"[\u0e00-\u0e7f]")),
    ("Hindi", re.compile(r"[\u0900-\u097f]+")),
)
# Words frequent in one language and rare in the others.
_LITTLE_WORDS = {
    # "a" is English as much as Portuguese or Italian: without it (and "in", "would"),
    # "Answer in a few words: would Caroline…" was told to the model as Portuguese
    "English": "the and is are my i i'm you what where when how do does with to of it this "
               "that have was please can a an in on at for from be would will your me we "
               "they he she his her not but if or about did".split(),
    "French": "le la les et est je suis mon ma mes tu vous que où quand comment avec pour "
              "une des du c'est j'ai".split(),
    "German": "der die das und ist ich bin mein meine du sie wo wann wie mit für nicht ein "
              "eine auch".split(),
    "Spanish": "el la los las y es soy mi mis tú usted qué dónde cuándo cómo con para una "
               "del estoy".split(),
    "Italian": "il lo la gli e è sono mio mia tu che dove quando come con per una del non "
               "ho".split(),
    "Portuguese": "o a os as e é sou meu minha você que onde quando como com para uma do "
                  "não tenho".split(),
    "Dutch": "de het en is ik ben mijn jij je wat waar wanneer hoe met voor een niet "
             "ook".split(),
}
_WORD = re.compile(r"[a-zà-ÿ']+")


def language_of(text: str) -> str | None:
    """The language's English name, or None when the text does not tell. The script
    with the most words wins: "My sister 美美 lives in Beijing" is English."""
    folded = text.casefold()
    words = _WORD.findall(folded)
    units = {name: len(script.findall(folded)) for name, script in _SCRIPTS}
    if _KANA.search(folded):  # Japanese writes kanji too
        units["Japanese"] = units.pop("Chinese") + len(_KANA.findall(folded))
    script = max(units, key=units.__getitem__)
    if units[script] > len(words):
        return script
    counts = {name: sum(w in little for w in words) for name, little in _LITTLE_WORDS.items()}
    ranked = sorted(counts.values(), reverse=True)
    best = max(counts, key=counts.__getitem__)
    return best if ranked[0] >= 1 and ranked[0] > ranked[1] else None


# The first person of each language: its pronouns and possessives, a closed class. A
# language's own are read only in text written in it ("Mia" is a name in English, "mia"
# Italian for "my"); English's and Chinese's, the product's two, in any text.
_ALWAYS_SELF = r"\b(?:i|i'm|i've|i'd|i'll|me|my|mine|myself)\b|我"
_SELF_BY_LANGUAGE = {
    "French": r"\b(?:je|moi|me|mon|ma|mes)\b|\b[jm]'",
    "German": r"\b(?:ich|mich|mir|mein|meine|meinen|meinem|meiner|meines)\b",
    "Spanish": r"\b(?:yo|me|mi|mis|mío|mía|conmigo)\b",
    "Italian": r"\b(?:io|mi|mio|mia|miei|mie)\b",
    "Portuguese": r"\b(?:eu|me|meu|minha|meus|minhas|comigo)\b",
    "Dutch": r"\b(?:ik|mij|me|mijn)\b",
    "Russian": r"\b(?:я|меня|мне|мной|мой|моя|моё|мои|моего|моей|моих)\b",
    "Japanese": r"私|僕|俺|わたし|ぼく",
    "Korean": r"(?<!\S)(?:저는|제가|저를|저의|저한테|나는|내가|나를|나의|나한테|제|내)(?!\S)",
}
_SELF = {name: re.compile(f"{_ALWAYS_SELF}|{words}", re.IGNORECASE)
         for name, words in _SELF_BY_LANGUAGE.items()}
_SELF_ANY = re.compile(_ALWAYS_SELF, re.IGNORECASE)


def in_first_person(text: str) -> bool:
    """`text` is in its writer's first person, possessives too ("my", "我", "ma sœur",
    "моя сестра"); `core.writer.whose.speaks_of_self` asks a narrower thing of a clause."""
    return bool(_SELF.get(language_of(text) or "", _SELF_ANY).search(text))
