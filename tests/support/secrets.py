"""Token-shaped samples built at run time, so the repository holds no token-shaped literal.

Shared by the sensitive-content, policy and tool tests (RELIABILITY §3 D1/D2).
"""

from __future__ import annotations

import base64
import hashlib
import json
import random
import string
import uuid

_RNG = random.Random(20260701)


def _rand(n: int, alphabet: str = string.ascii_letters + string.digits) -> str:
    """A deterministic random run; always holds a digit and a letter when the alphabet has both."""
    text = "".join(_RNG.choice(alphabet) for _ in range(n))
    if any(c.isdigit() for c in alphabet) and not any(c.isdigit() for c in text):
        text = "7" + text[1:]
    if any(c.isalpha() for c in alphabet) and not any(c.isalpha() for c in text):
        text = text[:-1] + "q"
    return text


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def _jwt() -> str:
    header = _b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    payload = _b64url(json.dumps({"sub": "1234567890", "name": "Alice"}).encode())
    return f"{header}.{payload}.{_rand(43, string.ascii_letters + string.digits + '_-')}"


UPPER = string.ascii_uppercase + string.digits
HEX = "0123456789abcdef"

# rule id -> samples that must each yield that rule.
POSITIVES: dict[str, list[str]] = {
    "url_credentials": [
        "postgres://admin:" + _rand(14) + "@db.internal:5432/app",
        "clone https://deploy:" + _rand(20) + "@git.example.org/x.git",
    ],
    "keyword_assignment": [
        "OPENAI_" + "API_KEY=" + _rand(32),
        "DB_" + "PASSWORD: hunter2",
        "aws_secret_" + "access_key = " + _rand(40),
        '{"client_secret": "' + _rand(24) + '"}',
        "MYSQL" + "_PWD=" + _rand(12),
    ],
    "authorization_header": [
        "Authorization: Basic " + base64.b64encode(b"user:" + _rand(10).encode()).decode(),
    ],
    "cookie_header": ["Cookie: sid=" + _rand(20) + "; theme=dark"],
    "session_cookie": ["curl -b JSESSION" + "ID=" + _rand(32, UPPER) + " https://x.test"],
    "bearer_token": ["curl -H 'Authorization: Bearer " + _rand(40) + "'"],
    "sk_key": [
        "s" + "k-proj-" + _rand(48, string.ascii_letters + string.digits + "_-"),
        "r" + "k-" + _rand(32),
    ],
    "stripe_key": ["s" + "k_live_" + _rand(24), "r" + "k_test_" + _rand(24)],
    "github_token": ["g" + "hp_" + _rand(36), "g" + "hs_" + _rand(36)],
    "github_pat": ["github" + "_pat_" + _rand(22) + "_" + _rand(59)],
    "gitlab_token": ["gl" + "pat-" + _rand(20)],
    "slack_token": [
        "xo" + "xb-" + _rand(11, string.digits) + "-" + _rand(13, string.digits) + "-" + _rand(24)
    ],
    "slack_webhook": [
        "https://hooks.slack.com/services/T"
        + _rand(8, UPPER)
        + "/B"
        + _rand(8, UPPER)
        + "/"
        + _rand(24)
    ],
    "aws_access_key_id": ["AK" + "IA" + "IOSFODNN7" + "EXAMPLE", "AS" + "IA" + _rand(16, UPPER)],
    "google_api_key": ["AI" + "za" + _rand(35)],
    "npm_token": ["np" + "m_" + _rand(36)],
    "pypi_token": ["py" + "pi-AgEIcHlwaS5vcmc" + _rand(70)],
    "huggingface_token": ["h" + "f_" + _rand(34, string.ascii_letters)],
    "jwt": [_jwt()],
    "private_key": [
        "-----" + "BEGIN RSA PRIVATE KEY-----\nMIIE...",
        "-----" + "BEGIN OPENSSH PRIVATE KEY-----",
        "-----" + "BEGIN PRIVATE KEY-----",
        "-----" + "BEGIN PGP PRIVATE KEY BLOCK-----",
    ],
    "email": ["alice.smith" + "@" + "example.com", "mailto:ops+alerts" + "@" + "corp.example.io"],
}

NEGATIVES: list[str] = [
    hashlib.sha1(b"commit").hexdigest(),
    "fixed in " + hashlib.sha1(b"x").hexdigest()[:7],
    "sha256:" + hashlib.sha256(b"layer").hexdigest(),
    hashlib.sha256(b"digest").hexdigest(),
    "sha512-" + base64.b64encode(hashlib.sha512(b"pkg").digest()).decode(),
    str(uuid.UUID(int=_RNG.getrandbits(128), version=4)),
    base64.b64encode(b"The quick brown fox jumps over the lazy dog").decode(),
    'api_key = os.environ["OPENAI_API_KEY"]',
    'TOKEN = os.getenv("TOKEN")',
    "password: ${DB_PASSWORD}",
    "token: <your-token-here>",
    'SECRET_KEY = "********"',
    "const apiKey = process.env.API_KEY",
    "PWD=/home/u/x",
    "OLDPWD=/home/u/x",
    "git@github.com:org/repo.git",
    "ssh://git@github.com/org/repo.git",
    "npm install @scope/pkg@1.2.3",
    "docker pull ghcr.io/org/image@sha256:" + hashlib.sha256(b"img").hexdigest(),
    "The token is refreshed every hour; the password: required field is validated.",
    "Use bearer tokens for the public API.",
    "risk-assessment-for-the-release-2024 and task-force-alpha-bravo-charlie-9",
    "Release artifacts are published from main-v2.",
    "AKIA" + "X" * 16,
    "tokenizer: bert-base-uncased",
    "authorization_url: https://auth.example.com/oauth2/authorize",
    "PRIVATE_KEY_PATH=~/.ssh/id_ed25519",
    "TOKEN_FILE=/run/secrets/api_token",
    "max_tokens=4096",
    "GITHUB_TOKEN: ${{ secrets.GITHUB_TOKEN }}",
]

# -- the rule table's own fixtures (app/context_engine/policy/secret_rules.py) -------------
from context_engine.policy.secret_rules import ROWS, expand_fixture  # noqa: E402

for _row in ROWS:
    POSITIVES.setdefault(_row.id, []).append(expand_fixture(_row.positive))

# Held-out credentials written the way people paste them (issue 17: missed before the table).
HELD_OUT: dict[str, str] = {
    "putty_private_key": "PuTTY-User-Key-File-3: ssh-rsa\nEncryption: none\nComment: deploy\n"
    "Public-Lines: 6\n" + _rand(64, string.ascii_letters + string.digits + "+/"),
    "azure_storage_key": "DefaultEndpointsProtocol=https;AccountName=prodlogs;AccountKey="
    + _rand(86, string.ascii_letters + string.digits + "+/")
    + "==;EndpointSuffix=core.windows.net",
    "netrc_password": "machine api.heroku.com login me password " + _rand(24),
    "age_secret_key": "AGE-SECRET-KEY-1" + _rand(58, "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L"),
    "sendgrid_api_key": "S" + "G." + _rand(22, string.ascii_letters + string.digits + "_-")
    + "." + _rand(43, string.ascii_letters + string.digits + "_-"),
    "twilio_api_key": "S" + "K" + _rand(32, HEX),
    "telegram_bot_token": "bot" + _rand(10, string.digits) + ":A"
    + _rand(34, string.ascii_letters + string.digits + "_-"),
    "digitalocean_token": "do" + "p_v1_" + _rand(64, HEX),
    "shopify_token": "shp" + "at_" + _rand(32, HEX),
    "databricks_token": "da" + "pi" + _rand(32, HEX),
    "mailgun_api_key": "ke" + "y-" + _rand(32, HEX),
    "atlassian_api_token": "ATA"
    + "TT3xFfGF0"
    + _rand(170, string.ascii_letters + "_-" + string.digits)
    + "="
    + _rand(8, "0123456789ABCDEF"),
}

# Text that looks like a credential and is not one: must yield no finding at all.
LOOK_ALIKES: list[str] = [
    # git SHAs, short and long, in prose and logs
    *(hashlib.sha1(str(i).encode()).hexdigest() for i in range(20)),
    "commit " + hashlib.sha1(b"a").hexdigest() + "\nAuthor: Build Bot",
    "merge " + hashlib.sha1(b"b").hexdigest()[:12] + " into main",
    # digests
    *("sha256:" + hashlib.sha256(str(i).encode()).hexdigest() for i in range(5)),
    "integrity sha512-" + base64.b64encode(hashlib.sha512(b"x").digest()).decode(),
    # UUIDs, upper and lower case
    *(str(uuid.UUID(int=_RNG.getrandbits(128), version=4)) for _ in range(20)),
    str(uuid.UUID(int=_RNG.getrandbits(128), version=4)).upper(),
    # base64 images and blobs
    "![logo](data:image/png;base64,"
    + base64.b64encode(bytes(_RNG.getrandbits(8) for _ in range(600))).decode()
    + ")",
    "data:image/gif;base64," + base64.b64encode(b"GIF89a" + bytes(range(200))).decode(),
    base64.b64encode(b"The quick brown fox jumps over the lazy dog" * 4).decode(),
    # documented example placeholders
    "export SENDGRID_API_KEY='SG." + "x" * 22 + "." + "x" * 43 + "'",
    "GITHUB_TOKEN=ghp_xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx",
    "the docs show dapi" + "0" * 32 + " as the token shape",
    "AccountKey=<your-storage-account-key>",
    "token: <your-telegram-bot-token>",
    "Slack: xoxb-your-bot-token",
    "age recipient age1" + "q" * 58,
    "password: ${NETRC_PASSWORD}",
    "machine example.com login anonymous password ${FTP_PASSWORD}",
    "example: dop_v1_" + "x" * 64,
    # long identifiers
    "AbstractSingletonProxyFactoryBeanConfigurationProviderRegistryImpl",
    "test_recall_block_escapes_every_user_derived_value_and_never_exceeds_budget",
    "SKIPPED_INTEGRATION_TESTS_FOR_ARM64_RUNNERS_WITH_OLD_KERNELS",
    "sk-learn-pipeline-preprocessing-with-column-transformers",
    "keyboard-shortcuts-for-the-release-notes-editor-and-preview-2024",
    "ATATT is the prefix Atlassian uses; do not paste tokens here",
    "Twilio account sids start with AC and API key sids with SK",
    "Mailgun region: EU; use api.eu.mailgun.net",
    "PuTTY-User-Key-File format: convert with puttygen",
    "log in with your password first, then open the dashboard",
    "The .netrc file holds machine, login and password entries.",
    "ports 8080:8080 and 9090:9090 in docker-compose",
    "time 12:30:45 on 2026-07-01",
    "build id 2f9d1c3e4b5a69788796a5b4c3d2e1f0-20260701-00000001",
    "N2QxZTNjNGI1YTY5Nzg4Nzk2YTViNGMzZDJlMWYw.abcdef.notatokenatallreallynotone",
    "rk-kebab-case-name-without-digits-here",
    "PWD=/home/u/x",
]
