from core.store.text import match_query, normalize_name, search_text


def test_names_fold_case_spacing_and_width():
    assert normalize_name("Xiao Ming") == normalize_name(" xiao  ming ")
    assert normalize_name("ＸＩＡＯ　ＭＩＮＧ") == "xiao ming"  # full-width letters and space
    assert normalize_name("小明") != normalize_name("小红")


def test_cjk_characters_become_separate_tokens():
    assert search_text("小明喜欢apple").split() == ["小", "明", "喜", "欢", "apple"]


def test_query_makes_cjk_bigram_phrases_and_drops_stopwords():
    assert match_query("苹果") == '"苹 果"'
    assert match_query("吃") == '"吃"'
    assert match_query("小明喜欢") == '"小 明" OR "明 喜" OR "喜 欢"'
    assert match_query("what does Tom like") == '"tom" OR "like"'
    assert match_query("the") == '"the"'  # only stopwords: keep them rather than match nothing
    assert match_query("?!") is None


def test_query_text_cannot_inject_fts_syntax():
    assert match_query('tom" OR x NEAR(') == '"tom" OR "x" OR "near"'
