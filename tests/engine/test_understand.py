"""The understanding layer end to end on a real ledger: claims, context, change verbs,
value references, notes and what is not stored. Phrasings are the issue's own examples."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from memstrata_app.engine import Action, Status
from memstrata_app.engine.understand import read
from memstrata_app.engine.understand.context import find_context
from memstrata_app.engine.understand.discourse import classify

T0 = datetime(2026, 3, 2, 9, 0, tzinfo=UTC)


def day(n: int) -> datetime:
    return T0 + timedelta(days=n)


def active_texts(engine) -> set[str]:
    return {a.text for a in engine.list_assertions(limit=500)
            if a.status in (Status.ACTIVE, Status.PLAIN) and a.valid_to is None}


@pytest.mark.parametrize(("sentence", "kind"), [
    ("is statement_timeout on prod still 30s?", "question"),
    ("can you update the port to 9000 in the compose file", "request"),
    ("maybe we should bump the timeout to 60s", "hedge"),
    ("I'd say the limit should be 50", "hedge"),
    ("let's consider moving to Postgres 16", "hedge"),
    ("we'll move the cache to Redis next sprint", "plan"),
    ("starting next week we will use Redis", "plan"),
    ("Going forward, the timeout will be 30 seconds.", "statement"),
    ("From now on the deploy window will be 10:00 UTC", "statement"),
    ("Also, by the way, the API port is 8080.", "statement"),
    ("heads up, moved the API to 8080 because the old port clashed", "statement"),
])
def test_utterance_kinds(sentence, kind):
    assert classify(sentence).kind == kind


def test_a_decision_in_force_from_now_retires_the_old_value(engine):
    old = engine.ingest("The timeout is 20 seconds.", at=day(0)).actions[0]
    res = engine.ingest("Going forward, the timeout will be 30 seconds.", at=day(3))
    assert old.assertion_id in [r for a in res.actions for r in a.retired]
    assert "The timeout is 20 seconds." not in active_texts(engine)


def test_wrappers_and_reasons_are_not_part_of_the_value():
    (r,) = read(["heads up, moved the API to 8080 because the old port kept timing out"], T0)
    (e,) = r.extractions
    assert (e.subject, e.object) == ("API", "8080")
    (r,) = read(["fyi the cache TTL is 300s — the old one was too short"], T0)
    assert [e.object for e in r.extractions] == ["300s"]


def test_a_closing_marker_is_not_part_of_the_value():
    (r,) = read(["the sentry DSN lives in remote config btw"], T0)
    assert [e.object for e in r.extractions] == ["remote config"]
    (r,) = read(["the cache TTL is 300s now lol"], T0)
    assert [e.object for e in r.extractions] == ["300s"]
    # a hedge that closes the sentence stays with it: the speaker is not sure
    assert classify("the port is 8080 iirc").core.endswith("iirc")
    # the marker's letters inside a word are not a marker
    assert classify("staging serves lolcat images").core == "staging serves lolcat images"
    # at most three come off one sentence's end (each is one bounded match: linear time)
    assert classify("the port is 8080 btw, lol, fyi").core == "the port is 8080"
    assert classify("the port is 8080" + " btw" * 5).core == "the port is 8080 btw btw"


@pytest.mark.parametrize("same", [
    "The gateway timeout is the same.", "the gateway timeout is unchanged",
    "gateway timeout is still the same as before", "The gateway timeout is as before, thankfully.",
])
def test_a_slot_said_not_to_change_has_no_new_value(engine, same):
    old = engine.ingest("The gateway timeout is 45s.", at=day(0)).actions[0]
    res = engine.ingest(same, at=day(3))
    assert not [r for a in res.actions for r in a.retired]
    assert not read([same], T0)[0].extractions  # no key, no value: nothing to retire
    assert engine.get(old.assertion_id).valid_to is None


def test_two_facts_on_one_line_are_two_claims():
    (r,) = read(["the api is on 8080 and the worker on 8081"], T0)
    assert sorted(e.object for e in r.extractions) == ["8080", "8081"]
    assert len({e.subject for e in r.extractions}) == 2


def test_context_is_taken_out_of_the_key():
    ctx, text = find_context("prod Postgres is 14.10")
    assert ctx.key == "prod" and text == "Postgres is 14.10"
    ctx2, text2 = find_context("Postgres in production is 16.2")
    assert ctx2.key == "prod" and text2 == "Postgres is 16.2"


def test_a_value_in_one_context_never_retires_another(engine):
    engine.ingest("The API rate limit in staging is 30 requests/min.", at=day(0))
    engine.ingest("The API rate limit in prod is 120 requests/min.", at=day(0))
    res = engine.ingest("prod rate limit bumped from 120 to 300 requests/min", at=day(1))
    assert [a.action for a in res.actions] == [Action.SUPERSEDED]
    live = active_texts(engine)
    assert "The API rate limit in staging is 30 requests/min." in live
    assert "The API rate limit in prod is 120 requests/min." not in live


def test_a_service_is_context_for_its_library_version(engine):
    engine.ingest("The billing service uses requests 1.9.0.", at=day(0))
    res = engine.ingest("The auth service was upgraded to requests 2.0.0.", at=day(1))
    assert all(a.action is not Action.SUPERSEDED for a in res.actions)
    assert "The billing service uses requests 1.9.0." in active_texts(engine)


def test_change_with_old_value_finds_the_key_through_the_value(engine):
    first = engine.ingest("The orders API listens on 8080.", at=day(0)).actions[0]
    res = engine.ingest("we switched the orders API from 8080 to 9090", at=day(1))
    (act,) = res.actions
    assert act.action is Action.SUPERSEDED and act.retired == (first.assertion_id,)
    assert "value reference" in act.reason or "own key" in act.reason


def test_an_old_value_said_without_its_unit_finds_the_key(engine):
    # "from 14 to 30 days": the old value's unit is left to the new one's; the stored
    # "14 days" is normalized to "14d", which the value reference still finds
    first = engine.ingest("The appeal window for bans is 14 days.", at=day(0)).actions[0]
    other = engine.ingest("The retention of ban logs is 140 days.", at=day(0)).actions[0]
    res = engine.ingest("legal extended the ban appeal window from 14 to 30 days for EU "
                        "players and we decided to just do it globally", at=day(1))
    act = res.actions[0]
    assert act.action is Action.SUPERSEDED and act.retired == (first.assertion_id,)
    assert "value reference" in act.reason
    assert other.assertion_id not in act.retired
    assert "The retention of ban logs is 140 days." in active_texts(engine)


def test_value_reference_without_an_attribute_word(engine):
    engine.ingest("our python tests run under nose", at=day(0))
    res = engine.ingest("we went from nose to pytest last sprint", at=day(1))
    (act,) = res.actions
    assert act.action is Action.SUPERSEDED
    assert "our python tests run under nose" not in active_texts(engine)
    # the next change chains through the new value
    res2 = engine.ingest("replaced pytest with ward", at=day(2))
    assert res2.actions[0].retired == (act.assertion_id,)


def test_ambiguous_value_reference_goes_to_review(engine):
    engine.ingest("The auth service port is 8080.", at=day(0))
    engine.ingest("The billing service port is 8080.", at=day(0))
    (act,) = engine.ingest("8080 → 9000", at=day(1)).actions
    assert act.action is Action.QUARANTINED
    assert "which one is meant" in act.reason
    assert len(active_texts(engine)) == 2  # nothing retired


def test_rollback_opens_a_new_interval_with_the_earlier_value(engine):
    a = engine.ingest("The gunicorn worker count is 8.", at=day(0)).actions[0]
    b = engine.ingest("bumped the gunicorn worker count from 8 to 12", at=day(1)).actions[0]
    c = engine.ingest("gunicorn worker count is rolled back to 8", at=day(2)).actions[0]
    assert c.action is Action.SUPERSEDED and c.retired == (b.assertion_id,)
    assert engine.get(a.assertion_id).status is Status.SUPERSEDED
    hits = engine.retrieve("how many gunicorn workers", as_of=day(1) + timedelta(hours=1))
    assert any("12" in h.text for h in hits)


def test_ownership_phrasings_share_a_key(engine):
    engine.ingest("Priya owns billing.", at=day(0))
    res = engine.ingest("Billing is Maria's now", at=day(1))
    assert res.actions[0].action is Action.SUPERSEDED
    res = engine.ingest("Sam took over billing", at=day(2))
    assert res.actions[0].action is Action.SUPERSEDED


def test_questions_and_requests_are_reported_not_stored(engine):
    res = engine.ingest("The cache TTL is 300s. Is it still 300s? Please bump it to 900s.",
                        at=day(0))
    assert [a.action for a in res.actions] == [Action.NOVEL]
    assert [s.kind for s in res.skipped] == ["question", "request"]
    assert all(s.reason for s in res.skipped)


def test_an_acronym_leading_a_sentence_does_not_make_it_a_question(engine):
    res = engine.ingest("CAN status frame 0x181 gets sent every 10ms. WAS is down again. "
                        "Can jobs retry twice", at=day(0))
    assert [s.text for s in res.skipped] == ["Can jobs retry twice"]
    assert len(res.actions) == 2


def test_a_value_that_leads_its_sentence_is_not_another_things_version(engine):
    first = engine.ingest("python 3.11 only, 3.12 breaks the flash-attn wheel build",
                          at=day(0)).actions[0]
    (act,) = engine.ingest("flash-attn pinned to 2.5.8, newer ones want a different torch",
                           at=day(1)).actions
    assert act.retired == ()
    assert engine.get(first.assertion_id).status is Status.ACTIVE


def test_a_hedge_is_a_note_that_retires_nothing(engine):
    engine.ingest("The cache TTL is 300s.", at=day(0))
    (act,) = engine.ingest("maybe we should raise the cache TTL to 900s", at=day(1)).actions
    assert act.action is Action.PROSE and act.method == "note:hedge"
    assert "The cache TTL is 300s." in active_texts(engine)


def test_explain_writes_nothing(engine):
    engine.ingest("The orders API listens on 8080.", at=day(0))
    before = engine.stats()["by_status"]
    res = engine.explain("heads up: moved the orders API from 8080 to 9090", at=day(1))
    assert res.actions[0].action is Action.SUPERSEDED
    assert engine.stats()["by_status"] == before
    assert engine.retrieve("orders API port")[0].text == "The orders API listens on 8080."


def test_commit_subjects_are_statements_with_source_git(engine):
    engine.ingest("chore(deps): bump lodash from 4.17.20 to 4.17.21 (#123)", source="git",
                  at=day(0))
    (act,) = engine.ingest("Bump lodash from 4.17.21 to 4.17.22", source="git",
                           at=day(1)).actions
    assert act.action is Action.SUPERSEDED
    assert [a.object for a in engine.history("lodash", "version")] == ["4.17.21", "4.17.22"]


def test_approving_a_held_claim_keeps_its_context(engine):
    engine.ingest("The API rate limit in prod is 120 requests/min.", at=day(0))
    engine.quarantine_threshold = 0.99
    (held,) = engine.ingest("The API rate limit in prod is 300 requests/min.", at=day(1)).actions
    assert held.action is Action.QUARANTINED and held.context == "prod"
    engine.quarantine_threshold = 0.6
    act = engine.approve(held.assertion_id)
    assert act.action is Action.SUPERSEDED
    assert engine.get(held.assertion_id).context == "prod"
    assert [a.object for a in engine.history("API", "rate_limit", context="prod")] == [
        "120 requests/min", "300 requests/min"]


def test_a_revert_puts_back_the_value_before(engine):
    engine.ingest("⬆️ upgrade torch to 2.3.1", at=day(0))
    engine.ingest("⬆️ upgrade torch to 2.4.0 (#77)", at=day(1))
    (act,) = engine.ingest('Revert "⬆️ upgrade torch to 2.4.0" (#81)', at=day(2)).actions
    assert act.action is Action.SUPERSEDED and act.object == "2.3.1"


def test_a_dependabot_merge_names_the_new_version(engine):
    engine.ingest("chore(deps): bump django from 4.2.11 to 5.0.6 (#228)", at=day(0))
    (act,) = engine.ingest("Merge pull request #231 from acme/dependabot/pip/django-5.0.7",
                           at=day(1)).actions
    assert act.action is Action.SUPERSEDED and act.object == "5.0.7"


def test_a_broad_statement_asks_before_retiring_narrower_ones(engine):
    engine.ingest("The API rate limit in staging is 30 requests/min.", at=day(0))
    engine.ingest("The API rate limit in prod is 120 requests/min.", at=day(0))
    (held,) = engine.ingest("The API rate limit is 200 requests/min everywhere now.",
                            at=day(1)).actions
    assert held.action is Action.QUARANTINED and "would retire" in held.reason
    assert len(active_texts(engine)) == 2  # nothing retired before approval
    act = engine.approve(held.assertion_id)
    assert len(act.retired) == 2
    assert active_texts(engine) == {"The API rate limit is 200 requests/min everywhere now."}


def test_a_product_upgrade_continues_the_fact_that_names_the_product(engine):
    engine.ingest("prod db is mysql 5.7", at=day(0))
    (act,) = engine.ingest("upgraded prod mysql to 8.0.36", at=day(1)).actions
    assert act.action is Action.SUPERSEDED
    assert "prod db is mysql 5.7" not in active_texts(engine)


def test_a_product_name_identifies_its_slot_without_shared_words(engine):
    engine.ingest("the RTOS is FreeRTOS 10.5", at=day(0))
    (act,) = engine.ingest("migrated the firmware from FreeRTOS to Zephyr 3.6", at=day(1)).actions
    assert act.action is Action.SUPERSEDED
    assert "the RTOS is FreeRTOS 10.5" not in active_texts(engine)


def test_a_number_alone_never_picks_a_slot_without_shared_words(engine):
    engine.ingest("The billing worker pool size is 8.", at=day(0))
    res = engine.ingest("bumped the gateway timeout from 8 to 12", at=day(1))
    assert all(a.action is not Action.SUPERSEDED for a in res.actions)
    assert "The billing worker pool size is 8." in active_texts(engine)


def test_a_change_never_retires_a_sentence_keyed_on_another_value(engine):
    """The sentence keys the bucket; changing the format leaves the bucket true."""
    engine.ingest("the report job writes JSON to `gs://reports/weekly/`", at=day(0))
    engine.ingest("JSON out, Avro in, same bucket", at=day(1))
    assert "the report job writes JSON to `gs://reports/weekly/`" in active_texts(engine)


def test_an_abbreviated_subject_finds_its_slot(engine):
    engine.ingest("the auth service runs on port 8080 in staging", at=day(0))
    (act,) = engine.ingest("heads up: moved auth to 9090 in staging because of a clash",
                           at=day(1)).actions
    assert act.action is Action.SUPERSEDED
    assert "the auth service runs on port 8080 in staging" not in active_texts(engine)


@pytest.mark.parametrize("said", [
    "heads up, moved the API to 8080 because of the proxy",
    "bumped the API to 8080",
    "we moved the API to port 8080",
])
def test_a_change_of_the_api_retires_its_port(engine, said):
    """The verb before "the API" is not a component name ("moved API"), and "to port 8080"
    names the attribute with the value."""
    engine.ingest("The API port is 3000.", at=day(0))
    act = engine.ingest(said, at=day(1)).actions[0]
    assert (act.action, act.relation, act.object, act.context) == (
        Action.SUPERSEDED, "port", "8080", None)
    assert active_texts(engine) == {said}


@pytest.mark.parametrize(("first", "said"), [
    ("The payment events topic has 12 partitions.", "bumped payment events partitions to 24"),
    ("the search cluster has 3 nodes", "search cluster node count is 5 now"),
])
def test_a_count_named_after_its_thing_is_the_count_the_thing_has(engine, first, said):
    """"payment events partitions" keys the topic's partitions, not a value of its own
    ('payment events partitions · value' stayed beside the topic's 12)."""
    engine.ingest(first, at=day(0))
    act = engine.ingest(said, at=day(1)).actions[0]
    assert act.action is Action.SUPERSEDED and act.relation in ("partitions", "nodes")
    assert active_texts(engine) == {said}


def test_a_change_between_code_spans_of_several_words_names_its_old_value(engine):
    """A cron line is one value, spaces and all: the change names the old line's value and
    retires it (it was read as prose about 'nightly moved from … to …')."""
    engine.ingest("nightly full build cron is `0 3 * * *` UTC", at=day(0))
    said = "fyi nightly moved from `0 3 * * *` to `30 1 * * *` so finance has numbers first"
    act = engine.ingest(said, at=day(1)).actions[0]
    assert act.action is Action.SUPERSEDED and act.object == "30 1 * * *"
    assert active_texts(engine) == {said}


def test_a_version_is_not_the_port_it_resembles(engine):
    engine.ingest("The API port is 3000.", at=day(0))
    act = engine.ingest("bumped the API to version 2.1", at=day(1)).actions[0]
    assert (act.action, act.relation, act.object) == (Action.NOVEL, "version", "2.1")
    assert "The API port is 3000." in active_texts(engine)


@pytest.mark.parametrize(("sentence", "kind"), [
    # the wh-word opens a clause of a statement (the parse: an adverbial clause or the
    # clausal subject of the main verb, the main clause not inverted)
    ("What I did was fix the bug where the tag set grew to 300MB", "statement"),
    ("When the build fails, CI retries twice", "statement"),
    # the parse tags 'times' a noun, yet hangs the clause and its subject on it
    ("When the payment webhook times out, the worker retries 3 times.", "statement"),
    ("whenever the queue backs up we scale to 8 workers", "statement"),
    ("where we keep the logs is /var/log", "statement"),
    ("who owns billing alerts now is the payments team, not platform", "statement"),
    ("why ci is red: the `e2e-chrome` runner ran out of disk again", "statement"),
    # a heading, a colon, then a clause that tells (a user trial's note)
    ("How deploys work: GitHub Actions builds the image and Argo CD syncs it to the cluster.",
     "statement"),
    # questions typed without a question mark
    ("what do you think the timeout should be", "question"),
    ("which version do we use for the Dockerfile", "question"),
    ("how long do we keep logs", "question"),
    ("When it fails, does CI retry", "question"),
    ("when is the next deploy", "question"),
    ("how do i rerun just the failed jobs in the gh actions workflow", "question"),
    ('when you say "the old cluster" do you mean gke-1 or the on-prem one', "question"),
    ("what do you think: 30s or 60s", "question"),
    ("what's the plan: do we ship friday", "question"),
])
def test_a_wh_word_without_a_question_mark(sentence, kind):
    (reading,) = read([sentence], T0)
    assert reading.kind == kind, reading.reason


def test_a_statement_led_by_when_is_stored_and_keyed(engine):
    res = engine.ingest("when we deploy, the timeout is 30s", at=day(0))
    assert not res.skipped
    (act,) = res.actions
    assert act.action is Action.NOVEL
    res = engine.ingest("the timeout is 45s now", at=day(1))
    assert res.actions[0].retired == (act.assertion_id,)


def test_a_word_that_only_counts_or_points_is_no_subject(engine):
    # "every" read as a name gave "every · version = 5h", a key any schedule shares (here
    # only the word "backup", read as a context, kept the two apart)
    first = engine.ingest("the token refresh keeps running every 5h", at=day(0)).actions[0]
    second = engine.ingest("the backup job runs every 6h", at=day(1)).actions[0]
    assert second.retired == ()
    assert engine.get(first.assertion_id).status in (Status.PLAIN, Status.ACTIVE)
    assert first.subject != "every"  # keyed, if at all, by its clause's own frame
    (reading,) = read(["the worker is using some 300MB"], T0)
    assert all(e.subject.strip().lower() != "some" for e in reading.extractions)


def test_a_name_after_the_slots_phrase_is_not_its_subject(engine):
    # "…, separate from the API" names the API, but the port is the dashboard's
    dash = engine.ingest("The admin dashboard runs on port 3000, separate from the API.",
                         at=day(0)).actions[0]
    res = engine.ingest("The API now listens on port 8443.", at=day(1))
    assert dash.assertion_id not in res.actions[0].retired
    assert engine.get(dash.assertion_id).status is Status.ACTIVE
    # in its own phrase the subject still finds the slot: a change in other words
    old = engine.ingest("the orders api listens on 8080 in docker-compose", at=day(2))
    new = engine.ingest("orders api moved to 8085", at=day(3))
    assert new.actions[0].retired == (old.actions[0].assertion_id,)


@pytest.mark.parametrize(("line", "values"), [
    # a clause after the fact's own that concedes, gives a reason or names the value it is
    # not states no fact of its own
    ("Batch size is 64, although the docs recommend 128.", ["64"]),
    ("retries are 5 now, as opposed to 3", ["5"]),
    # a contrast after "whereas" is another fact, keyed by its own subject
    ("the cache TTL is 300 seconds, whereas the session TTL is 60 seconds",
     ["300 seconds", "60 seconds"]),
])
def test_a_concession_or_a_reason_after_a_comma_states_no_fact(line, values):
    (r,) = read([line], T0)
    assert [e.object for e in r.extractions] == values
    assert not any(e.subject.lower().startswith(("although", "whereas", "as opposed"))
                   for e in r.extractions)


def test_each_clause_of_a_schedule_list_keys_its_own_job():
    # a user trial's line: only the invoice job was keyed, under "the invoice job every runs"
    (r,) = read(["the refund job runs every 4h, the invoice job every 12h"], T0)
    assert [(e.subject, e.object) for e in r.extractions] == [
        ("the refund job runs every …", "4h"), ("the invoice job runs every …", "12h")]


def test_a_verb_of_going_is_no_subject_of_a_rollback():
    # blind2's lagerwerk: "go" was read as the subject, and an alias matched it to "all
    # services go to Quarkus … LTS", retiring the Quarkus decision
    (r,) = read(["We go back to 50, like before PLAT-1203."], T0)
    assert all(e.subject.lower() not in ("go", "we go") for e in r.extractions)
    (r2,) = read(["the api goes back to 8080"], T0)
    assert [(e.subject, e.object) for e in r2.extractions] == [("api", "8080")]


@pytest.mark.parametrize(("line", "value", "old"), [
    ("wait, no, the batch size is 96 not 128", "96", "128"),
    ("the auth svc now listens on 8443 instead of 8080", "8443", "8080"),
    ("each worker gets 6 GB, not 4.", "6 GB", "4"),
])
def test_a_denied_value_is_the_value_the_claim_replaced(line, value, old):
    (r,) = read([line], T0)
    (e,) = r.extractions
    assert (e.object, e.old_object) == (value, old)


@pytest.mark.parametrize(("first", "said"), [
    ("we hold the slot for 10 minutes (`SlotHold::TTL = 10.minutes` in app/models/slot_hold.rb)",
     "people hoard slots, changed it: `SlotHold::TTL = 7.minutes`, PR #412"),
    ("bumped puma: `WEB_CONCURRENCY=4` in deploy.yml env now",
     "the web boxes read `WEB_CONCURRENCY=6` from deploy.yml since the resize"),
    ("its just an env var DM_CACHE_TTL=600 on the deployment so easy to flip",
     "closures were stale for too long, DM_CACHE_TTL=300 on the deployment today"),
])
def test_a_config_line_pasted_in_a_sentence_is_keyed_by_its_own_name(engine, first, said):
    """The pasted line's key is the code's name in every voice: the new line retires the
    old one whatever prose is around either."""
    engine.ingest(first, at=day(0))
    act = engine.ingest(said, at=day(1)).actions[0]
    assert act.action is Action.SUPERSEDED and act.method.startswith("rule:")
    assert active_texts(engine) == {said}


@pytest.mark.parametrize(("sentence", "values"), [
    ("`timeout: 30s` for the api", {"30s"}),  # a key of one plain word and no config file
    ("dev kits build with MIX_TARGET=rpi4 and the production board with MIX_TARGET=ember_cm4",
     {"rpi4", "ember_cm4"}),  # one key, two values: one per target
    ("the old limit was `RATE_LIMIT=100`", {"100"}),  # what it was, not what it is
])
def test_a_pasted_line_that_names_no_one_current_thing_keys_nothing(sentence, values):
    [r] = read([sentence], T0)
    assert not [e for e in r.extractions if e.object in values]


def test_a_plain_word_key_is_keyed_under_the_config_file_the_sentence_names():
    [r] = read(["sidekiq.yml now says `:concurrency: 25`"], T0)
    assert [(e.subject, e.object) for e in r.extractions] == [("sidekiq.yml concurrency", "25")]


@pytest.mark.parametrize(("said", "core"), [
    ("the monday backlog hit 14k jobs so I bumped sidekiq concurrency to 25",
     "I bumped sidekiq concurrency to 25"),
    ("Hollis says 10 min is too long, so we changed the hold to 7 minutes",
     "we changed the hold to 7 minutes"),
    ("the API port is 9090 so we updated the docs", "the API port is 9090"),  # no change after
])
def test_an_action_taken_for_a_reason_said_first_is_the_fact(said, core):
    assert classify(said).core == core


def test_a_change_after_its_reason_retires_the_old_value(engine):
    engine.ingest("sidekiq concurrency is 10", at=day(0))
    said = "the monday backlog hit 14k jobs so I bumped sidekiq concurrency to 25"
    act = engine.ingest(said, at=day(1)).actions[0]
    assert act.action is Action.SUPERSEDED and act.object == "25"
    assert active_texts(engine) == {said}


def test_a_gradle_line_is_a_pasted_line_too():
    [r] = read(["android config from build.gradle: `minSdkVersion 23` `targetSdkVersion 35`"], T0)
    assert {(e.subject, e.object) for e in r.extractions} == {("minSdkVersion", "23"),
                                                                ("targetSdkVersion", "35")}


def test_a_one_word_key_is_keyed_under_the_file_named_last_before_it():
    [r] = read(["config/target.exs sets the firmware logger, and on host (config/host.exs)"
                " it's `level: :debug`"], T0)
    assert [(e.subject, e.object) for e in r.extractions if e.method.startswith("rule:")] == [
        ("host.exs level", ":debug")]


def test_going_to_a_value_now_is_a_change_not_a_plan():
    assert classify("minSdk bump: going to 26 now, `minSdkVersion 26` merged").kind == \
        "statement"
    assert classify("we're going to upgrade the SDK next week").kind == "plan"


def test_one_changed_line_of_several_pasted_keeps_the_others_current_without_it(engine):
    """A rule retires the one line's value; the sentence's other lines stay current in its
    words without that line, so the old value is never served as current again."""
    first = ("android config from android/app/build.gradle: `minSdkVersion 23`"
             " `targetSdkVersion 35` `compileSdkVersion 35`")
    engine.ingest(first, at=day(0))
    said = "minSdk bump: going to 26 now, `minSdkVersion 26` merged"
    act = engine.ingest(said, at=day(1)).actions[0]
    assert act.action is Action.SUPERSEDED and act.object == "26"
    rest = ("android config from android/app/build.gradle: … `targetSdkVersion 35`"
            " `compileSdkVersion 35`")
    assert active_texts(engine) == {said, rest}
    kept = {(a.subject, a.object) for a in engine.list_assertions(limit=50)
            if a.status is Status.ACTIVE and a.text == rest}
    assert kept == {("targetSdkVersion", "35"), ("compileSdkVersion", "35")}


def test_a_change_done_before_a_plan_in_its_sentence_is_a_statement():
    said = ("priya renamed `cust_feats_v3` to `customer_features`, the dag writes to the new"
            " one already, so anything still reading the old name will break")
    assert classify(said).kind == "statement"
    assert classify("we will have to rename the table, it will break things").kind == "plan"


def test_a_rename_keeps_the_other_parts_of_the_old_names_sentence_current(engine):
    """The rule retires the part naming the old name; the sentence's other facts stay
    current in its words without that part. The judge reads no part as an update (its
    thresholds out of reach): the statement's own words say which part held the old name."""
    from memstrata_app.engine.understand.judge import Thresholds

    engine.judge_thresholds = Thresholds(supersede=1.0, review=1.0, veto=1.0)
    engine.ingest("the feature table is `cust_feats_v3`, the model uses tenure_days and"
                  " plan_age", at=day(0))
    said = "priya renamed `cust_feats_v3` to `customer_features`"
    engine.ingest(said, at=day(1))
    current = active_texts(engine)
    assert said in current
    assert not [t for t in current if "cust_feats_v3" in t and t != said]
    assert {(a.subject, a.object) for a in engine.list_assertions(limit=50)
            if a.status is Status.ACTIVE and a.relation == "uses"} == {
        ("model", "tenure_days"), ("model", "plan_age")}


def test_a_config_line_after_so_is_the_fact_and_its_rollback_names_the_key(engine):
    """'…, because …, so SESSION_LIFETIME=240 now': the line is the fact (the reason was
    kept before); 'rollback on the SESSION_LIFETIME, back to 120' rolls that key back."""
    first = ("people lose the cart during the pix payment, because pix takes time in the bank"
             " app, so SESSION_LIFETIME=240 now in production")
    assert classify(first).core.startswith("SESSION_LIFETIME=240")
    engine.ingest(first, at=day(0))
    said = "rollback on the SESSION_LIFETIME, back to 120"
    act = engine.ingest(said, at=day(1)).actions[0]
    assert act.action is Action.SUPERSEDED and act.subject == "SESSION_LIFETIME"
    assert active_texts(engine) == {said}


def test_a_reason_that_pastes_a_line_itself_stays_the_fact():
    said = "we set TIMEOUT_MS=4000 in the env, so the retries settle to RETRY_MAX=3 now"
    assert classify(said).core.startswith("we set TIMEOUT_MS=4000")


@pytest.mark.parametrize(("first", "said", "value"), [
    ("bumped puma: `WEB_CONCURRENCY=4` in deploy.yml env now",
     "puma tweak: WEB_CONCURRENCY down to 3, the boxes were OOMing", "3"),
    ("the android gps interval is 15s", "android gps interval down to 10s, smoother dots", "10s"),
])
def test_a_thing_down_to_a_value_is_a_change(engine, first, said, value):
    engine.ingest(first, at=day(0))
    act = engine.ingest(said, at=day(1)).actions[0]
    assert act.action is Action.SUPERSEDED and act.object == value
    assert active_texts(engine) == {said}


@pytest.mark.parametrize("said", ["it comes down to 2 options", "we narrowed it down to 3"])
def test_down_to_after_a_verb_of_choosing_is_no_change(said):
    [r] = read([said], T0)
    assert not [e for e in r.extractions if e.method == "parse:change"]


def test_a_go_directive_is_keyed_under_go_mod(engine):
    engine.ingest("ingestd: repo `harvest/ingestd`, `go 1.22` in go.mod", at=day(0))
    said = "go.mod: `go 1.23`, image rebuilt"
    act = engine.ingest(said, at=day(1)).actions[0]
    assert act.action is Action.SUPERSEDED and act.object == "1.23"


def test_a_version_range_changed_by_an_arrow_retires_the_pasted_range(engine):
    """`dio: ^5.4.0` in pasted pubspec lines is keyed (the range kept whole); "dio bumped
    ^5.4.0 → ^5.7.0" names it as the old value and retires it."""
    engine.ingest("pubspec bits so u have them: `version: 2.3.0+41`, `dio: ^5.4.0`,"
                  " `provider: ^6.1.1`", at=day(0))
    said = "dio bumped ^5.4.0 → ^5.7.0, the old one had that connection leak"
    act = engine.ingest(said, at=day(1)).actions[0]
    assert act.action is Action.SUPERSEDED and act.object == "^5.7.0"
    assert not [t for t in active_texts(engine) if "dio: ^5.4.0" in t]


def test_a_greater_or_equal_sign_is_no_arrow():
    [r] = read(['package.json today: "engines": { "node": ">=18.18" }'], T0)
    assert not [e for e in r.extractions if e.method == "parse:arrow"]


def test_an_arrow_to_a_pasted_line_is_the_lines_own_change(engine):
    """'eks.tf -> `cluster_version = "1.29"`' read as an arrow named "eks.tf" changed into the
    whole line; the line keys its fact, and retires the old one."""
    engine.ingest('infra/terraform/eks.tf on eks-media-prod-use1: `cluster_version = "1.28"`.',
                  at=day(0))
    said = 'eks.tf -> `cluster_version = "1.29"`.'
    act = engine.ingest(said, at=day(1)).actions[0]
    assert act.action is Action.SUPERSEDED and act.object == "1.29"
    assert active_texts(engine) == {said}


def test_a_command_line_flag_is_a_pasted_line(engine):
    engine.ingest("the supervisor conf: command=php artisan queue:work redis"
                  " --queue=default,emails,invoices --timeout=90 --tries=3", at=day(0))
    said = "so --timeout=180 and retry_after in config/queue.php is 190 now"
    act = engine.ingest(said, at=day(1)).actions[0]
    assert act.action is Action.SUPERSEDED and act.object == "180"
    queues = [a.object for a in engine.list_assertions(limit=50)
              if a.status is Status.ACTIVE and a.subject == "--queue"]
    assert queues == ["default,emails,invoices"]  # a list value is one value, kept current


def test_a_value_said_in_prose_and_pasted_is_one_fact_under_the_pasted_name(engine):
    """'the hold is 10 minutes (`SlotHold::TTL = 10.minutes` …)' is one fact: keyed twice, the
    prose row stayed current when the pasted line changed."""
    first = "the hold on a slot is 10 minutes (`SlotHold::TTL = 10.minutes` in slot_hold.rb)"
    assert [e.subject for e in read([first], T0)[0].extractions] == ["SlotHold::TTL"]
    engine.ingest(first, at=day(0))
    said = "people were hoarding slots so I changed `SlotHold::TTL = 7.minutes`, PR #412"
    engine.ingest(said, at=day(1))
    assert active_texts(engine) == {said}
