"""The secret rule table (S10.2): one row per credential format, each with its own fixtures.

Every row gives a rule id, a bounded pattern, the gate a match must also pass (``GATES``), and
a positive and a negative fixture. Fixtures are templates (``{an:22}`` is 22 random letters and
digits, see ``expand_fixture``) so the repository holds no token-shaped literal. Vendor rules
are written from each vendor's documented token format; every pattern starts with a literal
where it can, because Python's ``re`` then jumps between occurrences of that literal.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, NamedTuple

if TYPE_CHECKING:  # fixtures only: ``random`` stays off the hook's import path
    import random


# A NamedTuple, not a dataclass: forty rows are built by every process that scans or redacts
# (a hook turn among them), and a frozen dataclass costs ~1 ms to define.
class RuleRow(NamedTuple):
    """One credential format: how to find it, what else must hold, and two fixtures."""

    id: str
    pattern: str
    gate: str  # a key of ``sensitive.GATES``: "word", "placeholder", "entropy", …
    positive: str  # a template that must yield this rule
    negative: str  # a near miss that must not yield this rule
    lower: bool = False  # match on a lowercased copy (pattern written in lowercase)
    note: str = ""  # where the format is documented / why the gate


_KEYWORDS = (
    r"api[_-]?key|access[_-]?key|private[_-]?key|secret(?!ar|ion)|token(?!i[sz])|password"
    r"|passwd|_pwd|authorization"
)

B64URL = "[A-Za-z0-9_-]"

ROWS: tuple[RuleRow, ...] = (
    # -- generic shapes --------------------------------------------------------------------
    RuleRow(
        "url_credentials",
        r"://[^\s/:@?#]{1,128}:[^\s/@?#]{1,256}@",
        "none",
        "postgres://admin:{an:14}@db.internal:5432/app",
        "postgres://db.internal:5432/app",
    ),
    RuleRow(
        "keyword_assignment",
        r"(?:" + _KEYWORDS + r")[a-z0-9_.-]{0,40}"
        r"[\"']?[ \t]{0,4}(?::=|=>|=|:)[ \t]{0,4}"
        r"(?P<value>[\"'`]?[^\s\"'`,;]{1,256})",
        "keyword_value",
        "OPENAI_API_KEY={an:32}",
        'OPENAI_API_KEY=os.environ["OPENAI_API_KEY"]',
        lower=True,
        note="value entropy >= 3.0 or letters+digits, and not a reference",
    ),
    RuleRow(
        "authorization_header",
        r"authorization[\"']?[ \t]{0,4}[:=][ \t]{0,4}[\"']?(?:basic|bearer|token|digest)"
        r"[ \t]{1,4}[a-z0-9+/._~=-]{8,}",
        "none",
        "Authorization: Basic {b64:24}",
        "Authorization: see the auth guide",
        lower=True,
    ),
    RuleRow(
        "cookie_header",
        r"cookie[\"']?[ \t]{0,4}[:=][ \t]{0,4}[\"']?[a-z0-9_.%-]{1,100}=[^\s;\"']{4,}",
        "none",
        "Cookie: sid={an:20}; theme=dark",
        "Cookies are cleared at logout",
        lower=True,
    ),
    RuleRow(
        "session_cookie",
        r"(?:sessid|sessionid|session_id|_session|connect\.sid)=[a-z0-9%._+/=-]{16,}",
        "none",
        "curl -b JSESSIONID={up:32} https://x.test",
        "JSESSIONID=short",
        lower=True,
    ),
    RuleRow(
        "bearer_token",
        r"bearer[ \t]{1,4}[a-z0-9._~+/=-]{16,}",
        "word",
        "curl -H 'Authorization: Bearer {an:40}'",
        "Use bearer tokens for the public API.",
        lower=True,
    ),
    RuleRow(
        "email",
        # Matched from the ``@``; the local part is checked by the gate. An alphabetic TLD
        # excludes npm ``@scope/pkg@1.2.3`` and docker ``@sha256:``.
        r"@[A-Za-z0-9-]{1,63}(?:\.[A-Za-z0-9-]{1,63}){0,8}\.[A-Za-z]{2,24}\b",
        "email",
        "ops+alerts@corp.example.io",
        "git@github.com:org/repo.git",
    ),
    RuleRow(
        "private_key",
        r"-----BEGIN[ A-Z0-9]{0,40}PRIVATE KEY(?: BLOCK)?-----",
        "none",
        "-----BEGIN RSA PRIVATE KEY-----\nMIIE{b64:40}",
        "-----BEGIN CERTIFICATE-----",
    ),
    RuleRow(
        "putty_private_key",
        # PuTTY .ppk files (v2 and v3) open with this header line, then the key algorithm.
        r"PuTTY-User-Key-File-[1-9]:[ \t]{0,4}[a-z0-9@.-]{3,40}",
        "none",
        "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none",
        "Convert the key with puttygen to OpenSSH format",
    ),
    RuleRow(
        "netrc_password",
        # ``machine h login u password p`` on one line, or a ``password p`` line under a
        # ``machine``/``login``/``default`` line (the .netrc grammar).
        r"password[ \t]{1,8}(?P<value>[^\s]{1,256})",
        "netrc",
        "machine api.example.com\n  login deploy\n  password {an:20}",
        "log in with your password first",
    ),
    RuleRow(
        "jwt",
        # The lookbehind after the literal rejects a start inside a longer run at once, so
        # ``eyJeyJ…`` is not rescanned from every occurrence (quadratic otherwise).
        r"eyJ(?<![A-Za-z0-9_-]eyJ)[A-Za-z0-9_-]{8,4096}\.eyJ[A-Za-z0-9_-]{8,8192}"
        r"\.[A-Za-z0-9_-]{8,4096}",
        "none",
        "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.{url:43}",
        "eyJhbGciOiJIUzI1NiJ9 is the header alone",
    ),
    # -- vendor-prefixed tokens (documented formats) ----------------------------------------
    RuleRow(
        "sk_key",
        # OpenAI/Anthropic style ``sk-…``/``rk-…``; matched from ``k-``, the gate checks s/r.
        r"k-[A-Za-z0-9_-]{20,256}",
        "sk",
        "sk-proj-{url:48}",
        "sk-learn-preprocessing-pipeline-notes",
    ),
    RuleRow(
        "stripe_key",
        r"k_(?:live|test)_[A-Za-z0-9]{16,256}",
        "stripe",
        "rk_live_{an:24}",
        "mask_test_helpers_module",
    ),
    RuleRow(
        "github_token",
        r"gh[pousr]_[A-Za-z0-9]{30,255}\b",
        "placeholder",
        "ghp_{an:36}",
        "ghp_" + "x" * 36,
        note="ghp_/gho_/ghu_/ghs_/ghr_ + 36 base62",
    ),
    RuleRow(
        "github_pat",
        r"github_pat_[A-Za-z0-9_]{22,255}",
        "placeholder",
        "github_pat_{an:22}_{an:59}",
        "github_pat_prefix",
    ),
    RuleRow(
        "gitlab_token",
        r"glpat-[A-Za-z0-9_-]{20,64}",
        "placeholder",
        "glpat-{an:20}",
        "glpat-short",
    ),
    RuleRow(
        "slack_token",
        r"xox[baprs]-[0-9]{1,16}-[A-Za-z0-9-]{8,250}",
        "placeholder",
        "xoxb-{dig:11}-{dig:13}-{an:24}",
        "xoxb-your-token-here",
    ),
    RuleRow(
        "slack_webhook",
        r"hooks\.slack\.com/services/T[A-Za-z0-9_]{6,32}/B[A-Za-z0-9_]{6,32}/[A-Za-z0-9_]{16,64}",
        "none",
        "https://hooks.slack.com/services/T{up:8}/B{up:8}/{an:24}",
        "https://hooks.slack.com/services/",
    ),
    RuleRow(
        "aws_access_key_id",
        r"A(?:KIA|SIA)[A-Z0-9]{16}\b",
        "aws",
        "ASIA{up:16}",
        "AKIA" + "X" * 16,
        note="documented samples (AKIAIOSFODNN7EXAMPLE) stay flagged: fail closed",
    ),
    RuleRow(
        "google_api_key",
        r"AIza[A-Za-z0-9_-]{35}(?![A-Za-z0-9_-])",
        "placeholder",
        "AIza{url:35}",
        "AIza{url:20}",
    ),
    RuleRow("npm_token", r"npm_[A-Za-z0-9]{36}\b", "placeholder", "npm_{an:36}", "npm_{an:12}"),
    RuleRow(
        "pypi_token",
        r"pypi-AgEIcHlwaS5vcmc[A-Za-z0-9_-]{50,512}",
        "placeholder",
        "pypi-AgEIcHlwaS5vcmc{url:70}",
        "pypi-AgEIcHlwaS5vcmc",
    ),
    RuleRow(
        "huggingface_token",
        r"hf_[A-Za-z]{34}\b",
        "placeholder",
        "hf_{alpha:34}",
        "hf_hub_download_helper",
    ),
    RuleRow(
        "sendgrid_api_key",
        r"SG\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]{43}(?![A-Za-z0-9_-])",
        "placeholder",
        "SENDGRID=SG.{url:22}.{url:43}",
        "SG.{url:22}.{url:20}",
        note="SendGrid: 'SG.' + 22 + '.' + 43 (69 characters)",
    ),
    RuleRow(
        "twilio_api_key",
        r"SK[0-9a-fA-F]{32}\b",
        "word_entropy",
        "TWILIO_KEY_SID SK{hex:32}",
        "SKIPPED_TESTS_IN_THE_INTEGRATION_RUN",
        note="Twilio API key SID: 'SK' + 32 hex",
    ),
    RuleRow(
        "discord_bot_token",
        # Discord: base64(user id) . base64(timestamp) . HMAC; the gate decodes the first part.
        # Matched from the first dot (a literal: fast); the gate reads the id segment before it.
        r"\.[A-Za-z0-9_-]{6}\.[A-Za-z0-9_-]{27,40}(?![A-Za-z0-9_-])",
        "discord",
        "{discord}",
        "N{url:23}.{url:6}.{url:30}",
        note="first segment must decode to a numeric snowflake",
    ),
    RuleRow(
        "discord_webhook",
        r"discord(?:app)?\.com/api/webhooks/[0-9]{17,20}/[A-Za-z0-9_-]{60,68}",
        "none",
        "https://discord.com/api/webhooks/{dig:18}/{url:68}",
        "https://discord.com/api/webhooks/",
    ),
    RuleRow(
        "telegram_bot_token",
        # Telegram Bot API: '<bot id>:<35 characters>'; matched from the colon.
        r":A[A-Za-z0-9_-]{34}(?![A-Za-z0-9_-])",
        "telegram",
        "TELEGRAM={dig:10}:A{url:34}",
        "ratio 10:A{url:10}",
    ),
    RuleRow(
        "digitalocean_token",
        r"do[opr]_v1_[a-f0-9]{64}\b",
        "placeholder",
        "dop_v1_{hex:64}",
        "dop_v1_{hex:20}",
        note="DigitalOcean personal (dop_), OAuth (doo_) and refresh (dor_) tokens",
    ),
    RuleRow(
        "shopify_token",
        r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b",
        "placeholder",
        "shpat_{hex:32}",
        "shpat_{hex:12}",
        note="Shopify admin (shpat_), custom app (shpca_), private app (shppa_), secret (shpss_)",
    ),
    RuleRow(
        "databricks_token",
        r"dapi[a-f0-9]{32}(?:-[0-9])?\b",
        "word_entropy",
        "DATABRICKS_HOST=x dapi{hex:32}",
        "dapi{hex:12}",
    ),
    RuleRow(
        "azure_storage_key",
        # Connection strings: AccountKey=<88 base64 characters> (64-byte key).
        r"accountkey[ \t]{0,4}=[ \t]{0,4}[a-z0-9+/]{86}==",
        "none",
        "DefaultEndpointsProtocol=https;AccountName=x;AccountKey={b64:86}==;",
        "AccountKey=<your-account-key>",
        lower=True,
    ),
    RuleRow(
        "azure_sas_key",
        r"sharedaccesskey[ \t]{0,4}=[ \t]{0,4}[a-z0-9+/]{42,43}=",
        "none",
        "Endpoint=sb://x.servicebus.windows.net/;SharedAccessKey={b64:43}=",
        "SharedAccessKeyName=RootManageSharedAccessKey",
        lower=True,
    ),
    RuleRow(
        "mailgun_api_key",
        r"key-[0-9a-f]{32}\b",
        "word_entropy",
        "MAILGUN=key-{hex:32}",
        "primary-key-{alpha:32}",
        note="Mailgun private API key: 'key-' + 32 hex",
    ),
    RuleRow(
        "mailgun_key",
        # Newer Mailgun keys: 32 hex '-' 8 hex '-' 8 hex; matched from the first dash.
        r"-[0-9a-f]{8}-[0-9a-f]{8}(?![0-9A-Za-z_-])",
        "mailgun",
        "MAILGUN={hex:32}-{hex:8}-{hex:8}",
        "{hex:8}-{hex:4}-{hex:4}-{hex:4}-{hex:12}",
    ),
    RuleRow(
        "atlassian_api_token",
        r"AT(?:ATT|CTT)[A-Za-z0-9_=-]{120,260}",
        "placeholder",
        "ATATT3xFfGF0{url:170}={HEX:8}",
        "ATATT3xFfGF0",
        note="Atlassian API tokens (ATATT…, ~192 characters) and Connect tokens (ATCTT…)",
    ),
    RuleRow(
        "age_secret_key",
        r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}",
        "none",
        "AGE-SECRET-KEY-1{bech:58}",
        "age1{bech:58}",
        note="age X25519 identity: Bech32, upper case",
    ),
    RuleRow(
        "postman_api_key",
        r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}",
        "none",
        "PMAK-{hex:24}-{hex:34}",
        "PMAK-{hex:8}",
    ),
    RuleRow(
        "vault_token",
        r"hv[sb]\.[A-Za-z0-9_-]{24,256}",
        "placeholder",
        "VAULT_TOKEN hvs.{url:90}",
        "hvs.short",
    ),
    RuleRow(
        "square_token",
        r"sq0(?:atp|csp)-[A-Za-z0-9_-]{22,43}",
        "placeholder",
        "sq0atp-{url:22}",
        "sq0atp-{url:8}",
    ),
)

# Literals a rule's match cannot do without: when none is in the text the rule is skipped
# (a C-speed ``in`` instead of a regex pass). Lowercase for ``lower`` rules. A test checks
# every positive fixture holds one, so a prefilter can never silently switch a rule off.
PREFILTERS: dict[str, tuple[str, ...]] = {
    "url_credentials": ("://",),
    "keyword_assignment": ("key", "secret", "token", "passw", "pwd", "authorization"),
    "authorization_header": ("authorization",),
    "cookie_header": ("cookie",),
    "session_cookie": ("sess", "connect.sid"),
    "bearer_token": ("bearer",),
    "email": ("@",),
    "private_key": ("-----BEGIN",),
    "putty_private_key": ("PuTTY-User-Key-File-",),
    "netrc_password": ("machine", "default"),  # every .netrc entry opens with one of them
    "jwt": ("eyJ",),
    "sk_key": ("k-",),
    "stripe_key": ("k_live_", "k_test_"),
    "github_token": ("ghp_", "gho_", "ghu_", "ghs_", "ghr_"),
    "github_pat": ("github_pat_",),
    "gitlab_token": ("glpat-",),
    "slack_token": ("xox",),
    "slack_webhook": ("hooks.slack.com",),
    "aws_access_key_id": ("AKIA", "ASIA"),
    "google_api_key": ("AIza",),
    "npm_token": ("npm_",),
    "pypi_token": ("pypi-AgEIcHlwaS5vcmc",),
    "huggingface_token": ("hf_",),
    "sendgrid_api_key": ("SG.",),
    "twilio_api_key": ("SK",),
    "discord_bot_token": (".",),
    "discord_webhook": ("/api/webhooks/",),
    "telegram_bot_token": (":A",),
    "digitalocean_token": ("_v1_",),
    "shopify_token": ("shp",),
    "databricks_token": ("dapi",),
    "azure_storage_key": ("accountkey",),
    "azure_sas_key": ("sharedaccesskey",),
    "mailgun_api_key": ("key-",),
    "mailgun_key": ("-",),
    "atlassian_api_token": ("ATATT", "ATCTT"),
    "age_secret_key": ("AGE-SECRET-KEY-1",),
    "postman_api_key": ("PMAK-",),
    "vault_token": ("hvs.", "hvb."),
    "square_token": ("sq0atp-", "sq0csp-"),
}

# Rules whose regex has no literal to jump to, or that anchor on a common word and gate every
# hit in Python: their prefilter pays off on long texts too (elsewhere a rule's own literal
# search costs what an ``in`` check would, so long texts skip the prefilter).
PREFILTER_LONG_TEXTS: frozenset[str] = frozenset({"keyword_assignment", "netrc_password"})

# Template classes for fixtures.
ALPHABETS = {
    "an": "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
    "alpha": "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
    "up": "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
    "dig": "0123456789",
    "hex": "0123456789abcdef",
    "HEX": "0123456789ABCDEF",
    "b64": "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
    "url": "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-",
    "bech": "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L",
}
_SLOT = re.compile(r"\{(?:(?P<cls>[A-Za-z0-9]+):(?P<n>\d+)|(?P<special>discord))\}")


def _run(rng: random.Random, alphabet: str, n: int) -> str:
    """``n`` random characters; a letter and a digit when the alphabet has both."""
    text = "".join(rng.choice(alphabet) for _ in range(n))
    if n >= 2 and any(c.isdigit() for c in alphabet) and not any(c.isdigit() for c in text):
        text = "7" + text[1:]
    if n >= 2 and any(c.isalpha() for c in alphabet) and not any(c.isalpha() for c in text):
        text = text[:-1] + next(c for c in alphabet if c.isalpha())
    return text


def _discord(rng: random.Random) -> str:
    """A Discord-shaped bot token: base64 of an 18-digit snowflake, 6, then 38 characters."""
    import base64

    snowflake = str(rng.randrange(10**17, 10**18)).encode()
    head = base64.urlsafe_b64encode(snowflake).decode().rstrip("=")
    return f"{head}.{_run(rng, ALPHABETS['url'], 6)}.{_run(rng, ALPHABETS['url'], 38)}"


def expand_fixture(template: str, seed: int = 20261201) -> str:
    """The fixture text for ``template`` (deterministic for a seed)."""
    import random

    rng = random.Random(seed)

    def slot(match: re.Match[str]) -> str:
        if match.group("special"):
            return _discord(rng)
        return _run(rng, ALPHABETS[match.group("cls")], int(match.group("n")))

    return _SLOT.sub(slot, template)
