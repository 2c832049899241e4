"""What generated conversations are made of: people, places, jobs, relatives, hobbies,
diets, allergies, pets, plans and requests, each in English and Chinese.

Every entry is (English, Chinese). A person's or a relative's name written in Chinese
characters has its pinyin as the English form; a Western name is the same in both.
The pools are wide on purpose: a rule that only fits a few of these values shows as a
gap between fixed and fresh seeds.
"""

from __future__ import annotations

Pair = tuple[str, str]

PEOPLE: tuple[Pair, ...] = (
    ("Lin Wei", "林伟"), ("Zhang Min", "张敏"), ("Chen Jie", "陈杰"), ("Wang Fang", "王芳"),
    ("Liu Yang", "刘洋"), ("Zhao Lei", "赵磊"), ("Huang Li", "黄丽"), ("Zhou Tao", "周涛"),
    ("Wu Xia", "吴霞"), ("Xu Ming", "徐明"), ("Sun Hui", "孙慧"), ("Ma Jun", "马军"),
    ("Guo Jing", "郭静"), ("He Peng", "何鹏"), ("Gao Yan", "高燕"), ("Luo Bin", "罗斌"),
    ("Anna", "Anna"), ("Tom", "Tom"), ("Sofia", "Sofia"), ("David", "David"),
    ("Maria", "Maria"), ("Lucas", "Lucas"), ("Emma", "Emma"), ("Noah", "Noah"),
    ("Priya", "Priya"), ("Kenji", "Kenji"), ("Olga", "Olga"), ("Omar", "Omar"),
)
CITIES: tuple[Pair, ...] = (
    ("Lyon", "里昂"), ("Paris", "巴黎"), ("London", "伦敦"), ("Berlin", "柏林"),
    ("Madrid", "马德里"), ("Rome", "罗马"), ("Vienna", "维也纳"), ("Prague", "布拉格"),
    ("Moscow", "莫斯科"), ("Cairo", "开罗"), ("Sydney", "悉尼"), ("Toronto", "多伦多"),
    ("Chicago", "芝加哥"), ("Boston", "波士顿"), ("Seattle", "西雅图"), ("Tokyo", "东京"),
    ("Osaka", "大阪"), ("Seoul", "首尔"), ("Singapore", "新加坡"), ("Bangkok", "曼谷"),
    ("Hangzhou", "杭州"), ("Shanghai", "上海"), ("Beijing", "北京"), ("Shenzhen", "深圳"),
    ("Chengdu", "成都"), ("Wuhan", "武汉"), ("Nanjing", "南京"), ("Xi'an", "西安"),
    ("Suzhou", "苏州"), ("Qingdao", "青岛"), ("Xiamen", "厦门"), ("Kunming", "昆明"),
    ("Dalian", "大连"), ("Harbin", "哈尔滨"), ("Munich", "慕尼黑"), ("Milan", "米兰"),
)
JOBS: tuple[Pair, ...] = (
    ("nurse", "护士"), ("teacher", "老师"), ("engineer", "工程师"), ("doctor", "医生"),
    ("designer", "设计师"), ("accountant", "会计"), ("lawyer", "律师"), ("chef", "厨师"),
    ("pharmacist", "药剂师"), ("architect", "建筑师"), ("journalist", "记者"),
    ("programmer", "程序员"), ("photographer", "摄影师"), ("dentist", "牙医"),
    ("pilot", "飞行员"), ("translator", "翻译"), ("librarian", "图书管理员"),
    ("electrician", "电工"), ("veterinarian", "兽医"), ("baker", "面包师"),
)
HOBBIES: tuple[Pair, ...] = (
    ("hiking", "徒步"), ("painting", "画画"), ("swimming", "游泳"), ("chess", "下棋"),
    ("photography", "摄影"), ("cycling", "骑自行车"), ("gardening", "园艺"), ("yoga", "瑜伽"),
    ("running", "跑步"), ("baking", "烘焙"), ("fishing", "钓鱼"), ("calligraphy", "书法"),
    ("knitting", "织毛衣"), ("climbing", "攀岩"),
)
INSTRUMENTS: tuple[Pair, ...] = (
    ("guitar", "吉他"), ("violin", "小提琴"), ("cello", "大提琴"), ("piano", "钢琴"),
    ("flute", "长笛"), ("drums", "鼓"), ("saxophone", "萨克斯"), ("erhu", "二胡"),
)
DIETS: tuple[Pair, ...] = (
    ("vegetarian", "素食"), ("vegan", "纯素"), ("pescatarian", "只吃鱼素"),
    ("gluten-free", "无麸质"),
)
ALLERGIES: tuple[Pair, ...] = (
    ("peanuts", "花生"), ("shellfish", "贝类"), ("pollen", "花粉"), ("milk", "牛奶"),
    ("eggs", "鸡蛋"), ("penicillin", "青霉素"), ("cats", "猫毛"), ("mangoes", "芒果"),
)
PET_KINDS: tuple[Pair, ...] = (("cat", "猫"), ("dog", "狗"), ("rabbit", "兔子"),
                               ("parrot", "鹦鹉"), ("hamster", "仓鼠"))
PET_NAMES: tuple[str, ...] = ("Mochi", "Lucky", "Pepper", "Biscuit", "Coco", "Nemo", "Tofu",
                              "Max", "Luna", "Momo", "Kiki", "Bao")
# (kind, English word, Chinese word): how the person names them
RELATIVES: tuple[tuple[str, str, str], ...] = (
    ("sister", "sister", "姐姐"), ("brother", "brother", "哥哥"), ("father", "father", "父亲"),
    ("mother", "mother", "母亲"), ("daughter", "daughter", "女儿"), ("son", "son", "儿子"),
    ("wife", "wife", "妻子"), ("husband", "husband", "丈夫"), ("father", "dad", "爸爸"),
    ("mother", "mom", "妈妈"), ("sister", "sister", "妹妹"), ("brother", "brother", "弟弟"),
)
# A plan: its name and three steps; {city} and {who} are filled in
PLANS: tuple[tuple[Pair, tuple[Pair, Pair, Pair]], ...] = (
    (("a trip to {city}", "去{city}旅行"),
     (("book the flights", "订机票"), ("reserve a hotel", "订酒店"),
      ("make an itinerary", "做行程"))),
    (("a birthday party for my {who}", "给{who}办生日派对"),
     (("order a cake", "订蛋糕"), ("send the invitations", "发请柬"),
      ("book a restaurant", "订餐厅"))),
    (("moving house", "搬家"),
     (("pack the boxes", "打包箱子"), ("hire movers", "找搬家公司"),
      ("change my address", "改地址"))),
    (("a dinner party", "办一场晚宴"),
     (("buy the wine", "买酒"), ("cook the dessert", "做甜点"),
      ("clean the flat", "打扫房间"))),
)
# What the person asks the assistant to do: never a fact about them. (English, Chinese,
# the topic words that must not become a fact)
REQUESTS: tuple[tuple[str, str, Pair], ...] = (
    ("Can you write a short poem about the sea?", "能帮我写一首关于大海的短诗吗？",
     ("sea", "大海")),
    ("Please explain how rainbows form.", "请解释一下彩虹是怎么形成的。", ("rainbow", "彩虹")),
    ("Translate 'good morning' into French for me.", "帮我把“早上好”翻译成法语。",
     ("french", "法语")),
    ("Suggest a name for a small bakery.", "给一家小面包店起个名字吧。", ("bakery", "面包店")),
    ("Write a haiku about autumn leaves.", "写一首关于秋叶的俳句。", ("autumn", "秋叶")),
    ("Tell me a fun fact about octopuses.", "告诉我一个关于章鱼的趣闻。", ("octopus", "章鱼")),
)
