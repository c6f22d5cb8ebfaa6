"""Differential: recall selection against the real Reasonix code (S8).

Both read the same store (written by Reasonix, plus two older facts written as files) and
answer the same turns at the same moment; the selected ids are compared. Where they differ,
the turn names the accepted differences that explain it.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest
from context_engine.facts.memory import Memory
from context_engine.paths import EnginePaths
from context_engine.recall import Recaller
from support.oracle import Oracle, check_case, require_oracle

pytestmark = pytest.mark.slow

FACTS: list[dict[str, str]] = [
    {"name": "release-target", "title": "Release target", "description": "Release branch",
     "body": "Release artifacts are published from main-v2 every Thursday."},
    {"name": "sentry-projects", "description": "Where errors are reported",
     "body": "Backend errors go to the Sentry project ledgerly-api."},
    {"name": "ci-tags", "description": "Tagging releases",
     "body": "CI pushes release tags; bugs are filed in Linear."},
    {"name": "how-to-test", "description": "Test commands",
     "body": "Run the tests locally with make test; start the app locally first."},
    {"name": "auth-provider", "title": "Auth is handled by Clerk", "description": "Sign-in",
     "body": "The API verifies Clerk JWTs with the JWKS endpoint."},
    {"name": "webhook-idempotency", "description": "Stripe webhooks",
     "body": "The Stripe webhook handler stores the event id in Redis before processing; "
             "duplicates return 200."},
    {"name": "stripe-cards", "description": "Test cards",
     "body": "Stripe test card 4242 succeeds; the Stripe CLI replays a webhook on demand."},
    {"name": "staging-url", "title": "Staging URL (new cluster)", "description": "Staging",
     "body": "Staging moved to https://staging.example.dev behind Cloudflare Access."},
    {"name": "api-port", "description": "Local ports", "body": "The API listens on port 8080."},
    {"name": "upgrade-steps", "description": "Upgrade", "body": "The upgrade has step 2 of 3."},
    {"name": "eslint-config", "title": "ESLint config", "description": "Lint setup",
     "body": "Lint config lives in packages/eslint-config."},
    {"name": "dotfiles", "description": "Shell setup",
     "body": "The zsh config uses starship and zoxide."},
    {"name": "commit-msg-zh", "title": "提交信息用中文写", "description": "提交信息的语言",
     "body": "本仓库的提交信息用中文写，不要加 emoji。"},
    {"name": "local-tests-zh", "title": "本地测试", "description": "测试之前",
     "body": "本地运行测试前先启动数据库。"},
]

# "Now" for both sides: after the moment the oracle writes the facts (a fixed date went stale).
NOW = datetime.now(UTC).replace(microsecond=0) + timedelta(hours=1)
OLD = (NOW - timedelta(days=260)).strftime("%Y-%m-%dT%H:%M:%SZ")
STALE = f"""---
id: mem-0000000000000000000000000000a11d
revision: 1
created_at: "{OLD}"
updated_at: "{OLD}"
name: staging-url-old
title: Staging URL
description: Staging
metadata:
  type: reference
  scope: project
---

Staging is at https://old-cluster.example.dev behind the office VPN.
"""

TURNS: dict[str, str] = {
    "release target branch": "",
    "what is on port 8080": "",
    "ledgerly-api sentry project": "",
    "check sentry crash": "short_query_content_terms",
    "who can push a tag": "inflection_folding",
    "run tests locally": "gate_stopwords_generic",
    "step 2 of 3": "gate_stopwords_generic",
    "stripe webhook received twice: duplicates by event id?": "focus_on_subject",
    "what is the staging url": "stale_beside_fresh,gate_stopwords_generic",
    "something is off with the config": "one_word_named,gate_stopwords_generic",
    "提交信息用什么格式写": "",
    "提交信息": "",
    "运行测试": "gate_stopwords_generic",
}


@pytest.fixture(scope="module")
def answers(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[list[str], list[str]]]:
    require_oracle()
    base = tmp_path_factory.mktemp("recall")
    home, ws = base / "home", base / "ws"
    (ws / ".git").mkdir(parents=True)
    home.mkdir()
    oracle = Oracle(home, ws)
    for args in FACTS:
        assert oracle.remember(type="project", **args)["error"] == ""
    paths = EnginePaths.resolve(home=home, workspace=ws)
    (paths.project_store / "staging-url-old.md").write_text(STALE, encoding="utf-8")
    facts = Memory(paths).snapshot().facts
    recaller = Recaller(facts)
    now = NOW.strftime("%Y-%m-%dT%H:%M:%SZ")
    # Reasonix wrote the facts moments ago; "now" is later than that for both sides.
    assert all(f.updated_at is None or f.updated_at <= NOW for f in facts)
    out: dict[str, tuple[list[str], list[str]]] = {}
    for turn in TURNS:
        ours = [h.id for h in recaller.recall(turn, now=NOW).trace.hits]
        theirs = list(oracle.run("recall", query=turn, now=now)["ids"])
        out[turn] = (ours, theirs)
    return out


@pytest.mark.parametrize("turn", sorted(TURNS))
def test_recall_selection_matches_reasonix(
    answers: dict[str, tuple[list[str], list[str]]], turn: str
) -> None:
    ours, theirs = answers[turn]
    declared = set(TURNS[turn].split(",")) - {""}
    shown = set(declared) if ours != theirs else set()
    if ours != theirs and not declared:
        shown = {f"undeclared: ours {ours}, Reasonix {theirs}"}
    check_case(turn, shown, declared)
