"""What secrets look like in a developer's chat: the detect-secrets plugins used and how
their findings are typed, the token formats and chat phrasings added to them, and the
shapes that are not secrets (secrets.py runs them)."""

from __future__ import annotations

import re

# detect-secrets' plugin types -> our placeholder types
_PLUGIN_KINDS = {
    "AWS Access Key": "aws-access-key",
    "Artifactory Credentials": "artifactory-token",
    "Azure Storage Account access key": "azure-storage-key",
    "Basic Auth Credentials": "password",
    "Cloudant Credentials": "cloudant-key",
    "Discord Bot Token": "discord-token",
    "GitHub Token": "github-token",
    "GitLab Token": "gitlab-token",
    "IBM Cloud IAM Key": "ibm-cloud-key",
    "IBM COS HMAC Credentials": "ibm-cos-key",
    "JSON Web Token": "jwt",
    "Mailchimp Access Key": "mailchimp-key",
    "NPM tokens": "npm-token",
    "OpenAI Token": "openai-key",
    "Private Key": "private-key",
    "PyPI Token": "pypi-token",
    "SendGrid API Key": "sendgrid-key",
    "Slack Token": "slack-token",
    "SoftLayer Credentials": "softlayer-key",
    "Square OAuth Secret": "square-key",
    "Stripe Access Key": "stripe-key",
    "Telegram Bot Token": "telegram-token",
    "Twilio API Key": "twilio-key",
}
# Not secrets in a developer's chat: a public IP address is something people say on purpose.
_SKIPPED_PLUGINS = {"Public IP (ipv4)", "Hex High Entropy String", "Base64 High Entropy String",
                    "Secret Keyword"}

# Plugins whose forms are `<optional vendor> key = <n chars>`: after the specific formats, and
# typed by vendor only when the vendor is named
_GENERIC_PLUGINS = {
    "IBM Cloud IAM Key": r"ibm|cloud|iam", "IBM COS HMAC Credentials": r"ibm|cos|hmac",
    "SoftLayer Credentials": r"softlayer|\bsl", "Cloudant Credentials": r"cloudant|\bcl",
}

# Token formats newer than detect-secrets 1.5's plugins (prefixes as their issuers document
# them); the body lengths are the issuers' minimums, so prose never matches.
_EXTRA_FORMATS: tuple[tuple[str, str], ...] = (
    ("openai-key", r"\bsk-(?:proj|svcacct|admin)-[A-Za-z0-9_-]{20,}"),
    ("anthropic-key", r"\bsk-ant-(?:api|admin|oat|sid)\d{2}-[A-Za-z0-9_-]{20,}"),
    ("api-key", r"\bsk-[A-Za-z0-9]{32,}\b"),  # classic "sk-…" keys (OpenAI, DeepSeek, …)
    ("github-token", r"\bgithub_pat_[A-Za-z0-9_]{22,}"),
    ("google-api-key", r"\bAIza[0-9A-Za-z_-]{35}"),
    ("huggingface-token", r"\bhf_[A-Za-z0-9]{30,}"),
    ("npm-token", r"\bnpm_[A-Za-z0-9]{36}\b"),
    ("stripe-key", r"\b(?:sk|rk|pk)_(?:live|test)_[0-9A-Za-z]{20,}"),
    ("slack-token", r"\bxapp-\d-[A-Z0-9]+-\d+-[a-z0-9]+"),
    ("digitalocean-token", r"\bdo[opr]_v1_[a-f0-9]{64}\b"),
    ("shopify-token", r"\bshp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}\b"),
)

_PRIVATE_KEY_BLOCK = re.compile(
    r"-----BEGIN[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----.*?"
    r"(?:-----END[ A-Z0-9]*PRIVATE KEY(?: BLOCK)?-----|\Z)", re.DOTALL)
_PUTTY_KEY = re.compile(r"PuTTY-User-Key-File-\d:.*?(?:Private-MAC:[^\n]*|\Z)", re.DOTALL)

# Chat phrasing: "<keyword> [for <what>] is/was/=/: <value>", "set the <keyword> to <value>",
# "use <value> as the <keyword>"
_KEYWORDS = {
    "password": "password", "passwd": "password", "passphrase": "password",
    "pass phrase": "password", "pwd": "password", "credentials": "password",
    "creds": "password", "login": "password",
    "secret": "secret", "client secret": "secret", "secret key": "secret",
    "api key": "api-key", "apikey": "api-key", "api token": "api-key",
    "access key": "api-key", "auth key": "api-key", "license key": "api-key",
    "token": "token", "access token": "token", "auth token": "token",
    "bearer token": "token", "refresh token": "token", "session token": "token",
    "personal access token": "token", "bot token": "token",
    "private key": "private-key",
    "aws secret access key": "aws-secret-key", "aws secret key": "aws-secret-key",
    "secret access key": "aws-secret-key",
}
_KW_ALT = "|".join(sorted((re.escape(k).replace(r"\ ", r"[ _-]?") for k in _KEYWORDS),
                          key=len, reverse=True))
_KW = rf"(?<![\w:/.-])(?P<kw>{_KW_ALT})s?(?![\w-])"
_VALUE = r"(?P<q>[\"'`]?)(?P<val>[^\s\"'`]+)(?P=q)"
_WHAT = r"(?:the\s+|our\s+|my\s+|a\s+)?"
_PHRASES = (
    # "the password for the staging db is …", "API_TOKEN: …", "token -> …", "token now …"
    re.compile(
        rf"{_KW}(?:\s+(?:for|of|on|in)\s+{_WHAT}[\w./@:-]+(?:\s+[\w./@:-]+){{0,3}}?)?"
        r"(?:\s*\([^)]{0,40}\))?"
        r"(?:\s*(?:is|was|will\s+be|=|==|:=|:|->|=>)\s*(?:now\s+|still\s+|just\s+)?"
        r"|\s+(?:is\s+)?(?:now|still)\s+"
        r"|\s+(?:was\s+|is\s+|got\s+)?(?:set|changed|rotated|reset|updated)\s+to\s+)"
        + _VALUE, re.IGNORECASE),
    # "set the staging API key to …", "rotated our deploy token to …"
    re.compile(
        r"(?<![\w-])(?:set|change|changed|rotate|rotated|reset|update|updated)\s+"
        rf"{_WHAT}(?:[\w.-]+\s+){{0,3}}?{_KW}\s+to\s+" + _VALUE, re.IGNORECASE),
    # "use hunter2-Long! as the password", "log in with password hunter2-Long!"
    re.compile(
        rf"(?<![\w-])(?:use|used|using|with|try)\s+{_WHAT}{_KW}\s+" + _VALUE, re.IGNORECASE),
    re.compile(
        rf"(?<![\w-])(?:use|used|using|try)\s+{_VALUE}\s+as\s+{_WHAT}(?:[\w.-]+\s+){{0,2}}?"
        rf"{_KW}", re.IGNORECASE),
)

# Values that name where a secret lives, or a placeholder, rather than being one.
_NOT_A_VALUE = re.compile(
    r"""^(?:
        \$\{?[A-Za-z_][\w]*\}?            # $VAR, ${VAR}
      | %[A-Za-z_]\w*%                    # %VAR%
      | \{\{.*\}\} | \{.*\} | <.*>        # templates
      | [A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+     # an env var's name: GITHUB_TOKEN
      | (?:[A-Za-z_]\w*\.)+[A-Za-z_]\w*(?:\(\))?   # settings.SECRET_KEY, os.getenv()
      | [A-Za-z_]\w*\(.*\)?               # a call: get_secret(...)
      | [~.]?/\S*                         # a path
      | [a-z][\w+.-]*://\S*               # a URL (credentials in one: basic-auth plugin)
      | \*+ | x{3,} | X{3,} | \.{3,} | …  # masked
      | \d+(?:\.\d+)+[a-z0-9-]*           # a version
      | v\d+(?:\.\d+)*                    # v2, v1.4
      | \d{1,5}                           # a short number: a length, a port, a count
      | [0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}  # a UUID
      | [\w.+-]+@[\w-]+(?:\.[\w-]+)+       # an email address
      | arn:[\w-]*:\S*                     # an AWS resource name
      | \d+(?:\.\d+)?\s*(?:ms|s|sec|m|min|h|d|days?|kb|mb|gb|%|chars?|characters)  # amounts
    )$""", re.VERBOSE | re.IGNORECASE)
# What a value is like, not what it is: "base64-encoded", "sha256", "bcrypt-hashed"
_DESCRIPTION = re.compile(
    r"^(?:[a-z]+\d*-(?:encoded|based|protected|only|free|compatible|enabled|disabled|hashed"
    r"|salted|encrypted|signed|scoped|bound|less|style|like)"
    r"|base\d+\w*|sha-?\d+|md5|bcrypt\w*|scrypt|argon2\w*|pbkdf2\w*|hmac[\w-]*|utf-?\d+"
    r"|rsa-?\d*|ed25519|aes-?\d+\w*|oauth\d*|\d+-?(?:bits?|bytes?|chars?|characters|digits?))$")
_PLACEHOLDER_WORDS = {
    "redacted", "hidden", "changeme", "change-me", "placeholder", "secret", "password",
    "token", "none", "null", "empty", "unset", "undefined", "required", "optional",
    "todo", "tbd", "n/a", "example", "dummy", "fake", "test",
}

_LONG_RUN = re.compile(r"[A-Za-z0-9_\-+/=.:@]{11,}")
_JWT_TAIL = re.compile(r"[A-Za-z0-9_\-.+/=]*")
_WORDS = re.compile(r"[a-z]{4,}|[A-Z][a-z]{3,}")
_TOKEN_RE = re.compile(r"(?<![A-Za-z0-9+/=_-])[A-Za-z0-9+/_-]{24,}={0,2}(?![A-Za-z0-9+/=_-])")
# "Authorization: Bearer …", "-H 'Authorization: token …'"
_AUTH_HEADER = re.compile(
    r"(?<![\w-])(?:Bearer|Basic|Token|Bot)\s+(?P<val>[A-Za-z0-9._~+/=-]{12,})", re.IGNORECASE)
_BASE64_CHARSET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/\\-_="
ENTROPY_LIMIT = 4.2  # bits per character, detect-secrets' measure (its own default is 4.5)

# A password in a URL's userinfo, of any scheme, with or without a user, percent-encoded or
# not: `redis://:pw@host`, `postgres://app:p%40ss@db`, `amqp://u:pa$$@mq`. The password runs
# to the last `@` before the host, never past a `/`: an unencoded `@`, `#` or `?` in it is
# common, whatever a URL parser would make of it.
_URL_USERINFO = re.compile(
    r"(?<![A-Za-z0-9+.-])[A-Za-z][A-Za-z0-9+.-]{0,31}://"
    r"[^\s:/?#\[\]@\"'`<>]{0,256}:(?P<val>[^\s/\[\]\"`<>]{1,512})@"
    r"(?=[A-Za-z0-9\[_%-])")
# ... unless it names where the password lives: `${REDIS_PASSWORD}`, `$REDIS_PASSWORD`,
# `{{pw}}`, `{pw}`, `%(pw)s`. An unbraced `$name` counts only in an environment variable's
# upper case (`$ecretPass` is a password that starts with a dollar sign). Filler such as
# `xxx` or `***` is masked like any password, as it is with a user (`u:xxx@`): nothing is
# lost, and a filler-looking password is never let through.
_URL_PLACEHOLDER = re.compile(
    r"^(?:\$\{[A-Za-z_]\w{0,80}\}|\$[A-Z_][A-Z0-9_]{0,80}|\{\{[^{}]{0,80}\}\}"
    r"|\{[A-Za-z_]\w{0,80}\}|%\(\w{1,80}\)s|%s)$")

# detect-secrets' keyword forms (`password = …`, `api_key: "…"`, `"…" == secret`, …), as
# detect_secrets.plugins.keyword builds them, rewritten to run in time linear in the line:
# theirs scan the rest of the line at every keyword (a no-op lookahead `(?=[^\v'"]*)` and an
# unbounded `\w*` with backtracking), about 2.5 s for one 2,000-character line of
# "passwordpassword…". Here the name after the keyword is at most 100 word characters,
# taken whole; a comparison's quoted value does not contain its own quote. Otherwise they
# match what theirs match (tests/security/test_secrets.py).
_DENYLIST = ("api_?key|auth_?key|service_?key|account_?key|db_?key|database_?key|priv_?key|"
             "private_?key|client_?key|db_?pass|database_?pass|key_?pass|password|passwd|pwd|"
             "secret|contraseña|contrasena")
_KEY_NAME = rf"({_DENYLIST})\w{{0,100}}+"
_CLOSING = r"""[]'"]{0,2}"""
_QUOTE = r"""['"`]"""
_SECRET = r"""(?=\w)[^\v'"]*[^\v,'"`]"""
KEYWORD_FORMS: tuple[tuple[re.Pattern[str], int], ...] = (
    # key: value
    (re.compile(rf"{_KEY_NAME}({_CLOSING})?:\s*({_QUOTE}?)({_SECRET})(\3)", re.I), 4),
    # "value" == key
    (re.compile(rf"({_QUOTE})((?=\w)(?:(?!\1)[^\v'\"])*[^\v,'\"`])(\1)\s*[!=]{{2,3}}\s*"
                rf"\w{{0,100}}({_DENYLIST})\w*+"), 2),
    # key = value, key == value, key !== value
    (re.compile(rf"{_KEY_NAME}({_CLOSING})?\s*(={{1,3}}|!==?)\s*({_QUOTE}?)({_SECRET})(\4)",
                re.I), 5),
    # key …"value";
    (re.compile(rf"{_KEY_NAME}[^\s]{{0,50}}?\s*({_QUOTE})({_SECRET})(\2);", re.I), 3),
    # key: "value"
    (re.compile(rf"{_KEY_NAME}({_CLOSING})?:(\s*)({_QUOTE})({_SECRET})(\4)", re.I), 5),
    # key = "value"
    (re.compile(rf"{_KEY_NAME}({_CLOSING})?\s*(={{1,3}}|!==?)\s*({_QUOTE})({_SECRET})(\4)",
                re.I), 5),
    # key => "value"
    (re.compile(rf"{_KEY_NAME}({_CLOSING})?\s*=>?\s*({_QUOTE})({_SECRET})(\3)", re.I), 4),
)

# Three of detect-secrets' plugin expressions, rewritten to run in linear time: theirs
# rescan the rest of a run from every "eyJ", "//" or "sk-" in it (quadratic: a minute for
# 60 KB of "//"). Same findings on real tokens; bounded where a part was unbounded: a JWT
# header of at most 4,096 characters, at most 256 between "sk-" and OpenAI's marker.
LINEAR_DENYLISTS: dict[str, list[re.Pattern[str]]] = {
    "JSON Web Token": [re.compile(
        r"eyJ[A-Za-z0-9\-_=]{1,4096}+\.[A-Za-z0-9\-_=]+\.?[A-Za-z0-9\-_.+/=]*?")],
    # the first "//" of a line stands for every later one (`.` stays on the line)
    "NPM tokens": [re.compile(
        r"^(?>[^\n]*?\/\/).+\/:_authToken=\s*((npm_.+)|([A-Fa-f0-9-]{36})).*", re.M)],
    "OpenAI Token": [re.compile(
        r"sk-[A-Za-z0-9\-_]{0,256}[A-Za-z0-9]{20}T3BlbkFJ[A-Za-z0-9]{20}")],
}
