"""nekomem settings: the one place that reads the environment.

Every variable is documented in README.md. Nothing here needs to be set for the embedded default
(SQLite under ``var/`` and django-q2's ORM broker).
"""

from __future__ import annotations

import os
import secrets
import time
from pathlib import Path
from typing import Any

import dj_database_url
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(os.environ.get("NEKOMEM_VAR_DIR", BASE_DIR / "var"))
VAR_DIR.mkdir(parents=True, exist_ok=True)
# The public knowledge store's files (registry.json + packs/) when standalone; an install's knowledge/.
NEKOMEM_KNOWLEDGE_DIR = Path(os.environ.get("NEKOMEM_KNOWLEDGE_DIR", VAR_DIR / "knowledge"))


def env_bool(name: str, default: bool) -> bool:
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    return raw.strip().lower() in {"1", "true", "yes", "on"}


def env_int(name: str, default: int) -> int:
    raw = os.environ.get(name, "").strip()
    return int(raw) if raw else default


def env_choice(name: str, choices: tuple[str, ...], default: str) -> str:
    """One of ``choices`` (case-insensitive); unset or empty gives ``default``. Anything else stops
    the start: a misspelt value silently read as the default would change behaviour unseen."""
    raw = os.environ.get(name, "").strip()
    if not raw:
        return default
    if raw.lower() not in choices:
        raise ImproperlyConfigured(f"{name}={raw!r}: expected one of {', '.join(choices)}")
    return raw.lower()


def _generated_secret(file_name: str) -> str:
    """A random secret kept under var/, created once by whichever process gets there first.

    Every HTTP worker and the cluster read the same file, so the create is exclusive: a second
    process that loses the race reads the winner's value instead of writing its own.
    """
    path = VAR_DIR / file_name
    try:
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        pass
    else:
        with os.fdopen(descriptor, "w") as handle:
            handle.write(secrets.token_urlsafe(48))
    for _ in range(50):
        value = path.read_text().strip()
        if value:
            return value
        time.sleep(0.01)  # the creator has the file open but has not written yet
    raise RuntimeError(f"{path} is empty: delete it and start again")


# Generated keys live under var/ so sessions and health signatures survive restarts.
SECRET_KEY = os.environ.get("NEKOMEM_SECRET_KEY") or _generated_secret("secret_key")
DEBUG = env_bool("NEKOMEM_DEBUG", False)
NEKOMEM_HOST = os.environ.get("NEKOMEM_HOST", "127.0.0.1")


def env_list(name: str) -> list[str]:
    return [item.strip() for item in os.environ.get(name, "").split(",") if item.strip()]


# Only names that resolve to this machine are served, plus whatever the operator lists: a page
# whose DNS name is rebound to 127.0.0.1 still sends its own name as Host and is refused.
LOOPBACK_HOST_NAMES = ["127.0.0.1", "localhost", "[::1]", "::1"]
_bound_host = [NEKOMEM_HOST] if NEKOMEM_HOST not in {"0.0.0.0", "::", ""} else []
ALLOWED_HOSTS = list(dict.fromkeys([*LOOPBACK_HOST_NAMES, *_bound_host, *env_list("NEKOMEM_ALLOWED_HOSTS")]))
# Browser origins other than the server's own that may send requests (e.g. a chat UI on another
# port). Every other Origin is refused, so no web page can write or read the memory.
NEKOMEM_ALLOWED_ORIGINS = env_list("NEKOMEM_ALLOWED_ORIGINS")
CSRF_TRUSTED_ORIGINS = NEKOMEM_ALLOWED_ORIGINS
NEKOMEM_PORT = env_int("NEKOMEM_PORT", 48912)
NEKOMEM_WORKERS = env_int("NEKOMEM_WORKERS", 2)  # HTTP server processes
NEKOMEM_THREADS = env_int("NEKOMEM_THREADS", 8)  # view threads per process
# The shared secret for non-loopback clients and for the internal routes (storage control,
# shutdown, reload), which need it even on loopback. Generated when unset, so `make run` stays
# zero-configuration: the chat server reads var/api_token or both get NEKOMEM_API_TOKEN.
NEKOMEM_API_TOKEN = os.environ.get("NEKOMEM_API_TOKEN") or _generated_secret("api_token")
NEKOMEM_MAX_BODY_BYTES = env_int("NEKOMEM_MAX_BODY_BYTES", 8 * 1024 * 1024)
# The one body limit is ours (BodySizeLimitMiddleware, chunked bodies included); Django's own, 2.5 MiB
# by default, fired first and turned a body under ours into an error after the view had started.
DATA_UPLOAD_MAX_MEMORY_SIZE = None
NEKOMEM_ALLOW_SHUTDOWN = env_bool("NEKOMEM_ALLOW_SHUTDOWN", False)
NEKOMEM_DEFAULT_LANGUAGE = os.environ.get("NEKOMEM_LANGUAGE", "zh")
# Install mode: the N.E.K.O. install's folder (the one holding config/ and memory/). Unset: standalone.
_neko_root = os.environ.get("NEKOMEM_NEKO_ROOT", "").strip()
NEKOMEM_NEKO_ROOT: Path | None = Path(_neko_root).expanduser().resolve() if _neko_root else None
# The original launcher's environment: one id per launch (``/health`` answers it, so the launcher can
# tell its own memory server from a stranger on the port) and the control routes' token (its
# X-CSRF-Token), which falls back to the instance id when the launcher sets none (reference §12).
NEKO_INSTANCE_ID = os.environ.get("NEKO_INSTANCE_ID", "").strip()
NEKO_AUTOSTART_CSRF_TOKEN = os.environ.get("NEKO_AUTOSTART_CSRF_TOKEN", "").strip()

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_q",
    "nekomem.characters",
    "nekomem.journal",
    "nekomem.runtime",
    "install",
    "groupchat.identity",
    "recent",
    "facts",
    "reflections",
    "persona",
    "recall",
    "history",
    "groupchat",
    "imports",
    "knowledge",
    "mcp_server",
]

MIDDLEWARE = [
    # Background work of this process that can wait pauses for the requests it counts.
    "nekomem.runtime.foreground.ForegroundRequestMiddleware",
    "nekomem.runtime.middleware.JsonErrorBodyMiddleware",
    "nekomem.runtime.middleware.HostGuardMiddleware",
    "nekomem.runtime.middleware.BodySizeLimitMiddleware",
    "nekomem.runtime.middleware.CrossSiteGuardMiddleware",
    "nekomem.runtime.middleware.ClientAccessMiddleware",
    "nekomem.runtime.middleware.JsonBodyMiddleware",
    "nekomem.runtime.middleware.RestrictedModeMiddleware",
    "install.middleware.InstallSyncMiddleware",
    "nekomem.journal.causes.ChangeCauseMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
]

ROOT_URLCONF = "nekomem.urls"
WSGI_APPLICATION = "nekomem.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "nekomem.browser.context.browser_frame",
            ],
            # ``|local_time`` in every template: the browser shell's times in the reader's zone.
            "builtins": ["nekomem.browser.templatetags.local_time"],
        },
    }
]

_default_sqlite = f"sqlite:///{VAR_DIR / 'nekomem.sqlite3'}"
DATABASE_URL = os.environ.get("DATABASE_URL", _default_sqlite)
_db: dict[str, Any] = dict(dj_database_url.parse(DATABASE_URL, conn_max_age=60))
IS_SQLITE = _db["ENGINE"].endswith("sqlite3")
if IS_SQLITE:
    # Persistent connections, as on PostgreSQL: opening one costs a connect plus the PRAGMAs below,
    # and with CONN_MAX_AGE 0 a /cache opened up to three (the ORM broker closes "old" connections
    # on every enqueue), about half of its CPU time (bench/cache_throughput.py).
    _db["CONN_MAX_AGE"] = 60
    # Django's SQLite backend, with each write transaction queued for its turn in the kernel
    # instead of polling in SQLite's busy handler (nekomem/sqlite_backend/base.py).
    _db["ENGINE"] = "nekomem.sqlite_backend"
    _db["OPTIONS"] = {
        # Every write transaction takes SQLite's write lock at BEGIN: this is the per-character
        # lock on the embedded default (see nekomem/characters/locks.py).
        "transaction_mode": "IMMEDIATE",
        "timeout": 30,
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; PRAGMA busy_timeout=30000; "
        "PRAGMA secure_delete=ON;",  # a deleted row's bytes are zeroed in the file, not left in free pages
    }
    _db["TEST"] = {"NAME": str(VAR_DIR / f"test_{os.getpid()}.sqlite3")}
elif _db["ENGINE"].endswith("postgresql"):
    _db["OPTIONS"] = {
        **_db.get("OPTIONS", {}),
        # Parameters go to the server instead of being quoted into the SQL text in Python (the
        # default client-side binding spent about a sixth of a /cache request's CPU quoting the
        # bulk inserts' arrays), and a statement run five times on a connection is prepared, so
        # the server stops parsing and planning the write path's few statements on every turn.
        "server_side_binding": True,
        "prepare_threshold": 5,
    }
DATABASES = {"default": _db}
# Whose clock stamps the raw log on PostgreSQL, where a chat turn is one statement: "database" (the
# statement reads the database's clock after its locks, so stamps stay in write order across app
# servers whose clocks disagree) or "server" (this process's clock, as on SQLite: for a simulated
# clock, bench/years.py). SQLite always uses the server's clock.
NEKOMEM_RAW_LOG_CLOCK = env_choice("NEKOMEM_RAW_LOG_CLOCK", ("database", "server"), "database")
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = os.environ.get("REDIS_URL", "")
Q_CLUSTER: dict[str, Any] = {
    # The Redis queue key is derived from the name: two deployments (or test runs) sharing one Redis
    # database need distinct names, or each cluster runs the other's tasks against the wrong store.
    "name": os.environ.get("NEKOMEM_Q_NAME", "nekomem"),
    "workers": env_int("NEKOMEM_Q_WORKERS", 2),
    "timeout": 300,
    "retry": 360,
    "max_attempts": 1,
    "ack_failures": True,
    "save_limit": 500,
    "catch_up": False,
    "label": "Background tasks",
    "poll": 0.5,
    # A worker process is replaced after this many tasks. Each replacement costs a fork, a new
    # database session and cold caches; with an op per chat turn, django-q2's default of 500 meant a
    # new worker every few seconds under load.
    "recycle": env_int("NEKOMEM_Q_RECYCLE", 20_000),
}
if REDIS_URL:
    Q_CLUSTER["redis"] = REDIS_URL
else:
    Q_CLUSTER["orm"] = "default"
if env_bool("NEKOMEM_Q_SYNC", False):
    Q_CLUSTER["sync"] = True
# Outbox ops committed within this window are enqueued as one task (nekomem/journal/dispatch.py).
NEKOMEM_OUTBOX_BATCH_MS = env_int("NEKOMEM_OUTBOX_BATCH_MS", 50)

# LLM tiers (reference §7). A tier without its own settings falls back to the summary tier's.
LLM_TIER_NAMES = ("summary", "correction", "emotion")


def _llm_tier(tier: str) -> dict[str, str]:
    """A tier's own provider, or the summary tier's as a whole.

    The fallback is by whole entry, never key by key: a tier with its own base URL but no key must
    not send the summary provider's key to another host.
    """
    own = f"NEKOMEM_LLM_{tier.upper()}_"
    prefix = own if os.environ.get(own + "BASE_URL") else "NEKOMEM_LLM_SUMMARY_"
    entry = {key: os.environ.get(prefix + key.upper(), "") for key in ("base_url", "api_key", "model")}
    entry["thinking_style"] = os.environ.get(prefix + "THINKING_STYLE", "both")
    return entry


LLM_TIERS = {tier: _llm_tier(tier) for tier in LLM_TIER_NAMES}
LLM_BACKGROUND_TIMEOUT_SECONDS = float(os.environ.get("NEKOMEM_LLM_TIMEOUT", "110"))
LLM_RETRY_BASE_DELAY_SECONDS = float(os.environ.get("NEKOMEM_LLM_RETRY_BASE_DELAY", "1"))
LLM_RETRY_AFTER_MAX_SECONDS = float(os.environ.get("NEKOMEM_LLM_RETRY_AFTER_MAX", "10"))

# Local embeddings (optional at run time).
EMBEDDINGS_ENABLED = env_bool("NEKOMEM_EMBEDDINGS", True)
EMBEDDING_MODEL_DIR = Path(os.environ.get("NEKOMEM_MODEL_DIR", BASE_DIR / "var" / "models"))
# Recall indexes saved after a build, so a restarted worker loads one instead of rebuilding ("" = off).
# How long the journal keeps every version of a memory row (issue 49); the last few versions of a live
# row stay whatever their age (``nekomem.journal.compaction.HISTORY_KEEP_VERSIONS``).
HISTORY_RETENTION_DAYS = max(1, int(os.environ.get("NEKOMEM_HISTORY_RETENTION_DAYS", "90")))
RECALL_SNAPSHOT_DIR = os.environ.get("NEKOMEM_RECALL_SNAPSHOT_DIR", str(VAR_DIR / "recall-index"))
# How long a query waits for its character's index to be built (after an import: tens of seconds at
# 100k rows) before it answers with no results and ``error_code: recall_index_building``; the build goes
# on in the background. Unset (tests): the query builds inline and waits for it.
RECALL_BUILD_WAIT_SECONDS: float | None = float(os.environ.get("NEKOMEM_RECALL_BUILD_WAIT_SECONDS", "2"))
# How long a starting worker waits, before it serves, for the embedding model whose load it started
# first (it loads in ~0.4 s alone, 2-8 s when every worker loads at once on a busy 2-core machine, beside
# the URLconf import and the saved indexes' loads). A character's first answer after a restart should be
# as good as its warm one (issue 50: a query ranked by BM25 alone while the model loaded lost
# MemoryBank-cn a probe in ten), so the model is loaded before the first request, not waited for inside
# one. Bounded: a model that takes longer does not keep the worker from serving.
EMBEDDING_LOAD_BEFORE_SERVING_SECONDS = float(
    os.environ.get("NEKOMEM_EMBEDDING_LOAD_BEFORE_SERVING_SECONDS", "30")
)
# How long a query waits for the model when it is still loading (a worker whose load outlasted the wait
# above, a process that loads it on first use) before it answers from the same index by BM25 alone
# (``explain``: ``"vectors": "loading"``): a chat query never waits more than this for it. Unset
# (tests): it waits for the load.
RECALL_MODEL_WAIT_SECONDS: float | None = float(os.environ.get("NEKOMEM_RECALL_MODEL_WAIT_SECONDS", "1"))
# How long the thread that fills a recall index's new vectors keeps its database connection once it has
# nothing to fill (tests: none, so the test database can be dropped at the end).
RECALL_VECTOR_FILLER_IDLE_SECONDS = 30.0
# Chat turns embedded by the worker that cached them, as they arrive (found by meaning within a second,
# not at the backfill's next tick); off: the backfill's schedule embeds them. Tests: off, but where a
# test turns it on (its thread has a connection of its own).
RECALL_EMBED_TURNS_ON_ARRIVAL = env_bool("NEKOMEM_RECALL_EMBED_ON_ARRIVAL", True)
EMBEDDING_PROFILE = os.environ.get("NEKOMEM_EMBEDDING_PROFILE", "")  # empty: the default profile
EMBEDDING_THREADS = env_int("NEKOMEM_EMBEDDING_THREADS", 0)  # 0: automatic
# /api/v1/status/ counts the rows with and without a vector over whole tables (seconds at 10 M facts):
# a worker answers from its last count this many seconds old at most.
STATUS_VECTOR_COUNTS_TTL = env_int("NEKOMEM_STATUS_VECTOR_COUNTS_TTL", 60)

LANGUAGE_CODE = "en-us"
TIME_ZONE = os.environ.get("NEKOMEM_TIME_ZONE", os.environ.get("TZ", "UTC")) or "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"

REST_FRAMEWORK = {
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "nekomem.api.exception_handler",
    "DEFAULT_PAGINATION_CLASS": "rest_framework.pagination.LimitOffsetPagination",
    "PAGE_SIZE": 100,
    "DEFAULT_AUTHENTICATION_CLASSES": [],
    "DEFAULT_PERMISSION_CLASSES": [],
    "UNAUTHENTICATED_USER": None,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "nekomem",
    "VERSION": "0.1.0",
    # The docs page's scripts come with the server (drf-spectacular-sidecar), so it works offline.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    # The memory-server routes are plain views; their description is added here (nekomem/wire_schema.py).
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "nekomem.wire_schema.add_wire_routes",
    ],
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "formatters": {"plain": {"format": "%(asctime)s %(levelname)s %(name)s %(message)s"}},
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "plain"}},
    "root": {"handlers": ["console"], "level": os.environ.get("NEKOMEM_LOG_LEVEL", "INFO")},
    # django-q logs every enqueue and task at INFO: one line per chat turn is noise, not metadata.
    "loggers": {"django.db.backends": {"level": "WARNING"}, "django-q": {"level": "WARNING"}},
}
