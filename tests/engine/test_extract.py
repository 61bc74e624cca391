"""Deterministic extraction: sentence splitting, rules, normalization, dates, hashing."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta, timezone

import pytest

from memstrata_app.engine.types import Cardinality, Extraction
from memstrata_app.engine.understand.extract import (
    DEFAULT_VOCABULARY,
    extract,
    normalize_entity,
    normalize_object,
    normalize_relation,
    normalize_text,
    split_sentences,
    text_hash,
)

AT = datetime(2026, 6, 15, 12, 0, tzinfo=UTC)  # a Monday


def triples(sentence: str, at: datetime = AT) -> list[tuple[str, str, str]]:
    return [
        (normalize_entity(e.subject), normalize_relation(e.relation), normalize_object(e.object))
        for e in extract(sentence, at)
    ]


def one(sentence: str, at: datetime = AT) -> Extraction:
    got = extract(sentence, at)
    assert len(got) == 1, f"{sentence!r} -> {got}"
    return got[0]


# --- families: sentence -> exactly these normalized triples ---------------------------

CONFIG = [
    ("The API timeout is now 45 seconds", [("api", "timeout", "45s")]),
    ("the API timeout is 45s", [("api", "timeout", "45s")]),
    ("API_TIMEOUT=45s", [("api", "timeout", "45s")]),
    ("set MAX_RETRIES to 5", [("max retries", "value", "5")]),
    ("MAX_RETRIES=5", [("max retries", "value", "5")]),
    ("max_retries: 5", [("max retries", "value", "5")]),
    ("We set max_retries to 7.", [("max retries", "value", "7")]),
    ("Set the cache TTL to 600", [("cache", "ttl", "600")]),
    ("the cache TTL is 600", [("cache", "ttl", "600")]),
    ("set the cache ttl to 900", [("cache", "ttl", "900")]),
    ("CACHE_TTL=900", [("cache", "ttl", "900")]),
    ("changed the batch size from 32 to 64", [("batch size", "value", "64")]),
    ("The batch size was changed from 32 to 64.", [("batch size", "value", "64")]),
    ("batch size: 64", [("batch size", "value", "64")]),
    ("the log level changed from debug to info", [("log level", "value", "info")]),
    ("LOG_LEVEL: warn", [("log level", "value", "warn")]),
    ("`LOG_LEVEL=warn`", [("log level", "value", "warn")]),
    ("export LOG_LEVEL=debug", [("log level", "value", "debug")]),
    ("`DATABASE_URL=postgres://db:5432/app`", [("database", "url", "postgres://db:5432/app")]),
    ("The database URL is postgres://db:5432/app", [("database", "url", "postgres://db:5432/app")]),
    ("retry limit = 3", [("retry limit", "value", "3")]),
    ("The retry limit is 3.", [("retry limit", "value", "3")]),
    (
        "The rate limit for the public API is 500 requests per minute",
        [("public api", "rate_limit", "500 requests per minute")],
    ),
    ("The public API rate limit is 600 requests per minute",
     [("public api", "rate_limit", "600 requests per minute")]),
    ("We increased the pool size to 20", [("pool size", "value", "20")]),
    ("the pool size is 10", [("pool size", "value", "10")]),
    ("connection pool size is 10", [("connection", "pool_size", "10")]),
    ("We lowered the connection pool size to 5", [("connection", "pool_size", "5")]),
    ("server.port: 8081", [("server", "port", "8081")]),
    ('GREETING="hello world"', [("greeting", "value", "hello world")]),
    ("The worker concurrency is 8", [("worker", "concurrency", "8")]),
    ("The API timeout defaults to 30s", [("api", "timeout", "30s")]),
    ("Feature flag NEW_CHECKOUT is true", [("new checkout", "value", "true")]),
]

PORTS = [
    ("The auth service runs on port 8080", [("auth service", "port", "8080")]),
    ("auth-service port: 8080", [("auth service", "port", "8080")]),
    ("the auth service listens on 8080", [("auth service", "port", "8080")]),
    ("the auth service port is 8080", [("auth service", "port", "8080")]),
    ("The auth_service is running on port 8080.", [("auth service", "port", "8080")]),
    ("payments-api listens on 9090", [("payments api", "port", "9090")]),
    ("Redis is on port 6380", [("redis", "port", "6380")]),
    ("Redis uses port 6380", [("redis", "port", "6380")]),
    ("the billing service port is 8080", [("billing service", "port", "8080")]),
    ("Postgres listens on localhost:5433",
     [("postgres", "port", "5433"), ("postgres", "host", "localhost")]),
    ("The port for the auth service is 8081", [("auth service", "port", "8081")]),
    ("The auth service's port is 8082", [("auth service", "port", "8082")]),
]

ENDPOINTS = [
    ("The billing endpoint is /v2/invoices", [("billing", "url", "/v2/invoices")]),
    ("The staging URL is https://staging.example.com",
     [("staging", "url", "https://staging.example.com")]),
    ("The API base URL moved to https://api.example.com/v3",
     [("api", "url", "https://api.example.com/v3")]),
    ("the health check endpoint is now /healthz", [("health check", "url", "/healthz")]),
    ("The docs are at https://docs.example.com", [("docs", "url", "https://docs.example.com")]),
    ("the API base URL is https://api.example.com/v2",
     [("api", "url", "https://api.example.com/v2")]),
    ("The database host is db.internal", [("database", "host", "db.internal")]),
    ("The metrics dashboard is available at /grafana", [("metrics dashboard", "url", "/grafana")]),
]

VERSIONS = [
    ("bumped requests to 2.31.0", [("requests", "version", "2.31.0")]),
    ("We bumped requests from 2.30.0 to 2.31.0.", [("requests", "version", "2.31.0")]),
    ("we're on Django 5.1 now", [("django", "version", "5.1")]),
    ("We are on Django 5.1", [("django", "version", "5.1")]),
    ("upgraded numpy from 1.26 to 2.0", [("numpy", "version", "2.0")]),
    ("We use React 18.2", [("react", "version", "18.2")]),
    ("pinned pydantic to 2.7.1", [("pydantic", "version", "2.7.1")]),
    ("pydantic is pinned to v2.7.1", [("pydantic", "version", "2.7.1")]),
    ("pandas==2.2.1", [("pandas", "version", "2.2.1")]),
    ("Upgrade to Node 20", [("node", "version", "20")]),
    ("We upgraded to Node 22", [("node", "version", "22")]),
    ("The project uses Python 3.12", [("python", "version", "3.12")]),
    ("The Python version is 3.12", [("python", "version", "3.12")]),
    ("the service runs on Python 3.11", [("python", "version", "3.11")]),
    ("we moved from Python 3.11 to 3.12", [("python", "version", "3.12")]),
    ("We use React 18.2 and Tailwind 3.4",
     [("react", "version", "18.2"), ("tailwind", "version", "3.4")]),
]

RENAMES = [
    ("`get_user` was renamed to `fetch_user`", [("get user", "name", "fetch_user")]),
    ("renamed UserService to AccountService", [("userservice", "name", "accountservice")]),
    ("the function parse_cfg is now called load_config", [("parse cfg", "name", "load_config")]),
    ("We renamed the `billing` module to `invoicing`", [("billing", "name", "invoicing")]),
    ("The class Foo has been renamed to Bar", [("foo", "name", "bar")]),
    ("moved `utils.helpers` to `core.helpers`", [("utils.helpers", "location", "core.helpers")]),
]

OWNERS = [
    ("Alice owns the billing service", [("billing service", "owner", "alice")]),
    ("The billing service is owned by team Payments",
     [("billing service", "owner", "team payments")]),
    ("the billing service owner is Alice", [("billing service", "owner", "alice")]),
    ("The owner of the billing service is Alice", [("billing service", "owner", "alice")]),
    ("Bob is the tech lead for search", [("search", "lead", "bob")]),
    ("The tech lead for search is Bob", [("search", "lead", "bob")]),
    ("search's tech lead is Bob", [("search", "lead", "bob")]),
    ("the on-call for auth is Carol", [("auth", "on_call", "carol")]),
    ("Carol is on call for auth", [("auth", "on_call", "carol")]),
    ("Carol is the on-call for auth", [("auth", "on_call", "carol")]),
    ("maintainer of the SDK is Dave", [("sdk", "maintainer", "dave")]),
    ("Dave is the maintainer of the SDK", [("sdk", "maintainer", "dave")]),
    ("The SDK is maintained by Dave", [("sdk", "owner", "dave")]),
]

DEPLOYS = [
    ("The worker is deployed to us-east-1", [("worker", "deployed_to", "us-east-1")]),
    ("the worker deploys to us-east-1", [("worker", "deployed_to", "us-east-1")]),
    ("payments runs in the eu-west cluster", [("payments", "deployed_to", "eu-west cluster")]),
    ("the API is hosted on Fly.io", [("api", "deployed_to", "fly.io")]),
    ("we deploy the frontend to Vercel", [("frontend", "deployed_to", "vercel")]),
    ("We deployed the frontend to Netlify.", [("frontend", "deployed_to", "netlify")]),
    ("The frontend is deployed on Vercel", [("frontend", "deployed_to", "vercel")]),
]

MULTI = [
    ("The API depends on Redis", [("api", "depends_on", "redis")]),
    ("auth-service depends on postgres and redis",
     [("auth service", "depends_on", "postgres"), ("auth service", "depends_on", "redis")]),
    ("The API requires Postgres, Redis and Kafka",
     [("api", "depends_on", "postgres"), ("api", "depends_on", "redis"),
      ("api", "depends_on", "kafka")]),
    ("the frontend uses Tailwind", [("frontend", "uses", "tailwind")]),
    ("The frontend uses Tailwind for styling", [("frontend", "uses", "tailwind")]),
    ("we use Tailwind", [("project", "uses", "tailwind")]),
    ("the SDK supports Python 3.10 and 3.11",
     [("sdk", "supports", "python 3.10"), ("sdk", "supports", "python 3.11")]),
    ("The SDK supports Linux, macOS and Windows",
     [("sdk", "supports", "linux"), ("sdk", "supports", "macos"), ("sdk", "supports", "windows")]),
    ("The billing service integrates with Stripe",
     [("billing service", "integrates_with", "stripe")]),
    ("the API is written in Go", [("api", "language", "go")]),
    ("We added httpx as a dependency", [("project", "depends_on", "httpx")]),
]

REMOVALS = [
    ("The API no longer depends on Redis", [("api", "depends_on", "redis")]),
    ("The API doesn't depend on Redis anymore", [("api", "depends_on", "redis")]),
    ("we dropped the dependency on lodash", [("project", "depends_on", "lodash")]),
    ("the SDK no longer supports Python 3.8", [("sdk", "supports", "python 3.8")]),
    ("We dropped support for Python 3.8", [("project", "supports", "python 3.8")]),
    ("we stopped using Tailwind", [("project", "uses", "tailwind")]),
    ("We no longer use Tailwind", [("project", "uses", "tailwind")]),
    ("the frontend stopped using Tailwind", [("frontend", "uses", "tailwind")]),
    ("removed memcached from the stack", [("project", "uses", "memcached")]),
    ("We removed lodash from the dependencies", [("project", "depends_on", "lodash")]),
    ("The API is no longer on port 8080", [("api", "port", "8080")]),
    ("The auth service no longer listens on 8080", [("auth service", "port", "8080")]),
    ("The worker is no longer deployed to us-east-1", [("worker", "deployed_to", "us-east-1")]),
    ("The API timeout is no longer 30 seconds", [("api", "timeout", "30s")]),
]

GENERIC = [
    ("The database is Postgres", [("database", "value", "postgres")]),
    ("the main language is Go", [("language", "value", "go")]),
    ("The default branch is main", [("default branch", "value", "main")]),
    ("The repo's default branch is main", [("repo", "default_branch", "main")]),
]

ALL = CONFIG + PORTS + ENDPOINTS + VERSIONS + RENAMES + OWNERS + DEPLOYS + MULTI + GENERIC


@pytest.mark.parametrize(("sentence", "expected"), ALL + REMOVALS)
def test_family_triples(sentence: str, expected: list[tuple[str, str, str]]) -> None:
    assert triples(sentence) == expected


@pytest.mark.parametrize(("sentence", "expected"), ALL)
def test_positive_statements_are_not_removals(sentence, expected) -> None:
    assert not any(e.removal for e in extract(sentence, AT))


@pytest.mark.parametrize(("sentence", "expected"), REMOVALS)
def test_removals_are_flagged(sentence, expected) -> None:
    got = extract(sentence, AT)
    assert got and all(e.removal for e in got)


CONTRAST = [
    ("The API no longer uses Redis, it uses Valkey now",
     [("api", "uses", "redis", True), ("api", "uses", "valkey", False)]),
    ("The auth service no longer runs on port 8080 but on 9090",
     [("auth service", "port", "8080", True), ("auth service", "port", "9090", False)]),
    ("The API no longer depends on Redis and now depends on Kafka",
     [("api", "depends_on", "redis", True), ("api", "depends_on", "kafka", False)]),
    ("We no longer use Redis but Valkey",
     [("project", "uses", "redis", True), ("project", "uses", "valkey", False)]),
    ("The worker is no longer deployed to us-east-1 but to eu-west-1",
     [("worker", "deployed_to", "us-east-1", True),
      ("worker", "deployed_to", "eu-west-1", False)]),
    ("The API no longer depends on Redis and Kafka",
     [("api", "depends_on", "redis", True), ("api", "depends_on", "kafka", True)]),
]


@pytest.mark.parametrize(("sentence", "expected"), CONTRAST)
def test_removal_and_new_value_in_one_sentence(sentence: str, expected) -> None:
    got = [(normalize_entity(e.subject), e.relation, normalize_object(e.object), e.removal)
           for e in extract(sentence, AT)]
    assert got == expected


def test_replacement_retires_old_and_adds_new() -> None:
    got = extract("We replaced Redis with Valkey", AT)
    assert [(normalize_object(e.object), e.removal) for e in got] == [
        ("redis", True), ("valkey", False)]
    assert {normalize_relation(e.relation) for e in got} == {"uses"}


# --- restatements share one key; different keys stay apart ---------------------------

@pytest.mark.parametrize(
    "group",
    [
        ["The auth service runs on port 8080", "auth-service port: 8080",
         "the auth service listens on 8080", "The `auth_service` port is 8080",
         "The auth service is running on port 9000"],
        ["the cache TTL is 600", "set the cache ttl to 900", "CACHE_TTL=300",
         "The cache TTL was increased to 1200"],
        ["LOG_LEVEL: warn", "the log level changed from debug to info", "log-level = error"],
        ["bumped requests to 2.31.0", "We're on requests 2.32", "requests==2.30.0"],
        ["The API timeout is now 45 seconds", "API_TIMEOUT=30", "set the API timeout to 60s"],
    ],
)
def test_restatements_share_a_key(group: list[str]) -> None:
    keys = set()
    for s in group:
        got = triples(s)
        assert len(got) == 1, (s, got)
        keys.add(got[0][:2])
    assert len(keys) == 1, keys


PARAPHRASES = [
    ["The signature of `parse_session` is `parse_session(session_id, cache)`.",
     "`parse_session` is declared as `def parse_session(session_id, cache)`."],
    ["The upload parser function is called `read_upload`.",
     "The upload parser is implemented by `read_upload`."],
    ["Set BILLING_POOL_SIZE to 20.", "BILLING_POOL_SIZE=20", "BILLING_POOL_SIZE is set to 20."],
    ["Set AUTH_MAX_RETRIES to 5.", "AUTH_MAX_RETRIES=5", "AUTH_MAX_RETRIES is set to 5."],
    ["Bumped sentry-sdk to 1.40.0.", "We pin sentry-sdk to version 1.40.0.",
     "The project uses sentry-sdk 1.40.0.", "sentry-sdk is pinned at 1.40.0.",
     "sentry-sdk==1.40.0"],
    ["The schedule search endpoint takes the page size in the `max_results` parameter.",
     "The page size parameter of the schedule search endpoint is `max_results`."],
    ["The feature-flag API authenticates clients with HMAC signatures.",
     "Clients of the feature-flag API authenticate with HMAC signatures.",
     "The authentication scheme of the feature-flag API is HMAC signatures."],
    ["The coupon export endpoint accepts at most 600 requests per minute.",
     "The rate limit of the coupon export endpoint is 600 requests per minute."],
    ["The feature-flag service runs on port 8080.",
     "The feature-flag service listens on port 8080.", "feature_flag service port: 8080",
     "The port of the feature-flag service is 8080."],
    ["The feature-flag service timeout is 30 seconds.",
     "The request timeout of the feature-flag service is 30 seconds.",
     "The feature-flag service's timeout is 30s."],
    ["The feature-flag service log level is DEBUG.",
     "The feature-flag service logs at level DEBUG."],
    ["The user listing endpoint is `/api/v1/users`.",
     "The user listing endpoint is served at `/api/v1/users`."],
    ["`fetch_user` is defined in `core/utils/users.py`.",
     "The function `fetch_user` lives in `core/utils/users.py`."],
    ["The billing service is written in Go.", "We wrote the billing service in Go."],
    ["The platform team maintains the billing service.",
     "The billing service is owned by the platform team.",
     "The owner of the billing service is the platform team."],
]


@pytest.mark.parametrize("group", PARAPHRASES)
def test_paraphrases_give_the_same_triple(group: list[str]) -> None:
    got = {tuple(triples(s)) for s in group}
    assert len(got) == 1, got
    assert len(next(iter(got))) == 1
    for s in group:
        assert all(e.confidence >= 0.6 for e in extract(s, AT)), s


def test_near_duplicate_keys_stay_distinct() -> None:
    a = triples("the auth service port is 8080")
    b = triples("the billing service port is 8080")
    assert a[0][:2] != b[0][:2]
    assert triples("the auth service timeout is 5s")[0][:2] != a[0][:2]


# --- fields -------------------------------------------------------------------------

def test_display_forms_keep_case_and_drop_decoration() -> None:
    e = one("The `Auth-Service` port is `8080`.")
    assert (e.subject, e.relation, e.object) == ("Auth-Service", "port", "8080")
    e = one("The API base URL moved to 'https://api.example.com/v3'.")
    assert e.object == "https://api.example.com/v3"
    assert e.subject == "API"


def test_extraction_fields() -> None:
    s = "set MAX_RETRIES to 5"
    e = one(s)
    assert e.sentence == s
    assert e.subject == "MAX_RETRIES" and e.relation == "value" and e.object == "5"
    assert e.method == "rule:set_to"
    assert 0.8 <= e.confidence <= 1.0
    assert e.removal is False and e.effective_from is None


@pytest.mark.parametrize(("sentence", "_"), ALL)
def test_confidence_in_range_and_method_named(sentence, _) -> None:
    for e in extract(sentence, AT):
        assert 0.0 <= e.confidence <= 1.0
        assert e.method.startswith("rule:")
        assert e.sentence == sentence


@pytest.mark.parametrize(
    "sentence",
    ["set MAX_RETRIES to 5", "changed the batch size from 32 to 64", "`DATABASE_URL=postgres://x`",
     "The auth service runs on port 8080", "bumped requests to 2.31.0", "pandas==2.2.1",
     "renamed UserService to AccountService", "Alice owns the billing service",
     "The worker is deployed to us-east-1", "The API depends on Redis",
     "The API no longer depends on Redis", "we're on Django 5.1 now"],
)
def test_explicit_patterns_are_confident(sentence: str) -> None:
    got = extract(sentence, AT)
    assert got and all(e.confidence >= 0.8 for e in got)


@pytest.mark.parametrize(
    "sentence",
    ["The staging URL is https://staging.example.com", "The cache TTL is 600",
     "the log level is warn", "the region is us-east-1", "MAIN_BRANCH is trunk"],
)
def test_copula_with_value_like_object(sentence: str) -> None:
    e = one(sentence)
    assert 0.7 <= e.confidence <= 0.85


@pytest.mark.parametrize(
    "sentence", ["The database is Postgres", "the main language is Go", "Our CI is Jenkins"]
)
def test_copula_with_plain_word_is_low_confidence(sentence: str) -> None:
    e = one(sentence)
    assert e.confidence == 0.5


@pytest.mark.parametrize(
    "sentence", ["The API does not depend on Redis", "The port is not 8080",
                 "The frontend doesn't use Tailwind"]
)
def test_bare_negation_is_a_low_confidence_removal(sentence: str) -> None:
    e = one(sentence)
    assert e.removal and e.confidence < 0.6


def test_no_longer_is_a_confident_removal() -> None:
    assert one("The API no longer depends on Redis").confidence >= 0.8


# --- negatives ----------------------------------------------------------------------

NEGATIVES = [
    "I think the port is 8080",
    "maybe we should use Redis",
    "Should we bump requests to 2.31.0",
    "should we bump requests to 2.31.0?",
    "What port does the auth service run on?",
    "please fix the bug",
    "Please set the timeout to 30",
    "thanks",
    "Thanks, that works!",
    "we talked about the port",
    "We discussed changing the timeout to 30",
    "if the port is 8080 we are fine",
    "The port might be 8080",
    "It runs on port 8080",
    "This is great",
    "The build is broken",
    "The problem is that the cache is stale and the workers keep restarting",
    "We fixed a bug in the parser yesterday",
    "Let's move the frontend to Vercel",
    "Can you check the logs",
    "We will deploy the frontend to Vercel",
    "hello",
    "",
    "   ",
]


@pytest.mark.parametrize("sentence", NEGATIVES)
def test_non_factual_sentences_yield_nothing(sentence: str) -> None:
    assert extract(sentence, AT) == []


# --- effective dates ----------------------------------------------------------------

DATE_CASES = [
    ("from 1 March the limit is 500", datetime(2026, 3, 1, tzinfo=UTC),
     ("limit", "value", "500")),
    ("From 1 March 2027, the rate limit is 500", datetime(2027, 3, 1, tzinfo=UTC),
     ("rate limit", "value", "500")),
    ("starting 2026-03-01 the API timeout is 30s", datetime(2026, 3, 1, tzinfo=UTC),
     ("api", "timeout", "30s")),
    ("as of March 3rd, the worker is deployed to eu-west-1",
     datetime(2026, 3, 3, tzinfo=UTC), ("worker", "deployed_to", "eu-west-1")),
    ("effective 2026-05-01 the rate limit is 100", datetime(2026, 5, 1, tzinfo=UTC),
     ("rate limit", "value", "100")),
    ("The rate limit is 100 effective May 1", datetime(2026, 5, 1, tzinfo=UTC),
     ("rate limit", "value", "100")),
    ("Starting tomorrow the API depends on Kafka", datetime(2026, 6, 16, tzinfo=UTC),
     ("api", "depends_on", "kafka")),
    ("From next Monday, the auth service runs on port 9000",
     datetime(2026, 6, 22, tzinfo=UTC), ("auth service", "port", "9000")),
    ("As of today the log level is info", datetime(2026, 6, 15, tzinfo=UTC),
     ("log level", "value", "info")),
    ("From 1 July the limit will be 800", datetime(2026, 7, 1, tzinfo=UTC),
     ("limit", "value", "800")),
    ("the timeout is 30s from next month", datetime(2026, 7, 1, tzinfo=UTC),
     ("timeout", "value", "30s")),
]


@pytest.mark.parametrize(("sentence", "expected", "triple"), DATE_CASES)
def test_effective_dates(sentence: str, expected: datetime, triple) -> None:
    got = extract(sentence, AT)
    assert [(normalize_entity(e.subject), e.relation, normalize_object(e.object)) for e in got] == [
        triple]
    assert got[0].effective_from == expected
    assert got[0].effective_from.tzinfo is not None


def test_weekday_dates_follow_the_trigger() -> None:
    # AT is Monday 2026-06-15
    assert one("Since Wednesday the API depends on Kafka").effective_from == datetime(
        2026, 6, 10, tzinfo=UTC)
    assert one("Starting Friday the API depends on Kafka").effective_from == datetime(
        2026, 6, 19, tzinfo=UTC)
    assert one("From next Monday the API depends on Kafka").effective_from == datetime(
        2026, 6, 22, tzinfo=UTC)
    assert all(e.effective_from is None for e in extract("In 2 weeks the limit is 900", AT))
    assert one("Starting in 2 weeks the limit is 900").effective_from == datetime(
        2026, 6, 29, tzinfo=UTC)


def test_on_a_bare_weekday_is_not_an_effective_date() -> None:
    e = one("On Monday we moved the API to us-east-2")
    assert e.effective_from is None
    assert triples("On Monday we moved the API to us-east-2") == [
        ("api", "deployed_to", "us-east-2")]


def test_effective_date_uses_the_timezone_and_year_of_at() -> None:
    tz = timezone(timedelta(hours=2))
    at = datetime(2031, 1, 10, 9, 0, tzinfo=tz)
    e = one("From 1 March the limit is 500", at)
    assert e.effective_from == datetime(2031, 3, 1, tzinfo=tz)


def test_effective_date_without_at_uses_the_current_utc_year() -> None:
    e = one("from 1 March the limit is 500")
    assert e.effective_from == datetime(datetime.now(UTC).year, 3, 1, tzinfo=UTC)


def test_from_a_to_b_is_not_a_date() -> None:
    e = one("changed the rollout window from March to April")
    assert e.effective_from is None and normalize_object(e.object) == "april"


def test_no_date_means_no_effective_from() -> None:
    assert one("The API depends on Redis").effective_from is None


# --- normalization ------------------------------------------------------------------

@pytest.mark.parametrize(
    "variant",
    ["Auth-Service", "auth_service", "the auth service", "`auth service`", "Auth Service",
     "AUTH_SERVICE", "our auth-service", '"auth service"', "(auth service)", "auth service."],
)
def test_normalize_entity_variants(variant: str) -> None:
    assert normalize_entity(variant) == "auth service"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("MAX_RETRIES", "max retries"), ("utils.helpers", "utils.helpers"), ("Fly.io", "fly.io"),
     ("Python 3.12", "python 3.12"), ("  The   API  ", "api"), ("the API's", "api")],
)
def test_normalize_entity_keeps_dots(raw: str, expected: str) -> None:
    assert normalize_entity(raw) == expected


@pytest.mark.parametrize(
    ("raw", "expected"),
    [("listens on", "port"), ("runs on port", "port"), ("port number", "port"), ("Port", "port"),
     ("is at", "url"), ("url", "url"), ("endpoint", "url"), ("base url", "url"),
     ("version", "version"), ("is on", "version"), ("pinned to", "version"),
     ("owned by", "owner"), ("owner", "owner"), ("maintained by", "owner"),
     ("deployed to", "deployed_to"), ("runs in", "deployed_to"), ("hosted on", "deployed_to"),
     ("depends on", "depends_on"), ("requires", "depends_on"), ("depends-on", "depends_on"),
     ("uses", "uses"), ("supports", "supports"), ("renamed to", "name"), ("now called", "name"),
     ("is", "value"), ("set to", "value"), ("=", "value"), ("timeout", "timeout"),
     ("tech lead", "lead"), ("lead", "lead"), ("on-call", "on_call"),
     ("Rate Limit", "rate_limit"), ("some new relation", "some_new_relation")],
)
def test_normalize_relation(raw: str, expected: str) -> None:
    assert normalize_relation(raw) == expected


@pytest.mark.parametrize(
    ("a", "b"),
    [("v1.2.3", "1.2.3"), ("`8080`", "8080"), ("'Postgres'.", "postgres"),
     ("45 seconds", "45s"), ("45 sec", "45s"), ("  us-east-1 ", "us-east-1"),
     ("https://api.example.com/v3/", "https://api.example.com/v3")],
)
def test_normalize_object_equivalences(a: str, b: str) -> None:
    assert normalize_object(a) == normalize_object(b)


@pytest.mark.parametrize(
    ("a", "b"),
    [("1.2.3", "1.2.4"), ("45 seconds", "45 minutes"), ("/v2/invoices", "/v3/invoices"),
     ("us-east-1", "us-east-2"), ("python 3.10", "python 3.1")],
)
def test_normalize_object_keeps_different_values_apart(a: str, b: str) -> None:
    assert normalize_object(a) != normalize_object(b)


def test_vocabulary_cardinality() -> None:
    for rel in ("depends_on", "uses", "supports", "integrates_with", "maintainer", "contains",
                "imports", "calls", "exposes"):
        assert DEFAULT_VOCABULARY[rel] is Cardinality.MULTI
    for rel in ("port", "url", "host", "version", "value", "timeout", "owner", "name",
                "deployed_to", "region", "database", "lead", "language", "framework", "path",
                "default_branch", "location", "on_call", "ttl", "rate_limit"):
        assert DEFAULT_VOCABULARY[rel] is Cardinality.SINGLE


def test_every_extracted_relation_is_canonical() -> None:
    for sentence, _ in ALL + REMOVALS:
        for e in extract(sentence, AT):
            assert normalize_relation(e.relation) == e.relation


# --- hashing ------------------------------------------------------------------------

@pytest.mark.parametrize(
    ("a", "b"),
    [("The auth service runs on port 8080.", "the auth service runs on port 8080"),
     ("The  auth service\truns on port 8080!", "The auth service runs on port 8080"),
     ('"The API depends on Redis."', "the api depends on redis"),
     ("set MAX_RETRIES to 5;", "SET max_retries TO 5")],
)
def test_restatement_hashes_equal(a: str, b: str) -> None:
    assert normalize_text(a) == normalize_text(b)
    assert text_hash(a) == text_hash(b)


@pytest.mark.parametrize(
    ("a", "b"),
    [("The auth service runs on port 8080", "The auth service runs on port 8081"),
     ("bumped requests to 2.31.0", "bumped requests to 2.31.1"),
     ("The API depends on Redis", "The API no longer depends on Redis")],
)
def test_different_values_hash_differently(a: str, b: str) -> None:
    assert text_hash(a) != text_hash(b)


def test_text_hash_is_sha1_hex() -> None:
    h = text_hash("x")
    assert len(h) == 40 and int(h, 16) >= 0


# --- sentence splitting ---------------------------------------------------------------

def test_split_basic_and_questions_dropped() -> None:
    text = "The API runs on port 8080. Is that right? We bumped requests to 2.31.0! Thanks."
    assert split_sentences(text) == [
        "The API runs on port 8080.", "We bumped requests to 2.31.0!", "Thanks."]


@pytest.mark.parametrize(
    "sentence",
    ["We upgraded to version 1.2.3 of the SDK.", "The settings live in config.yaml now.",
     "The docs are at https://docs.example.com/a.b/c.html today.",
     "Use a cache, e.g. Redis or Memcached, for sessions.",
     "The host is db.internal.example.com and it is fine.",
     "Values vs. defaults i.e. the overrides win."],
)
def test_split_does_not_break_inside_tokens(sentence: str) -> None:
    assert split_sentences(sentence) == [sentence]


def test_split_drops_fenced_code() -> None:
    text = "Before the code.\n```python\nx = 1. y = 2\nprint(x)\n```\nAfter the code."
    assert split_sentences(text) == ["Before the code.", "After the code."]


def test_split_drops_unterminated_fence() -> None:
    assert split_sentences("Intro text here.\n```\nA = 1\nB = 2") == ["Intro text here."]


def test_split_bullets_and_key_value_lines() -> None:
    text = (
        "Config notes:\n"
        "- The API depends on Redis\n"
        "* payments listens on 9090\n"
        "1. bumped requests to 2.31.0\n"
        "2) The worker is deployed to us-east-1\n"
        "LOG_LEVEL: warn\n"
        "DATABASE_URL=postgres://db:5432/app\n"
        "retry limit = 3\n"
    )
    assert split_sentences(text) == [
        "Config notes:", "The API depends on Redis", "payments listens on 9090",
        "bumped requests to 2.31.0", "The worker is deployed to us-east-1", "LOG_LEVEL: warn",
        "DATABASE_URL=postgres://db:5432/app", "retry limit = 3"]


def test_split_drops_short_fragments_and_blank_lines() -> None:
    assert split_sentences("ok\n\n  \n- a\nThe port is 8080.\n.") == ["The port is 8080."]
    assert split_sentences("") == []


def test_split_keeps_inline_code_with_dots_together() -> None:
    s = "Call `cfg.load(). then` before starting."
    assert split_sentences(s) == [s]


def test_split_semicolons_and_lowercase_chat() -> None:
    assert split_sentences("the port is 8080; the host is db. the timeout is 5s") == [
        "the port is 8080;", "the host is db.", "the timeout is 5s"]


def test_split_joins_hard_wrapped_prose() -> None:
    text = ("The payments service was moved to the new cluster last week and\n"
            "now runs in eu-west-1.\nThe API depends on Redis.")
    assert split_sentences(text) == [
        "The payments service was moved to the new cluster last week and now runs in eu-west-1.",
        "The API depends on Redis."]


def test_split_then_extract_a_whole_turn() -> None:
    turn = ("Quick update: we bumped requests to 2.31.0. The auth service now listens on 9090. "
            "Can you update the docs?\n```\nPORT=1\n```\n- we stopped using Tailwind")
    got = [t for s in split_sentences(turn) for t in triples(s)]
    assert got == [("requests", "version", "2.31.0"), ("auth service", "port", "9090"),
                   ("project", "uses", "tailwind")]


def test_clause_fallback_splits_two_statements() -> None:
    assert triples("The port is 8080 and the host is db.internal") == [
        ("port", "value", "8080"), ("host", "value", "db.internal")]


# --- labels, qualifiers, corrections, replacements --------------------------------------

MORE = [
    ("Decision: we use Postgres for the ledger", [("project", "uses", "postgres")]),
    ("Summary: The auth service runs on port 8080", [("auth service", "port", "8080")]),
    ("Note: the API depends on Redis", [("api", "depends_on", "redis")]),
    ("WARNING: the port is 8080", [("port", "value", "8080")]),
    ("In production, the API port is 443", [("production api", "port", "443")]),
    ("The API port is 8443 in staging", [("staging api", "port", "8443")]),
    ("Correction: the timeout is 60s, not 30s", [("timeout", "value", "60s")]),
    ("The timeout is 60s (was 30s)", [("timeout", "value", "60s")]),
    ("The max connections setting is 100", [("max connections", "value", "100")]),
    ("The feature flag new_checkout is enabled", [("new checkout", "value", "enabled")]),
    ("The default page size is 50", [("page size", "value", "50")]),
    ("The auth service moved to port 9090", [("auth service", "port", "9090")]),
    ("We moved the auth service to port 9092", [("auth service", "port", "9092")]),
    ("auth service: port 8080", [("auth service", "port", "8080")]),
    ("The GraphQL endpoint lives at /graphql", [("graphql", "url", "/graphql")]),
    ("The Redis instance is at redis.internal:6379",
     [("redis instance", "host", "redis.internal"), ("redis instance", "port", "6379")]),
    ("We are using Node 20 LTS", [("node", "version", "20")]),
    ("The backend runs Python 3.12", [("python", "version", "3.12")]),
    ("Redis 7 is used for caching", [("redis", "version", "7")]),
    ("The team Payments owns billing", [("billing", "owner", "team payments")]),
    ("Erin is the new owner of the auth service", [("auth service", "owner", "erin")]),
    ("Frank took over ownership of the SDK", [("sdk", "owner", "frank")]),
    ("We moved the frontend to Vercel", [("frontend", "deployed_to", "vercel")]),
    ("We're deploying to Fly.io now", [("project", "deployed_to", "fly.io")]),
    ("The payments DB is in eu-west-1", [("payments db", "deployed_to", "eu-west-1")]),
    ("The config lives in config/settings.yaml", [("config", "path", "config/settings.yaml")]),
    ("The frontend talks to the API over HTTPS", [("frontend", "connects_to", "api")]),
    ("The timeout is 30 seconds, the retries are 3",
     [("timeout", "value", "30s"), ("retries", "value", "3")]),
    ("The rate limit goes up to 2000 on 2026-07-01", [("rate limit", "value", "2000")]),
    ("The Slack channel for incidents is #incidents",
     [("incidents", "slack_channel", "#incidents")]),
]


CODE_AND_OPS = [
    ("The signature of `parse_session` is `parse_session(session_id, cache)`.",
     [("parse session", "signature", "parse_session(session_id, cache)")]),
    ("`fetch_upload` is defined in `core/utils/uploads.py`.",
     [("fetch upload", "path", "core/utils/uploads.py")]),
    ("The function `fetch_upload` lives in `core/utils/uploads.py`.",
     [("fetch upload", "path", "core/utils/uploads.py")]),
    ("The request timeout of the upload service is 60 seconds.",
     [("upload service", "timeout", "60s")]),
    ("The upload service timeout is 25 seconds.", [("upload service", "timeout", "25s")]),
    ("The booking service logs at level INFO.", [("booking service", "log_level", "info")]),
    ("The booking service log level is TRACE.", [("booking service", "log_level", "trace")]),
    ("We pin next to version 0.15.5.", [("next", "version", "0.15.5")]),
    ("next is pinned at 0.15.5.", [("next", "version", "0.15.5")]),
    ("The message listing endpoint is served at `/internal/messages`.",
     [("message listing", "url", "/internal/messages")]),
    ("The message listing endpoint is `/v2/messages`.",
     [("message listing", "url", "/v2/messages")]),
    ("The page size parameter of the schedule search endpoint is `max_results`.",
     [("schedule search endpoint", "page_size", "max_results")]),
    ("The auth API authenticates clients with HMAC signatures.",
     [("auth api", "auth", "hmac signatures")]),
    ("Clients of the auth API authenticate with session cookies.",
     [("auth api", "auth", "session cookies")]),
    ("The auth service uses OAuth2 for authentication", [("auth service", "auth", "oauth2")]),
    ("The refund export endpoint accepts at most 600 requests per minute.",
     [("refund export endpoint", "rate_limit", "600 requests per minute")]),
    ("The rate limit of the refund export endpoint is 30 requests per minute.",
     [("refund export endpoint", "rate_limit", "30 requests per minute")]),
    ("We wrote the billing service in Go.", [("billing service", "language", "go")]),
    ("The API was rewritten in Rust", [("api", "language", "rust")]),
    ("The platform team maintains the billing service.",
     [("billing service", "owner", "platform team")]),
    ("The billing service is owned by the platform team.",
     [("billing service", "owner", "platform team")]),
    ("Alerts for the billing service go to the #platform-alerts channel.",
     [("billing service", "alerts_channel", "#platform-alerts")]),
    ("The staging billing deployment runs 2 replicas.",
     [("staging billing deployment", "replicas", "2")]),
    ("The staging billing deployment replica count is 3.",
     [("staging billing deployment", "replicas", "3")]),
    ("The staging billing container memory limit is 256Mi.",
     [("staging billing container", "memory_limit", "256mi")]),
    ("The staging billing bucket is in region eu-west-1.",
     [("staging billing bucket", "region", "eu-west-1")]),
    ("The production billing bucket is in the us-east-1 region.",
     [("production billing bucket", "region", "us-east-1")]),
]


SHORTHAND = [
    ("We doubled the pool size to 40", [("pool size", "value", "40")]),
    ("We're using a timeout of 60s", [("timeout", "value", "60s")]),
    ("The API uses a timeout of 30s", [("api", "timeout", "30s")]),
    ("auth runs on :8080", [("auth", "port", "8080")]),
    ("Port for auth service: 8080", [("auth service", "port", "8080")]),
    ("Using Python 3.12 now", [("python", "version", "3.12")]),
    ("Django: 5.1", [("django", "version", "5.1")]),
    ("ratio: 0.5", [("ratio", "value", "0.5")]),
    ("get_user → fetch_user", [("get user", "name", "fetch_user")]),
    ("renamed: get_user -> fetch_user", [("get user", "name", "fetch_user")]),
    ("get_user is now fetch_user", [("get user", "name", "fetch_user")]),
    ("`getUser` is now `fetchUser`", [("getuser", "name", "fetchuser")]),
    ("Alice is responsible for billing", [("billing", "owner", "alice")]),
    ("Alice is the DRI for billing", [("billing", "owner", "alice")]),
    ("The search team lead is Bob", [("search", "lead", "bob")]),
    ("The API uses Redis for caching and Postgres for storage",
     [("api", "uses", "redis"), ("api", "uses", "postgres")]),
    ("Dependencies: Redis, Postgres",
     [("project", "depends_on", "redis"), ("project", "depends_on", "postgres")]),
    ("Deployment target for the worker is ECS", [("worker", "deployed_to", "ecs")]),
    ("The worker lives in the us-east-1 region", [("worker", "deployed_to", "us-east-1")]),
    ("Changed the default cache TTL from 300 to 600 seconds.", [("cache", "ttl", "600s")]),
    ("Renamed `UserRepo` to `UserRepository` for consistency.",
     [("userrepo", "name", "userrepository")]),
    ("Added `tenacity` as a dependency for retries.", [("project", "depends_on", "tenacity")]),
    ("The API now depends on tenacity 8.2.3.",
     [("tenacity", "version", "8.2.3"), ("api", "depends_on", "tenacity")]),
    ("django 4.2 -> 5.0", [("django", "version", "5.0")]),
    ("We set the timeout to 60s to avoid flaky tests", [("timeout", "value", "60s")]),
]

SHORTHAND_REMOVALS = [
    ("We're not using Redis anymore", [("project", "uses", "redis")]),
    ("Removed the Redis dependency", [("project", "depends_on", "redis")]),
    ("Dropped Python 3.8 support", [("project", "supports", "python 3.8")]),
    ("drop support for python 3.9", [("project", "supports", "python 3.9")]),
]


@pytest.mark.parametrize(("sentence", "expected"), SHORTHAND)
def test_shorthand_phrasings(sentence: str, expected) -> None:
    assert triples(sentence) == expected
    assert not any(e.removal for e in extract(sentence, AT))


@pytest.mark.parametrize(("sentence", "expected"), SHORTHAND_REMOVALS)
def test_shorthand_removals(sentence: str, expected) -> None:
    assert triples(sentence) == expected
    assert all(e.removal for e in extract(sentence, AT))


@pytest.mark.parametrize(("sentence", "expected"), CODE_AND_OPS)
def test_code_and_ops_phrasings(sentence: str, expected) -> None:
    assert triples(sentence) == expected


@pytest.mark.parametrize(("sentence", "expected"), MORE)
def test_more_phrasings(sentence: str, expected) -> None:
    assert triples(sentence) == expected
    assert not any(e.removal for e in extract(sentence, AT))


@pytest.mark.parametrize(
    ("sentence", "added", "removed"),
    [("The auth service now uses JWT instead of sessions", "jwt", "sessions"),
     ("We now use pnpm instead of npm", "pnpm", "npm"),
     ("We replaced Celery with RQ", "rq", "celery"),
     ("We switched from npm to pnpm", "pnpm", "npm")],
)
def test_replacements(sentence: str, added: str, removed: str) -> None:
    got = {(normalize_object(e.object), e.removal) for e in extract(sentence, AT)}
    assert got == {(added, False), (removed, True)}


@pytest.mark.parametrize(
    "sentence",
    ["Result: the build passed", "TODO: set the timeout to 30", "The service uses a lot of memory",
     "The fix is in PR #123", "Step 1 is to install deps", "The CI runs on every push",
     "The cron job runs every 5 minutes", "The tests run in parallel", "The API returns JSON",
     "The timeout, which is 30s, is too low", "Postgres is great", "The repo is public",
     "The meeting is at 3pm", "The plan is to migrate next quarter"],
)
def test_more_non_facts(sentence: str) -> None:
    assert extract(sentence, AT) == []


@pytest.mark.parametrize(
    "sentence",
    ["Bob said the port is 8080", "According to the docs, the port is 8080",
     "The logs show the port is 8080", "Alice mentioned that the port is 8080"],
)
def test_reported_facts_are_capped(sentence: str) -> None:
    e = one(sentence)
    assert triples(sentence) == [("port", "value", "8080")]
    assert e.confidence <= 0.7


@pytest.mark.parametrize(
    "sentence",
    ["The test expects 8080 but gets 9090", "My question is about the port",
     "The idea is to cache results", "Here's the updated config:", "Line 42 is wrong",
     "The API should return 404", "Users can set the timeout to 30", "We can't use Redis here",
     "I changed it to 30", "It was set to 30", "Great, that fixed it.",
     "The endpoint returns a 404 when the user is missing", "The build takes 5 minutes"],
)
def test_chat_noise_gives_nothing(sentence: str) -> None:
    assert extract(sentence, AT) == []


def test_naive_at_is_taken_as_utc() -> None:
    e = one("from 1 March the limit is 500", datetime(2030, 5, 1, 12, 0))
    assert e.effective_from == datetime(2030, 3, 1, tzinfo=UTC)


def test_split_strips_task_checkboxes() -> None:
    assert split_sentences("- [ ] write the docs\n- [x] The API depends on Redis") == [
        "write the docs", "The API depends on Redis"]


def test_extract_never_raises_on_arbitrary_text() -> None:
    hypothesis = pytest.importorskip("hypothesis")
    st = hypothesis.strategies
    words = st.sampled_from(
        ["the", "port", "is", "to", "from", "no longer", "set", "depends on", "uses", "8080",
         "v1.2", "`x`", "=", ":", ",", "and", "not", "API", "renamed", "owned by", "in", "on",
         "1 March", "starting", "tomorrow", "(", ")", "'", '"', "?", ".", "-", "s", "deployed"])

    @hypothesis.settings(max_examples=300, deadline=None, database=None, derandomize=True)
    @hypothesis.given(st.lists(words, max_size=12).map(" ".join) | st.text(max_size=80))
    def check(text: str) -> None:
        for s in [*split_sentences(text), text]:
            for e in extract(s, AT):
                assert e.subject and e.relation and e.object
                assert 0.0 <= e.confidence <= 1.0

    check()


# --- docs/PHRASINGS.md stays accurate --------------------------------------------------

def _doc_rows() -> list[list[str]]:
    from pathlib import Path

    doc = Path(__file__).resolve().parents[2] / "docs" / "PHRASINGS.md"
    text = doc.read_text(encoding="utf-8").split("## Examples", 1)[1]
    rows = []
    for line in text.splitlines():
        if not line.startswith("| ") or line.startswith(("| Sentence", "|---")):
            continue
        cells = [c.strip().replace("\\|", "|") for c in line.strip("|").split(" | ")]
        rows.append(cells)
    return rows


def test_phrasings_doc_is_accurate() -> None:
    rows = _doc_rows()
    assert len(rows) > 150
    for cells in rows:
        sentence, shown = cells[0], cells[1]
        got = extract(sentence, AT)
        rendered = "<br>".join(
            f"({e.subject}, {e.relation}, {e.object})" + (" removal" if e.removal else "")
            for e in got)
        assert rendered == shown, sentence
        if len(cells) == 4:
            assert cells[2] == ", ".join(f"{e.confidence:g}" for e in got), sentence
            assert cells[3] == ", ".join(dict.fromkeys(e.method for e in got)), sentence
        else:
            assert cells[2] == got[0].effective_from.date().isoformat(), sentence


def test_word_salad_never_raises() -> None:
    import random

    words = ["the", "port", "is", "to", "from", "no longer", "set", "depends on", "uses", "8080",
             "v1.2", "`x`", "=", ":", ",", "and", "not", "API", "renamed", "owned by", "in",
             "on", "1 March", "starting", "tomorrow", "(", ")", "'", '"', "?", ".", "-", "we",
             "instead of", "==", "->", "port 80", "as of", "2026-13-45", "31 February", "but",
             "anymore", "doesn't", "isn't", "In production,", "Note:", "`", "- ", "1. ", "it",
             "https://x.y/z", "/path", "x.y", "_", "replaced", "with", "stopped using", "for",
             "dropped support for", "removed", "from the stack", "is at", "lives at", "runs in",
             "a", "of", "said", "since Monday", "dependency", "support", "→", "is now"]
    rnd = random.Random(20260615)
    for _ in range(4000):
        text = " ".join(rnd.choice(words) for _ in range(rnd.randint(0, 14)))
        for s in [*split_sentences(text), text]:
            for e in extract(s, AT):
                assert e.subject.strip() and e.object.strip() and e.relation
                assert 0.0 <= e.confidence <= 1.0


def test_a_realistic_turn() -> None:
    turn = (
        "Hey! Quick context before you start: we moved the payments service to eu-west-1 last "
        "week,\nand it now listens on 9091 instead of 8080. The staging URL is "
        "https://staging.pay.example.com.\n\nThings that changed:\n- bumped stripe to 7.3.0\n"
        "- `charge()` was renamed to `create_charge()`\n"
        "- we dropped the dependency on requests (httpx only now)\n- PAYMENTS_TIMEOUT=45s\n\n"
        "```python\ndef create_charge(amount):\n    return stripe.Charge.create(amount=amount)\n"
        "```\n\nCan you update the tests to use the new port? Also I think we should bump the "
        "pool size, maybe to 30.\nThanks!"
    )
    got = [(normalize_entity(e.subject), e.relation, normalize_object(e.object), e.removal)
           for s in split_sentences(turn) for e in extract(s, AT)]
    assert got == [
        ("payments service", "deployed_to", "eu-west-1", False),
        ("payments service", "port", "9091", False),
        ("staging", "url", "https://staging.pay.example.com", False),
        ("stripe", "version", "7.3.0", False),
        ("charge", "name", "create_charge", False),
        ("project", "depends_on", "requests", True),
        ("payments", "timeout", "45s", False),
    ]


def test_very_long_sentences_are_prose() -> None:
    long = "The API depends on Redis " + "and on a great many other things " * 30
    assert len(long) > 600
    assert extract(long, AT) == []
