"""How people state a password, a secret, a token or a key, in the languages developers chat
in: the words for them, the words between such a word and its value ("for the database",
"is", "lautet", "是", "は"), and the patterns built from them (secrets.py runs them).

    Das Passwort für die Datenbank ist Xk9#mQ2v     Пароль от базы данных — Xk9#mQ2v
    La contraseña de la base de datos es Xk9#mQ2v   数据库的密码是Xk9#mQ2v
    डेटाबेस का पासवर्ड Xk9#mQ2v है                  データベースのパスワードは「Xk9#mQ2v」です

Each language lists its words once; the patterns take the union of every language's words,
so a sentence that mixes two (an English keyword with a Chinese copula) is read too. A value
is what follows the copula, or, with no copula, a word that carries a digit or a symbol.
Every repetition is bounded or cannot backtrack: the patterns run in time linear in the
text (docs/SECURITY.md lists what they still miss).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from .secret_patterns import _KEYWORDS

P, S, T, A, K = "password", "secret", "token", "api-key", "private-key"


@dataclass(frozen=True, slots=True)
class Language:
    """One language's words. In `keywords` a space stands for any separator (none, a space,
    `_` or `-`), so "api key" also reads "API-Key", "api_key" and "apikey"."""

    keywords: dict[str, str]  # word -> the placeholder type of what it names
    connectors: tuple[str, ...] = ()  # "for" / "of" between the word and what it is for
    attached: tuple[str, ...] = ()  # the same, written onto the next word: d', l', ل
    copulas: tuple[str, ...] = ()  # "is" / "was" / "reads" between the word and the value
    adverbs: tuple[str, ...] = ()  # "now" / "still" after the copula
    particles: tuple[str, ...] = ()  # written onto the word, no space needed: は, 是, 는
    compounds: dict[str, str] | None = None  # words other words end in: Datenbankpasswort
    prefixes: tuple[str, ...] = ()  # written onto the word in front: و (and), ب (with)
    joined: bool = False  # a script without spaces: the word is found inside others
    loose: bool = False  # what it is for may follow with no preposition ("kata sandi
    #                      database adalah …"): read up to four words before a copula


LANGUAGES: dict[str, Language] = {
    "en": Language(
        keywords=dict(_KEYWORDS),
        connectors=("for", "of", "on", "in", "to", "at", "from"),
        copulas=("is", "was", "are", "were", "will be", "becomes", "equals", "reads"),
        adverbs=("now", "still", "just", "currently")),
    "de": Language(
        keywords={"passwort": P, "passwörter": P, "passworte": P, "passwortes": P,
                  "kennwort": P, "kennwörter": P, "passphrase": P, "zugangsdaten": P,
                  "anmeldedaten": P, "zugangscode": P, "geheimnis": S,
                  "geheimer schlüssel": S, "geheime schlüssel": S, "geheimen schlüssel": S,
                  "api schlüssel": A, "zugriffsschlüssel": A, "zugangsschlüssel": A,
                  "lizenzschlüssel": A, "token": T, "zugangstoken": T, "zugriffstoken": T,
                  "privater schlüssel": K, "private schlüssel": K, "privaten schlüssel": K},
        connectors=("für", "fuer", "von", "vom", "zum", "zur", "der", "des", "bei", "beim",
                    "im", "am", "auf", "an", "in"),
        copulas=("ist", "war", "lautet", "lautete", "heißt", "heisst", "bleibt", "sind",
                 "waren"),
        adverbs=("jetzt", "nun", "neu", "noch", "weiterhin", "ab sofort", "immer noch"),
        compounds={"passwort": P, "kennwort": P, "token": T, "schlüssel": A}),
    "fr": Language(
        keywords={"mot de passe": P, "mots de passe": P, "mdp": P, "phrase secrète": P,
                  "phrase de passe": P, "identifiants": P, "code d'accès": P, "secret": S,
                  "clé secrète": S, "clef secrète": S, "clé api": A, "clé d'api": A,
                  "clé de l'api": A, "clef api": A, "clé d'accès": A, "clé de licence": A,
                  "jeton": T, "jeton d'accès": T, "jeton d'authentification": T,
                  "clé privée": K, "clef privée": K},
        connectors=("de", "du", "des", "pour", "sur", "dans", "à", "au", "aux", "chez", "en"),
        attached=("d'", "l'"),
        copulas=("est", "était", "sera", "serait", "reste", "vaut", "devient", "c'est"),
        adverbs=("maintenant", "désormais", "toujours", "encore", "actuellement")),
    "es": Language(
        keywords={"contraseña": P, "contraseñas": P, "contrasena": P, "clave": P,
                  "clave de acceso": P, "código de acceso": P, "credenciales": P,
                  "secreto": S, "clave secreta": S, "clave de api": A, "clave api": A,
                  "clave de la api": A, "llave de api": A, "token de acceso": T,
                  "clave privada": K, "llave privada": K},
        connectors=("de", "del", "para", "en", "a", "al", "sobre"),
        copulas=("es", "era", "será", "sería", "fue", "queda", "sigue siendo"),
        adverbs=("ahora", "todavía", "aún", "ya", "actualmente")),
    "pt": Language(
        keywords={"senha": P, "senhas": P, "palavra passe": P, "palavras passe": P,
                  "credenciais": P, "código de acesso": P, "segredo": S,
                  "chave secreta": S, "chave de api": A, "chave da api": A, "chave api": A,
                  "chave de acesso": A, "token de acesso": T, "chave privada": K},
        connectors=("de", "do", "da", "dos", "das", "para", "no", "na", "em", "ao"),
        copulas=("é", "era", "será", "seria", "foi", "fica", "continua"),
        adverbs=("agora", "ainda", "já", "atualmente")),
    "it": Language(
        keywords={"parola d'ordine": P, "credenziali": P, "codice di accesso": P,
                  "segreto": S, "chiave segreta": S, "chiave api": A, "chiave dell'api": A,
                  "chiave di accesso": A, "chiave d'accesso": A, "chiave di licenza": A,
                  "token di accesso": T, "chiave privata": K},
        connectors=("di", "del", "della", "dello", "dei", "degli", "delle", "per", "su",
                    "sul", "nel", "nella", "al", "alla", "in"),
        attached=("d'", "l'", "dell'", "all'", "sull'", "nell'"),
        copulas=("è", "e'", "é", "era", "sarà", "resta", "rimane", "diventa"),
        adverbs=("ora", "adesso", "ancora", "ormai", "attualmente")),
    "ru": Language(
        keywords={"пароль": P, "пароля": P, "паролю": P, "паролем": P, "пароле": P,
                  "пароли": P, "паролей": P, "учётные данные": P, "учетные данные": P,
                  "кодовое слово": P, "парольная фраза": P, "секрет": S, "секрета": S,
                  "секретный ключ": S, "секретного ключа": S, "api ключ": A, "ключ api": A,
                  "апи ключ": A, "ключ апи": A, "ключ доступа": A, "ключа доступа": A,
                  "лицензионный ключ": A, "токен": T, "токена": T, "токеном": T,
                  "токен доступа": T, "закрытый ключ": K, "закрытого ключа": K,
                  "приватный ключ": K, "приватного ключа": K},
        connectors=("от", "для", "к", "ко", "на", "в", "во", "у", "по", "с"),
        copulas=("это", "был", "была", "было", "будет", "стал", "стала", "такой", "таков"),
        adverbs=("теперь", "сейчас", "всё ещё", "все еще", "уже", "по-прежнему")),
    "uk": Language(
        keywords={"пароль": P, "пароля": P, "паролем": P, "облікові дані": P,
                  "ключ доступу": A, "токен": T, "секретний ключ": S, "приватний ключ": K},
        connectors=("від", "для", "до", "на", "в", "у"),
        copulas=("це", "був", "була", "буде", "такий"),
        adverbs=("тепер", "зараз", "досі")),
    "pl": Language(
        keywords={"hasło": P, "hasła": P, "hasłem": P, "haśle": P, "dane logowania": P,
                  "sekret": S, "klucz tajny": S, "tajny klucz": S, "klucz api": A,
                  "klucz dostępu": A, "token dostępu": T, "klucz prywatny": K},
        connectors=("do", "dla", "od", "na", "w", "z"),
        copulas=("to", "jest", "brzmi", "był", "było", "będzie"),
        adverbs=("teraz", "nadal", "wciąż")),
    "nl": Language(
        keywords={"wachtwoord": P, "wachtwoorden": P, "toegangscode": P, "geheim": S,
                  "geheime sleutel": S, "api sleutel": A, "toegangssleutel": A,
                  "toegangstoken": T, "privésleutel": K, "private sleutel": K},
        connectors=("voor", "van", "bij", "op", "in"),
        copulas=("is", "was", "blijft", "luidt"),
        adverbs=("nu", "nog steeds", "voortaan"),
        compounds={"wachtwoord": P}),
    "tr": Language(
        keywords={"şifre": P, "şifresi": P, "şifreniz": P, "şifrem": P, "şifreyi": P,
                  "şifrenin": P, "parola": P, "parolası": P, "parolanız": P, "parolam": P,
                  "parolayı": P, "kimlik bilgileri": P, "giriş bilgileri": P,
                  "gizli anahtar": S, "gizli anahtarı": S, "api anahtarı": A,
                  "api anahtari": A, "erişim anahtarı": A, "tokeni": T, "tokenı": T,
                  "erişim belirteci": T, "belirteç": T, "özel anahtar": K, "özel anahtarı": K},
        copulas=("şudur", "budur", "olarak", "şu", "şöyle"),
        adverbs=("artık", "şimdi", "hâlâ", "hala")),
    "id": Language(
        keywords={"kata sandi": P, "sandi": P, "rahasia": S, "kunci rahasia": S,
                  "kunci api": A, "kunci akses": A, "token akses": T, "kunci privat": K,
                  "kunci pribadi": K},
        connectors=("untuk", "dari", "ke", "di"),
        copulas=("adalah", "ialah", "yaitu", "yakni", "tetap"),
        adverbs=("sekarang", "masih"), loose=True),
    "vi": Language(
        keywords={"mật khẩu": P, "bí mật": S, "khóa bí mật": S, "khóa api": A,
                  "khoá api": A, "mã thông báo": T, "khóa riêng": K, "khóa riêng tư": K},
        connectors=("của", "cho", "để"),
        copulas=("là", "vẫn là"),
        adverbs=("bây giờ", "hiện tại", "giờ"), loose=True),
    "ar": Language(
        keywords={"كلمة المرور": P, "كلمة مرور": P, "كلمة السر": P, "كلمة سر": P,
                  "الرقم السري": P, "رقم سري": P, "رمز المرور": P, "الرمز السري": P,
                  "بيانات الاعتماد": P, "بيانات الدخول": P, "السر": S, "المفتاح السري": S,
                  "مفتاح سري": S, "مفتاح api": A, "مفتاح الapi": A, "مفتاح ال api": A,
                  "مفتاح واجهة البرمجة": A, "مفتاح الوصول": A, "مفتاح الدخول": A,
                  "رمز الوصول": T, "الرمز المميز": T, "رمز مميز": T, "رمز الدخول": T,
                  "توكن": T, "التوكن": T, "المفتاح الخاص": K, "مفتاح خاص": K},
        connectors=("في", "على", "من", "الخاصة ب", "الخاص ب", "الخاصة", "الخاص", "إلى",
                    "عن"),
        attached=("لل", "ل", "ب"),
        copulas=("هي", "هو", "كانت", "كان", "ستكون", "سيكون", "أصبحت", "أصبح", "اصبحت",
                 "تكون", "يكون"),
        adverbs=("الآن", "الان", "حاليا", "حالياً", "لا تزال", "لا يزال"),
        prefixes=("و", "ف", "ب", "ل"), loose=True),
    "fa": Language(
        keywords={"رمز عبور": P, "گذرواژه": P, "کلمه عبور": P, "کلید api": A,
                  "کلید دسترسی": A, "توکن": T, "کلید خصوصی": K},
        copulas=("است", "هست"),
        adverbs=("اکنون", "حالا")),
    "hi": Language(
        keywords={"पासवर्ड": P, "पासवर्ड्स": P, "कूटशब्द": P, "पासकोड": P, "सीक्रेट": S,
                  "गुप्त कुंजी": S, "एपीआई की": A, "एपीआई कुंजी": A, "api की": A,
                  "api कुंजी": A, "एक्सेस की": A, "एक्सेस कुंजी": A, "टोकन": T,
                  "एक्सेस टोकन": T, "निजी कुंजी": K, "प्राइवेट की": K},
        copulas=("है", "था", "थी", "हैं", "होगा"),
        adverbs=("अब", "अभी")),
    "ur": Language(
        keywords={"پاس ورڈ": P, "پاسورڈ": P, "خفیہ لفظ": P, "خفیہ کوڈ": P, "راز": S,
                  "خفیہ کلید": S, "اے پی آئی کی": A, "اے پی آئی کلید": A, "api کی": A,
                  "api کلید": A, "رسائی کلید": A, "ٹوکن": T, "نجی کلید": K,
                  "پرائیویٹ کی": K},
        copulas=("ہے", "تھا", "تھی", "ہیں"),
        adverbs=("اب", "ابھی")),
    "bn": Language(
        keywords={"পাসওয়ার্ড": P, "পাসওয়ার্ডটি": P, "পাসওয়ার্ডটা": P, "পাসকোড": P,
                  "গোপন শব্দ": P, "সিক্রেট": S, "গোপন কী": S, "এপিআই কী": A, "api কী": A,
                  "অ্যাক্সেস কী": A, "টোকেন": T, "টোকেনটি": T, "প্রাইভেট কী": K,
                  "ব্যক্তিগত কী": K},
        copulas=("হল", "হলো", "হচ্ছে", "হবে", "ছিল"),
        adverbs=("এখন",)),
    "zh": Language(
        keywords={"密码": P, "密碼": P, "口令": P, "登录密码": P, "登入密碼": P, "凭证": P,
                  "憑證": P, "凭据": P, "憑據": P, "通行码": P, "密钥": S, "密鑰": S,
                  "秘钥": S, "秘鑰": S, "金钥": S, "金鑰": S, "api密钥": A, "api 密钥": A,
                  "api密鑰": A, "api秘钥": A, "api金鑰": A, "访问密钥": A, "存取金鑰": A,
                  "接口密钥": A, "令牌": T, "访问令牌": T, "存取權杖": T, "权杖": T,
                  "權杖": T, "私钥": K, "私鑰": K},
        particles=("就是", "即是", "乃是", "是", "为", "為", "即", "设为", "設為", "设置为",
                   "設置為", "改为", "改為", "改成", "更改为", "更改為", "修改为", "修改為",
                   "更新为", "更新為", "重置为", "变成", "變成", "已改为", "已改為"),
        joined=True),
    "ja": Language(
        keywords={"パスワード": P, "暗証番号": P, "合言葉": P, "認証情報": P,
                  "シークレット": S, "シークレットキー": S, "秘密キー": K, "秘密鍵": K,
                  "apiキー": A, "api キー": A, "アクセスキー": A, "トークン": T,
                  "アクセストークン": T},
        particles=("は", "が", "を", "も", "って", "とは"),
        joined=True),
    "ko": Language(
        keywords={"비밀번호": P, "패스워드": P, "비번": P, "암호": P, "자격 증명": P,
                  "시크릿": S, "비밀 키": S, "api 키": A, "액세스 키": A, "토큰": T,
                  "액세스 토큰": T, "개인 키": K},
        particles=("는", "은", "이", "가", "를", "을", "도", "란"),
        joined=True),
    "th": Language(
        keywords={"รหัสผ่าน": P, "รหัส": P, "โทเค็น": T, "คีย์ api": A, "คีย์ลับ": S},
        particles=("คือ", "เป็น", "ได้แก่"),
        joined=True),
}

# Scripts written without spaces between words (Han, kana, Hangul, Thai): a value ends where
# they start again ("密码是Xk9#mQ2v。", "パスワードはXk9#mQ2vです"), and a Latin keyword
# beside them ("GitHub的token是…") is still a word of its own.
JOINED_SCRIPTS = ("\u0e00-\u0e7f\u1100-\u11ff\u2e80-\u2fdf\u3000-\u30ff\u3130-\u318f"
                  "\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef")
OPEN_QUOTES = "\"'`“‘„«「『"
CLOSE_QUOTE = {'"': '"', "'": "'", "`": "`", "“": "”", "‘": "’", "„": "“”", "«": "»",
               "「": "」", "『": "』"}
_QUOTES = "\"'`“”‘’„«»「」『』‹›"
_STOPS = "\u060c\u061b\u061f\u0964\u0965"  # Arabic comma, semicolon, question mark; danda

# Spellings of one letter that Unicode leaves in two forms (Bengali য় is U+09DF, or U+09AF
# with a nukta); and the apostrophe, typed straight or curly.
_VARIANTS = {"\u09df": "(?:\u09df|\u09af\u09bc)", "'": "['’]"}
_SEP = r"[ \t_-]{0,2}"


def _tokens(w: str) -> list[str]:
    """A keyword as pattern pieces, one per letter: a space is any separator, a letter with
    two spellings either."""
    return [_SEP if c == " " else _VARIANTS.get(c) or re.escape(c) for c in w.casefold()]


def _trie(words: set[str]) -> str:
    """One alternation for many keywords, as a trie ("pass(?:word|phrase)"): a position
    that starts none of them is rejected at its first letter, not once per keyword."""
    root: dict[str, dict] = {}
    for w in words:
        node = root
        for t in _tokens(w):
            node = node.setdefault(t, {})
        node[""] = {}

    def emit(node: dict[str, dict]) -> str:
        branches = [t + emit(child) for t, child in sorted(node.items()) if t]
        if not branches:
            return ""
        body = branches[0] if len(branches) == 1 else "(?:" + "|".join(branches) + ")"
        if "" in node:  # a keyword ends here; a longer one is tried first
            return f"(?:{body})?"
        return body

    return emit(root)


def _alt(words: set[str], sep: str) -> str:
    """Connectors and copulas: their spaces are whitespace, their apostrophes either kind."""
    ordered = sorted(words, key=lambda w: (-len(w), w))
    return "|".join(re.escape(w.casefold()).replace(r"\ ", sep).replace("'", "['’]")
                    for w in ordered)


def _union(field: str) -> set[str]:
    """One field's words, every language together."""
    return {w for lang in LANGUAGES.values() for w in getattr(lang, field)}


# The keyword -> type table, every language together; a word not in it (a compound, a word
# with a prefix) takes the type of the longest keyword it ends with.
KINDS: dict[str, str] = {}
for _lang in LANGUAGES.values():
    for _w, _k in {**_lang.keywords, **(_lang.compounds or {})}.items():
        KINDS.setdefault(" ".join(_w.casefold().replace("’", "'").split()), _k)
_BY_LENGTH = sorted(KINDS, key=len, reverse=True)


_JOINERS = re.compile(r"[\s_-]+")


def kind_of(keyword: str) -> str:
    """The placeholder type for the keyword a pattern matched ("Datenbank-Passwort")."""
    k = _JOINERS.sub(" ", keyword.casefold().replace("’", "'")).strip()
    if k in KINDS:
        return KINDS[k]
    squeezed = k.replace(" ", "")
    for w in _BY_LENGTH:
        if k.endswith(w) or squeezed.endswith(w.replace(" ", "")):
            return KINDS[w]
    return "secret"


def _build(loose: bool = False) -> re.Pattern[str]:
    """The phrase pattern; `loose`: the keywords of the languages that name what a secret is
    for without a preposition, each followed by one to four words and a copula."""
    wordy = {w for lang in LANGUAGES.values() if not lang.joined and (lang.loose or not loose)
             for w in lang.keywords}
    joined = {w for lang in LANGUAGES.values() if lang.joined for w in lang.keywords}
    stems = {w for lang in LANGUAGES.values() if lang.loose or not loose
             for w in (lang.compounds or {})}
    prefixes = "".join(sorted(_union("prefixes")))
    letter_not_joined = rf"[^\W{JOINED_SCRIPTS}]"
    # before a word keyword: not inside another word (a joined script beside it is fine),
    # a name ("arn:…:secretsmanager") or a path; "db-password", "WLAN-Passwort", "وكلمة"
    # and "Datenbankpasswort" are words that end in a keyword
    before = rf"(?<![:/.@-])(?<!{letter_not_joined})"
    lead = rf"(?:[{prefixes}]|[^\W_{JOINED_SCRIPTS}]{{1,30}}-){{0,2}}"
    compound = rf"[^\W\d_{JOINED_SCRIPTS}]{{2,30}}?(?:{_trie(stems)})" if stems else ""
    kw = (rf"(?P<kw>{before}(?:{lead}(?:{_trie(wordy)})" + (rf"|{compound}" if stems else "")
          + rf")(?:e?s)?"
          rf"(?!{letter_not_joined}|-)" + ("" if loose else rf"|(?:{_trie(joined)})") + ")")
    word = r"[^\s=,;()\[\]\"`]{1,60}"
    connectors = _alt(_union("connectors"), r"\s{1,4}")
    attached = _alt(_union("attached"), r"\s{1,4}")
    adverbs = _alt(_union("adverbs"), r"\s{1,4}")
    copulas = _alt(_union("copulas"), r"\s{1,4}")
    particles = _trie(_union("particles"))
    # what the secret is for: "für die Datenbank", "de la base de données", "لقاعدة البيانات"
    what = (rf"(?:\s{{1,4}}(?:(?:{connectors})\s{{1,4}}|{attached}){word}"
            rf"(?:\s{{1,4}}{word}){{0,5}}?)?")
    if loose:
        what = rf"(?:\s{{1,4}}{word}){{1,4}}?"
    symbols = r"==|:=|=>|->|→|=|:|：|＝|—|–|(?<=\s)-{1,2}(?=\s)"
    # a bare value (no copula) must look like one: a digit or a symbol within its first
    # characters ("Passwort Xk9#mQ2v", "पासवर्ड Xk9#mQ2v है"), never a plain word
    stop = rf"\s{_QUOTES}{_STOPS}{JOINED_SCRIPTS}"  # what ends a value
    witness = rf"(?=[{OPEN_QUOTES}]?[^{stop}]{{0,63}}[\d#$%&*+=@^~!?/\\|_])"
    sep = (rf"(?:\s{{0,4}}(?:{symbols})\s{{0,4}}"
           rf"|\s{{1,4}}(?:{copulas})(?:\s{{1,4}}(?:{adverbs}))?(?:\s{{0,4}}[:：])?\s{{1,4}}"
           + ("" if loose else
              rf"|\s{{0,4}}(?:{particles})\s{{0,4}}(?:[:：]\s{{0,4}})?"
              rf"|(?P<bare>(?:\s{{1,4}}|(?<=[{JOINED_SCRIPTS}]))(?!(?:{particles}))){witness}")
           + ")")
    value = rf"(?P<q>[{OPEN_QUOTES}]?)(?:(?<=«)\s{{0,2}})?(?P<val>[^{stop}]+)"
    now = rf"(?:\s{{1,4}}(?:{adverbs}))?"  # "la contraseña ahora es …", "пароль теперь …"
    pattern = rf"{kw}(?:\s{{0,3}}\([^()\n]{{0,40}}\))?{what}{now}{sep}{value}"
    return re.compile(pattern, re.IGNORECASE)  # at import: PHRASES (walked by the cost test)


PHRASES = (_build(), _build(loose=True))


# A value with a template in it names a placeholder, not a secret: `memstrata:<space>`
TEMPLATED = re.compile(r"<[A-Za-z_][\w -]{0,40}>|\{\{?\s{0,4}[A-Za-z_][\w.]{0,40}\s{0,4}\}|\$\{")
# A value with no copula before it ("Passwort Xk9#mQ2v") is read only when it cannot be a
# name or an amount: lowercase words and digits joined by `-_.:/,` ("cert-manager-r53",
# "29,525-token") are what a sentence goes on about, not a password.
NAME_LIKE = re.compile(r"[a-z0-9]{1,200}(?:[-_.:/,][a-z0-9]{1,200}){0,40}")


def quoted(text: str, q: str, end: int) -> bool:
    """Whether a value opened by the quote `q` is closed right after it ends (French
    guillemets may have a space inside: « … »)."""
    if q == "«":
        end += len(text[end:end + 2]) - len(text[end:end + 2].lstrip())
    return bool(q) and end < len(text) and text[end] in CLOSE_QUOTE.get(q, q)
