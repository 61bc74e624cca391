"""Settings declared once as data (name, default, help, check), saved as JSON in the data dir."""

from __future__ import annotations

import contextlib
import json
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

from . import paths
from .engine.ledger.files import restrict, write_private
from .engine.understand.judge import default_thresholds

log = logging.getLogger(__name__)
_JUDGE = default_thresholds()  # the thresholds measured with the shipped model


class SettingsError(ValueError):
    """An invalid value; the message says which setting and why."""


def _url(v: Any) -> str:
    u = urlparse(str(v))
    if u.scheme not in ("http", "https") or not u.hostname:
        raise ValueError("must be an http(s) URL such as http://127.0.0.1:11434")
    return str(v).rstrip("/")


def _port(v: Any) -> int:
    p = int(v)
    if not 1024 <= p <= 65535:
        raise ValueError("must be a port number between 1024 and 65535")
    return p


def _range(lo: float, hi: float, cast: Callable[[Any], Any]) -> Callable[[Any], Any]:
    def check(v: Any) -> Any:
        x = cast(v)
        if not lo <= x <= hi:
            raise ValueError(f"must be between {lo} and {hi}")
        return x

    return check


def _bool(v: Any) -> bool:
    if isinstance(v, bool):
        return v
    if str(v).lower() in ("1", "true", "yes", "on"):
        return True
    if str(v).lower() in ("0", "false", "no", "off"):
        return False
    raise ValueError("must be true or false")


def _embedder(v: Any) -> str:
    s = str(v)
    if s in ("auto", "local", "static", "static:minilm-m2v") or (
            s.startswith("ollama:") and len(s) > len("ollama:")):
        return s
    raise ValueError('must be "auto", "local", "static" or "ollama:<model>"')


def _text(v: Any) -> str:
    return str(v)


def _model(v: Any) -> str:
    """An Ollama model name ("ollama:" prefix allowed), or empty for off."""
    s = str(v).strip()
    s = s[len("ollama:"):] if s.startswith("ollama:") else s
    if any(c.isspace() for c in s):
        raise ValueError("must be an Ollama model name such as qwen2.5:7b, or empty for off")
    return s


def _authority_order(v: Any) -> str:
    from .engine.governance.authority import parse_authority_order

    return " > ".join(parse_authority_order(str(v)))


def _retention(v: Any) -> str:
    from .engine.governance.retention import parse_retention

    parse_retention(str(v))
    return str(v).strip()


def apply_governance(engine: Any, settings: Any) -> None:
    """The settings' authority order, retention rules and retrieval mode, in force on
    `engine`."""
    from .engine.governance.authority import parse_authority_order
    from .engine.governance.retention import parse_retention

    engine.authority_order = parse_authority_order(str(settings.get("authority_order")))
    engine.retention = parse_retention(str(settings.get("retention")))
    engine.hybrid = settings.get("retrieval") == "hybrid"
    apply_judge(engine, settings)


def apply_judge(engine: Any, settings: Any) -> None:
    """The `update_judge` backend and its thresholds, in force on `engine`. An Ollama judge
    that does not answer leaves the built-in one in place (and says so in the log)."""
    from .engine.types import EngineError
    from .engine.understand.judge import Thresholds

    spec = str(settings.get("update_judge"))
    if spec.startswith("ollama:") and getattr(engine.judge, "name", None) == spec:
        pass  # already in force
    else:
        try:
            engine.use_judge(spec)
        except EngineError as e:
            log.warning("update judge %s unavailable (%s); using the built-in judge", spec, e)
            engine.use_judge("builtin")
    engine.judge_thresholds = Thresholds(float(settings.get("judge_supersede")),
                                         float(settings.get("judge_review")),
                                         float(settings.get("judge_veto")),
                                         float(settings.get("judge_relate")),
                                         float(settings.get("judge_one_sided")))


def _judge_backend(v: Any) -> str:
    s = str(v).strip()
    if s in ("builtin", "off") or (s.startswith("ollama:") and len(s) > len("ollama:")):
        return s
    raise ValueError('must be "builtin" (the shipped model), "off" (the rules alone) or'
                     ' "ollama:MODEL"')


def _retrieval(v: Any) -> str:
    s = str(v).strip().lower()
    if s not in ("hybrid", "vector"):
        raise ValueError('must be "hybrid" (exact terms and meaning) or "vector" (meaning only)')
    return s


def _ledger(v: Any) -> str:
    """Empty (the data folder's ledger), a file path, or a PostgreSQL URI without a password
    (settings.json is not a place for one: ~/.pgpass or PGPASSWORD hold it)."""
    s = str(v).strip()
    if s.startswith(("postgresql://", "postgres://")):
        netloc = s.split("://", 1)[1].split("/", 1)[0]
        if "@" in netloc and ":" in netloc.rsplit("@", 1)[0]:
            raise ValueError("must not hold a password: keep it in ~/.pgpass or PGPASSWORD "
                             "(the URI here is stored in plain text)")
    return s


def ledger_location(override: str | Path | None = None) -> Path | str:
    """The ledger to open: `override` (--db), else the `ledger` setting, else the data
    folder's memstrata.db. A PostgreSQL URI stays a string; a file becomes a Path."""
    raw = str(override) if override not in (None, "") else str(Settings.load()["ledger"])
    if not raw:
        return paths.db_path()
    if raw.startswith(("postgresql://", "postgres://")):
        return raw
    return Path(raw).expanduser()


@dataclass(frozen=True)
class Setting:
    name: str
    default: Any
    help: str
    check: Callable[[Any], Any]


SETTINGS: tuple[Setting, ...] = (
    Setting("ollama_url", "http://127.0.0.1:11434",
            "Upstream Ollama server the endpoint forwards to (OLLAMA_HOST overrides).", _url),
    Setting("chat_model", "", "Default model for tests from the app (empty: the tool chooses).",
            _text),
    Setting("ledger", "",
            "The ledger: empty for memstrata.db in the data folder, another file, or a team "
            "ledger's postgresql://user@host:port/db (password in ~/.pgpass or PGPASSWORD).",
            _ledger),
    Setting("embedder", "local",
            'Embedder for the ledger: "local", "static", "auto" or "ollama:<model>".',
            _embedder),
    Setting("endpoint_port", 11435, "Port the local endpoint listens on (127.0.0.1 only).", _port),
    Setting("retrieval", "hybrid",
            'How facts are found: "hybrid" (exact terms such as parse_cfg or 8443, fused with '
            'the embedding\'s meaning) or "vector" (the embedding alone).', _retrieval),
    Setting("injection_k", 5, "How many current facts are injected into each request.",
            _range(1, 50, int)),
    Setting("injection_min_score", 0.2,
            "Facts less similar than this to the message are left out of the block "
            "(0 always injects the top k).", _range(0.0, 1.0, float)),
    Setting("ingest_assistant_turns", False,
            "Also remember what the assistant says (default: user turns only).", _bool),
    Setting("memory_enabled", True, "Inject memory into requests (off: pure pass-through).",
            _bool),
    Setting("quarantine_threshold", 0.6,
            "Extractions below this confidence wait in the review queue.",
            _range(0.0, 1.0, float)),
    Setting("extraction_model", "",
            "Ollama model that, in the background, structures what the rules can't and judges "
            "whether new prose updates a close fact; its claims wait in review (empty: off).",
            _model),
    Setting("judge_threshold", 0.8,
            "New prose at least this similar (cosine) to an active fact is put to the "
            "extraction model as a possible update of it.", _range(0.0, 1.0, float)),
    Setting("update_judge", "builtin",
            'What decides that a new statement updates an older one where the rules cannot: '
            '"builtin" (the shipped model, on the CPU), "off" (the rules alone) or '
            '"ollama:MODEL" (your Ollama model, on your GPU).', _judge_backend),
    Setting("judge_supersede", _JUDGE.supersede,
            "The judge retires an older fact when it is at least this sure the new statement"
            " updates it (measured for precision on held-out writers).",
            _range(0.5, 1.0, float)),
    Setting("judge_review", _JUDGE.review,
            "Between this and the retire threshold, the statement waits in the review queue"
            " showing the fact it would retire.", _range(0.0, 1.0, float)),
    Setting("judge_veto", _JUDGE.veto,
            "A rule retirement the judge reads as compatible at least this surely goes to"
            " review instead.", _range(0.5, 1.0, float)),
    Setting("judge_relate", _JUDGE.relate,
            "The judge acts only on sentences at least this close (cosine of their vectors):"
            " a sure reading between two unrelated sentences is not evidence of an update.",
            _range(0.0, 1.0, float)),
    Setting("judge_one_sided", _JUDGE.one_sided,
            "The judge acts only when the older sentence, read beside sentences about nothing,"
            " reads as updated at most this surely (its own words tell of a change).",
            _range(0.0, 1.0, float)),
    Setting("audit_log_days", 30,
            "Days the injection log keeps each served request (which facts were injected, "
            "which were left out as stale); 0 keeps no log.", _range(0, 3650, int)),
    Setting("authority_order", "reviewer > user > import > tool > assistant",
            "Whose statement may retire whose value on its own, highest first; a lower one "
            "goes to review.", _authority_order),
    Setting("retention", "assistant=90d",
            "Retention rules: AUTHORITY[/LABEL]=DAYSd[:retire|purge], comma-separated; an "
            "unconfirmed row past its days is retired (or purged); empty keeps everything.",
            _retention),
    Setting("start_at_login", False, "Start MemStrata when you log in.", _bool),
    Setting("start_endpoint", True, "Start the local endpoint when the app starts.", _bool),
)
BY_NAME = {s.name: s for s in SETTINGS}


class Settings:
    """Validated settings backed by a JSON file; unknown keys in the file are ignored."""

    def __init__(self, path: Path | None = None, values: dict[str, Any] | None = None):
        self.path = path
        self._values = {s.name: s.default for s in SETTINGS}
        for k, v in (values or {}).items():
            if k in BY_NAME:
                self._values[k] = BY_NAME[k].check(v)

    @classmethod
    def load(cls, path: Path | None = None) -> Settings:
        if path is None:
            path = paths.settings_path()
            restrict(path)  # an older install's 0644 file
        values: dict[str, Any] = {}
        if path.exists():
            try:
                values = json.loads(path.read_text("utf-8"))
            except (OSError, json.JSONDecodeError):
                values = {}
        s = cls(path)
        for k, v in values.items():
            if k in BY_NAME:
                with contextlib.suppress(TypeError, ValueError):  # bad saved value: default
                    s._values[k] = BY_NAME[k].check(v)
        return s

    def get(self, name: str) -> Any:
        if name == "ollama_url" and os.environ.get("OLLAMA_HOST"):
            return ollama_host_url(os.environ["OLLAMA_HOST"])
        return self._values[name]

    def __getitem__(self, name: str) -> Any:
        return self.get(name)

    def set(self, name: str, value: Any) -> Any:
        """Validate and store one value; raises SettingsError with the reason."""
        if name not in BY_NAME:
            raise SettingsError(f"unknown setting {name!r}")
        try:
            checked = BY_NAME[name].check(value)
        except (TypeError, ValueError) as e:
            raise SettingsError(f"{name}: {e}") from None
        self._values[name] = checked
        return checked

    def as_dict(self) -> dict[str, Any]:
        return dict(self._values)

    def save(self) -> None:
        if self.path is None:
            return
        self.path.parent.mkdir(parents=True, exist_ok=True)
        # owner-only from creation, replaced atomically: it may name a team ledger's server
        write_private(self.path, json.dumps(self._values, indent=2, sort_keys=True).encode())


def ollama_host_url(value: str) -> str:
    """Turn an OLLAMA_HOST value (`host`, `host:port`, or a URL) into a base URL."""
    v = value.strip()
    if "://" not in v:
        if v.count(":") > 1 and not v.startswith("["):  # a bare IPv6 address
            v = f"[{v}]"
        v = "http://" + v
    u = urlparse(v)
    host = u.hostname or "127.0.0.1"
    if host == "0.0.0.0":
        host = "127.0.0.1"
    port = u.port or 11434
    if ":" in host:
        host = f"[{host}]"
    return f"{u.scheme}://{host}:{port}"


def start_extraction(engine: Any, settings: Settings) -> bool:
    """Turn on the engine's Ollama tier when `extraction_model` is set (endpoint and app)."""
    model = settings.get("extraction_model")
    if not model:
        return False
    return bool(engine.enable_llm_tier(model, host=settings.get("ollama_url"),
                                       judge_threshold=settings.get("judge_threshold")))
