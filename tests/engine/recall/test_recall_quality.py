"""Recall on real-looking turns (issue 16): content-term counting, inflections, generic words,
numbers, reasons, the fact line, stale beside fresh, focus, and the quality-set targets."""

from __future__ import annotations

from context_engine.recall import Recaller
from context_engine.recall.tokenize import tokens
from support.quality import NOW as SET_NOW
from support.quality import evaluate, load_facts, load_turns
from support.recall import NOW, fact


def names(recaller: Recaller, message: str) -> list[str]:
    return [h.name for h in recaller.recall(message, now=NOW).trace.hits]


def test_request_word_does_not_change_a_short_query() -> None:
    store = [
        fact("sentry-projects", "Backend errors go to the Sentry project ledgerly-api."),
        fact("release-target", "Release builds go out on Thursdays."),
    ]
    recaller = Recaller(store)
    assert names(recaller, "sentry crash") == ["sentry-projects"]
    assert names(recaller, "check sentry crash") == ["sentry-projects"]
    assert names(recaller, "please check the sentry crash") == ["sentry-projects"]


def test_english_inflections_fold_together() -> None:
    assert tokens("push pushes pushed pushing") == ["push"] * 4
    assert tokens("Bug bugs") == ["bug", "bug"]
    assert tokens("cache caches cached") == ["cach"] * 3
    assert tokens("v2_tests AuthHandlers") == ["v2_tests", "authhandler"]
    store = [fact("ci-tags", "CI pushes release tags; bugs are filed in Linear.")]
    assert names(Recaller(store), "who can push a tag") == ["ci-tags"]
    assert names(Recaller(store), "where does a bug go, linear?") == ["ci-tags"]


def test_generic_words_never_make_a_match() -> None:
    store = [
        fact("how-to-test", "Run the tests locally with make test; start the app locally first."),
        fact("排查", "本地运行测试前先启动数据库，排查问题看日志。"),
    ]
    recaller = Recaller(store)
    for message in ("run tests locally", "start the app locally", "运行测试", "排查问题"):
        result = recaller.recall(message, now=NOW)
        assert result.block == "", message


def test_bare_numbers_alone_never_match_but_help_a_subject() -> None:
    store = [
        fact("steps", "The upgrade has step 2 of 3 pending."),
        fact("api-port", "The API listens on port 8080 locally."),
    ]
    recaller = Recaller(store)
    assert names(recaller, "step 2 of 3") == []
    assert names(recaller, "what is on port 8080") == ["api-port"]
    assert names(recaller, "what about 8080 then") == ["api-port"]


def test_reason_lists_only_counting_terms_as_typed() -> None:
    store = [fact("e2e-suite", "The e2e suite needs the API on 8080; pushes run it nightly.")]
    result = Recaller(store).recall("run the e2e tests after pushes", now=NOW)
    assert result.trace.hits[0].reason == "matched e2e, pushes; project scope"


def test_fact_line_separates_description_and_body() -> None:
    store = [fact("release", "Ships on Thursdays from main.", description="Release cadence")]
    block = Recaller(store).recall("release cadence thursdays", now=NOW).block
    assert "  fact: Release cadence — Ships on Thursdays from main.\n" in block


def test_stale_fact_beside_a_fresher_one_on_the_same_subject_is_left_out() -> None:
    old = fact("staging-url-old",
               "Staging is at https://old-cluster.example.dev behind the office VPN.",
               title="Staging URL", type="reference", age_days=260)
    new = fact("staging-url",
               "Staging moved to https://staging.example.dev behind Cloudflare Access.",
               title="Staging URL (new cluster)", type="reference", age_days=6)
    other = fact(
        "grafana",
        "Grafana for staging: grafana.internal/d/staging, URL shared in #platform.",
        type="reference",
        age_days=300,
    )
    filler = [fact(f"note-{i}", f"Unrelated note {i} about billing exports.") for i in range(6)]
    result = Recaller([old, new, other, *filler]).recall("what is the staging url", now=NOW)
    assert next(h.name for h in result.trace.hits) == "staging-url"
    assert "staging-url-old" not in [h.name for h in result.trace.hits]
    superseded = [d for d in result.trace.dropped if d.reason == "superseded"]
    assert [d.name for d in superseded] == ["staging-url-old"]
    assert "staging-url" in superseded[0].detail


def test_a_bystander_sharing_one_word_is_not_injected() -> None:
    store = [
        fact(
            "webhook-idempotency",
            "Stripe webhook handler stores the event id in Redis before processing; "
            "duplicates return 200.",
        ),
        fact("stripe-cards",
             "Stripe test card 4242 succeeds; the Stripe CLI replays a webhook on demand."),
        *[fact(f"note-{i}", f"Unrelated note {i} about invoice exports.") for i in range(6)],
    ]
    recaller = Recaller(store)
    result = recaller.recall("stripe webhook received twice: duplicates by event id?", now=NOW)
    assert [h.name for h in result.trace.hits] == ["webhook-idempotency"]
    assert [d.name for d in result.trace.dropped if d.reason == "off subject"] == ["stripe-cards"]


def test_one_word_match_must_name_the_fact() -> None:
    store = [
        fact("eslint", "Lint config lives in packages/eslint-config.", title="ESLint config"),
        fact("dotfiles", "Shell setup; the zsh config uses starship.", title="Dotfiles"),
    ]
    assert names(Recaller(store), "something is off with the config") == ["eslint"]
    # A request that is just the word takes every fact that mentions it.
    assert sorted(names(Recaller(store), "config")) == ["dotfiles", "eslint"]


def test_quality_set_targets() -> None:
    facts, turns = load_facts(), load_turns()
    recaller = Recaller(facts)

    def ours(text: str) -> list[str]:
        return [h.name for h in recaller.recall(text, now=SET_NOW).trace.hits]

    for split in ("d", "h"):
        chosen = [t for t in turns if t.split == split and t.kind in ("s", "g")]
        scores = evaluate(chosen, ours)
        assert scores.success >= 0.90, (split, scores)
        assert scores.precision >= 0.85, (split, scores)
        assert scores.false_injection <= 0.02, (split, scores)


def test_a_long_word_common_in_the_store_does_not_stand_alone() -> None:
    store = [
        fact(f"invoice-{i}", f"Invoice rule {i}: totals are rounded per line.") for i in range(5)
    ] + [fact("sentry-projects", "Backend errors go to the Sentry project ledgerly-api.")]
    recaller = Recaller(store)
    assert names(recaller, "the invoice looks wrong") == []  # in 5 of 6 facts
    assert names(recaller, "check sentry crash") == ["sentry-projects"]
    assert names(recaller, "invoice rounding totals") != []  # two words still match


def test_a_sentence_ending_period_is_not_a_mark_of_distinction() -> None:
    from context_engine.recall.query import parse_query

    assert parse_query("run the tests.").distinctive == frozenset()
    assert parse_query("fix the bug.").distinctive == frozenset()
    assert {"config", "error"} <= parse_query("see config.toml and errors.Is").distinctive
    store = [fact("how-to-test", "Run the tests locally with make test.")]
    assert names(Recaller(store), "run the tests.") == []


def test_quality_set_generic_turns_stay_quiet_with_punctuation() -> None:
    facts, turns = load_facts(), load_turns()
    recaller = Recaller(facts)
    quiet = [t for t in turns if t.kind == "g"]
    noisy = [
        t.text
        for t in quiet
        if recaller.recall(t.text.rstrip(".!?") + ".", now=SET_NOW).trace.hits
    ]
    assert len(noisy) <= 0.02 * len(quiet), noisy


def test_a_common_acronym_does_not_stand_alone() -> None:
    store = [fact(f"ci-{i}", f"CI job {i} caches the pnpm store.") for i in range(5)] + [
        fact("redis-ttl", "Session keys in Redis have a TTL of 300 s.")
    ]
    recaller = Recaller(store)
    assert names(recaller, "the CI is red") == []  # CI is in 5 of 6 facts
    assert names(recaller, "what TTL again") == ["redis-ttl"]  # a rare acronym still stands
    assert names(recaller, "CI pnpm store caching") != []
