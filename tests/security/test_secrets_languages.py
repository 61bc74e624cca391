"""A password, secret, token or key stated in any of the languages developers chat in, and
the password in any URL's userinfo, never reach what is stored, exported, listed, audited or
injected; a sentence that only mentions the word is stored as it was said.

The variants are generated: (language, word, phrasing) × a generated value."""

from __future__ import annotations

import json
import re
import string
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from memstrata_app.engine import MemoryEngine
from memstrata_app.engine.governance.secrets import redact
from memstrata_app.proxy.injection import format_block

PLACEHOLDER = r"\[secret:[a-z0-9-]+\]"

# How each language states one: its words for a password, a key, a token, a secret, and
# phrasings with the word ({kw}) and the value ({v}).
STATED: dict[str, tuple[list[str], list[str]]] = {
    "English": (["password", "passphrase", "API key", "access token", "client secret",
                 "DB-password"],
                ["The {kw} for the staging database is {v}.", "{kw}: {v}",
                 "our {kw} is now {v}", "the {kw} {v} works", "{kw} = '{v}'"]),
    "Chinese": (["密码", "密碼", "口令", "API密钥", "令牌", "token"],
                ["数据库的{kw}是{v}。", "{kw}：{v}", "{kw}为 {v}", "生产环境{kw}就是{v}，别外传"]),
    "Hindi": (["पासवर्ड", "टोकन", "एपीआई कुंजी"],
              ["डेटाबेस का {kw} {v} है", "{kw}: {v}", "{kw} है {v}"]),
    "Spanish": (["contraseña", "clave", "clave de API", "token de acceso"],
                ["La {kw} de la base de datos es {v}", "{kw}: {v}", "la {kw} ahora es {v}",
                 "La {kw} es «{v}»."]),
    "French": (["mot de passe", "clé API", "jeton d'accès", "clé secrète", "mdp"],
               ["Le {kw} de la base de données est {v}", "{kw} : {v}",
                "Le {kw} est maintenant « {v} »", "le {kw} de l'admin est {v}"]),
    "Arabic": (["كلمة المرور", "كلمة السر", "مفتاح API", "رمز الوصول"],
               ["{kw} لقاعدة البيانات هي {v}", "{kw}: {v}", "و{kw} هي {v}"]),
    "Bengali": (["পাসওয়ার্ড", "টোকেন"], ["ডাটাবেসের {kw} হল {v}", "{kw}: {v}", "{kw} {v}"]),
    "Portuguese": (["senha", "chave de API", "palavra-passe"],
                   ["A {kw} do banco de dados é {v}", "{kw}: {v}", "a {kw} agora é {v}"]),
    "Russian": (["пароль", "Пароль", "токен", "ключ API", "секретный ключ"],
                ["{kw} от базы данных — {v}", "{kw}: {v}", "{kw} к базе данных {v}",
                 "{kw} теперь {v}"]),
    "Urdu": (["پاس ورڈ", "ٹوکن"], ["ڈیٹا بیس کا {kw} {v} ہے", "{kw}: {v}"]),
    "German": (["Passwort", "Kennwort", "API-Schlüssel", "Zugangstoken", "Datenbankpasswort",
                "WLAN-Passwort"],
               ["Das {kw} für die Datenbank ist {v}", "{kw}: {v}", "Das {kw} lautet „{v}“.",
                "Das neue {kw} ist jetzt {v}"]),
    "Japanese": (["パスワード", "APIキー", "トークン", "アクセストークン"],
                 ["データベースの{kw}は「{v}」です", "{kw}は{v}です", "{kw}：{v}"]),
    "Korean": (["비밀번호", "API 키", "토큰", "패스워드"],
               ["데이터베이스 {kw}는 {v}입니다", "{kw}: {v}", "서버 {kw} {v}"]),
    "Italian": (["password", "chiave API", "chiave segreta"],
                ["La {kw} del database è {v}", "{kw}: {v}", "la {kw} è ancora {v}"]),
    "Turkish": (["şifre", "parola", "API anahtarı", "Şifre"],
                ["Veritabanı {kw} {v}", "{kw}: {v}", "{kw} şudur: {v}", "{kw} {v}'dir"]),
    "Dutch": (["wachtwoord", "API-sleutel"], ["het {kw} voor de database is {v}", "{kw}: {v}"]),
    "Polish": (["hasło", "klucz API"], ["{kw} do bazy danych to {v}", "{kw}: {v}"]),
    "Indonesian": (["kata sandi", "kunci API"], ["{kw} database adalah {v}", "{kw}: {v}"]),
    "Vietnamese": (["mật khẩu", "khóa API"], ["{kw} của cơ sở dữ liệu là {v}", "{kw}: {v}"]),
}
PHRASINGS = [(lang, kw, p) for lang, (words, phrasings) in STATED.items()
             for kw in words for p in phrasings]

SYMBOLS = "#$%&*+=@^~!"


@st.composite
def secret_values(draw: Any) -> str:
    """A password or key as a person or a machine makes one: letters, a digit and a symbol
    in every four characters, 12 to 24 characters (a key's minimum is 12)."""
    chunks = draw(st.lists(st.tuples(
        st.sampled_from(string.ascii_letters), st.sampled_from(string.ascii_letters),
        st.sampled_from(string.digits), st.sampled_from(SYMBOLS)), min_size=3, max_size=6))
    return "".join("".join(c) for c in chunks)


def assert_no_trace(value: str, text: str) -> None:
    """Not the value, and none of its four-character windows (each holds a digit and a
    symbol, which no phrasing here does): nothing of it was left beside a placeholder."""
    assert value not in text, text
    for i in range(len(value) - 3):
        assert value[i:i + 4] not in text, (value[i:i + 4], text)


def test_every_language_of_the_issue_and_the_ten_most_spoken_is_covered() -> None:
    assert {"English", "Chinese", "Hindi", "Spanish", "French", "Arabic", "Bengali",
            "Portuguese", "Russian", "Urdu", "German", "Japanese", "Korean", "Italian",
            "Turkish"} <= set(STATED)
    assert len(PHRASINGS) > 200


@settings(max_examples=600, deadline=None)
@given(st.sampled_from(PHRASINGS), secret_values())
def test_a_secret_stated_in_any_language_becomes_a_placeholder(
        phrasing: tuple[str, str, str], value: str) -> None:
    _, kw, template = phrasing
    said = template.format(kw=kw, v=value)
    out = redact(said)[0]
    assert_no_trace(value, out)
    before, after = template.format(kw=kw, v="\0").split("\0")
    assert re.fullmatch(re.escape(before) + PLACEHOLDER + re.escape(after), out), out


# --- URL userinfo -------------------------------------------------------------------------
SCHEMES = st.one_of(st.sampled_from(["redis", "rediss", "postgres", "postgresql", "mysql",
                                     "mongodb+srv", "amqp", "https", "ftp", "smtp", "ldap"]),
                    st.from_regex(r"[a-z][a-z0-9+.-]{0,12}", fullmatch=True))
USERS = st.one_of(st.just(""), st.from_regex(r"[a-z][a-z0-9_.-]{0,12}", fullmatch=True))
HOSTS = st.from_regex(r"[a-z][a-z0-9-]{0,10}(\.[a-z][a-z0-9-]{0,8}){0,2}(:[0-9]{2,5})?",
                      fullmatch=True)
# a password's characters as userinfo allows them unencoded (RFC 3986: unreserved and
# sub-delims), and any character at all percent-encoded
RAW = string.ascii_letters + string.digits + "-._~!$&'()*+,;="


@st.composite
def url_passwords(draw: Any) -> str:
    chars = draw(st.lists(st.one_of(st.sampled_from(RAW), st.characters(
        blacklist_categories=("Cs",))), min_size=1, max_size=24))
    encode = draw(st.lists(st.booleans(), min_size=len(chars), max_size=len(chars)))
    return "".join(quote(c, safe="") if (e or c not in RAW) else c
                   for c, e in zip(chars, encode, strict=True))


@settings(max_examples=250, deadline=None)
@given(SCHEMES, USERS, url_passwords(), HOSTS,
       st.sampled_from(["", "/0", "/app?sslmode=require", "/vhost"]),
       st.sampled_from(["connect to {u}", "REDIS_URL={u}", "the cache is at {u} now",
                        "DSN: '{u}'", "Die Datenbank-URL lautet {u}", "地址是 {u}"]))
def test_any_url_userinfo_password_is_a_secret(scheme: str, user: str, password: str,
                                               host: str, path: str, phrasing: str) -> None:
    # an upper-case `$NAME` says where the password lives (an environment variable): kept
    assume(re.fullmatch(r"\$[A-Z_][A-Z0-9_]*", password) is None)
    url = f"{scheme}://{user}:{password}@{host}{path}"
    out = redact(phrasing.format(u=url))[0]
    assert phrasing.format(u=f"{scheme}://{user}:[secret:password]@{host}{path}") == out


def test_the_issue_s_url_with_an_empty_user() -> None:
    assert redact("redis://:password@cache.internal:6379/0")[0] == (
        "redis://:[secret:password]@cache.internal:6379/0")
    assert redact("amqp://:p%40ss%2Fw0rd@mq/")[0] == "amqp://:[secret:password]@mq/"
    # characters a parser would end the userinfo at, typed unencoded all the same
    assert redact("redis://:Xk9#mQ2v@cache:6379")[0] == "redis://:[secret:password]@cache:6379"
    assert redact("redis://:p@ss?w0rd@cache")[0] == "redis://:[secret:password]@cache"
    # filler is masked, with a user or without (Hypothesis found `redis://:xxx@a` let through)
    assert redact("redis://:xxx@a")[0] == "redis://:[secret:password]@a"
    assert redact("redis://u:xxx@a")[0] == "redis://u:[secret:password]@a"
    assert redact("redis://:***@cache")[0] == "redis://:[secret:password]@cache"
    # a password that starts with a dollar sign is not an environment variable
    assert redact("redis://:$ecretPass@a")[0] == "redis://:[secret:password]@a"
    assert redact("redis://:$REDIS_PASSWORD@a")[0] == "redis://:$REDIS_PASSWORD@a"


@pytest.mark.parametrize("text", [
    "redis://:${REDIS_PASSWORD}@cache:6379", "postgres://app:{{ db_password }}@db/app",
    "https://example.com:8443/a@b", "See https://user@example.com/path",
    "mailto:someone@example.com", "git@github.com:acme/api.git", "ssh://git@host:22/repo",
])
def test_urls_without_a_password_are_left_alone(text: str) -> None:
    assert redact(text)[0] == text


# --- the false-positive side --------------------------------------------------------------
MENTIONS = [  # the word, in each language, with no value
    "rotate the password monthly", "The password must be at least 12 characters long.",
    "Das Passwort wird monatlich geändert", "Das Passwort ist erforderlich.",
    "Das Passwort wird 2024-05-01 geändert.", "Le mot de passe doit contenir 12 caractères.",
    "Le mot de passe de l'administrateur est changé chaque mois.",
    "La contraseña es obligatoria.", "la clave es usar índices en la base de datos",
    "A senha deve ser trocada a cada 90 dias.", "La password è obbligatoria.",
    "Пароль должен быть не короче 8 символов.", "Пароль от базы данных хранится в Vault.",
    "定期更换密码", "密码是什么？", "パスワードを変更してください", "パスワードは毎月変更します。",
    "비밀번호를 변경하세요", "비밀번호는 매달 바뀝니다", "पासवर्ड बदलें", "पासवर्ड हर महीने बदलता है",
    "كلمة المرور مطلوبة", "পাসওয়ার্ড পরিবর্তন করুন", "پاس ورڈ ہر مہینے بدلیں",
    "şifre en az 8 karakter olmalı", "Şifre her ay değişir.", "het wachtwoord verloopt elke maand",
    "hasło musi mieć 12 znaków", "kata sandi harus diganti setiap bulan",
    "the password manager is 1Password", "the password for server-42 was reset",
    "acme dns01 solver uses route53 creds from the cert-manager-r53 secret",
    "every token of MiniLM's 29,525-token vocabulary",
    "`ANTHROPIC_AUTH_TOKEN=memstrata:shop`", "the token count is 4096",
    "Die Datenbank für das Passwort-Backend ist PostgreSQL 16.",
    "the API key for project-7 is required", "password policy v2.1",
]


@given(st.sampled_from(MENTIONS), st.sampled_from(["", " ", ".", "!", " (see the wiki)"]))
@settings(max_examples=150, deadline=None)
def test_a_sentence_that_only_mentions_the_word_is_unchanged(text: str, tail: str) -> None:
    said = text + tail
    assert redact(said)[0] == said


# --- stored, exported, listed, audited and injected ----------------------------------------
@pytest.fixture(scope="module")
def ledger(tmp_path_factory: pytest.TempPathFactory, local_embedder: Any) -> Any:
    path = tmp_path_factory.mktemp("languages") / "ledger.db"
    with MemoryEngine.open(path, embedder=local_embedder, judge=None) as eng:
        yield eng


def _file_bytes(path: Path) -> bytes:
    return b"".join(f.read_bytes() for f in path.parent.iterdir()
                    if f.name.startswith(path.name))


@settings(max_examples=12, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.sampled_from(PHRASINGS), secret_values())
def test_what_the_ledger_keeps_of_a_stated_secret_holds_nothing_of_it(
        ledger: Any, phrasing: tuple[str, str, str], value: str) -> None:
    _, kw, template = phrasing
    res = ledger.ingest(template.format(kw=kw, v=value))
    assert res.redacted >= 1
    assert_no_trace(value, json.dumps(res.to_dict(), ensure_ascii=False))
    rows = ledger.list_assertions(limit=10_000)  # listed
    assert_no_trace(value, "\n".join(json.dumps(a.to_dict(), ensure_ascii=False, default=str)
                                      for a in rows))
    assert_no_trace(value, json.dumps(list(ledger.export()), ensure_ascii=False))  # exported
    hits = ledger.retrieve(template.format(kw=kw, v=""), k=5)  # injected
    block = format_block(hits) or ""
    assert_no_trace(value, block)
    ledger.log_injection("ollama", "what is it?", [(h.assertion_id, h.score) for h in hits],
                         [], {"k": 5})  # audited
    assert_no_trace(value, json.dumps(ledger.injections(limit=5), ensure_ascii=False,
                                      default=str))
    raw = _file_bytes(ledger.path)
    assert value.encode() not in raw


ISSUE_SENTENCES = [  # the five languages the attack run used, and its URL
    "Das Passwort für die Datenbank ist Xk9#mQ2v",
    "Le mot de passe de la base de données est Xk9#mQ2v",
    "La contraseña de la base de datos es Xk9#mQ2v",
    "Пароль от базы данных — Xk9#mQ2v",
    "数据库的密码是Xk9#mQ2v",
    "The session cache is redis://:Xk9#mQ2v@cache.internal:6379/0",
]


def test_the_endpoint_never_injects_a_secret_stated_in_another_language(
        http: Any, upstream: Any, engine: Any) -> None:
    from memstrata_app import access

    for said in ISSUE_SENTENCES:
        r = http.post("/api/chat", json={"model": "standin-chat", "stream": False,
                                         "messages": [{"role": "user", "content": said}]})
        assert r.status_code == 200, r.text
    upstream.clear()
    for ask in ("Wie lautet das Passwort der Datenbank?", "数据库的密码是什么？",
                "what is the session cache URL?"):
        r = http.post("/api/chat", json={"model": "standin-chat", "stream": False,
                                         "messages": [{"role": "user", "content": ask}]})
        assert r.status_code == 200, r.text
    sent = json.dumps([req.json for req in upstream.requests if req.method == "POST"],
                      ensure_ascii=False)
    assert "[secret:password]" in sent  # remembered, as its placeholder
    assert "Xk9#mQ2v" not in sent
    q = http.get("/memstrata/v1/query", headers={access.HEADER: access.load_token()},
                 params={"q": "Passwort Datenbank mot de passe contraseña пароль 密码", "k": 20})
    assert q.status_code == 200 and "Xk9#mQ2v" not in q.text
    texts = [a.text for a in engine.list_assertions(limit=100)]
    assert len(texts) >= len(ISSUE_SENTENCES) and not any("Xk9#mQ2v" in t for t in texts)
    assert b"Xk9#mQ2v" not in _file_bytes(engine.path)
