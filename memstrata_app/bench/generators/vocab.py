"""Name pools the generators draw from: services, functions, packages, settings."""

from __future__ import annotations

SERVICES = [
    "auth", "billing", "search", "inventory", "payments", "notification", "ledger", "catalog",
    "shipping", "analytics", "gateway", "profile", "session", "reporting", "media", "export",
    "audit", "scheduler", "checkout", "pricing", "recommendation", "geocoding", "upload",
    "thumbnail", "email", "sms", "webhook", "metrics", "tracing", "feature-flag", "identity",
    "invoice", "refund", "subscription", "cart", "review", "loyalty", "fraud", "tax",
    "warehouse", "routing", "dispatch", "onboarding", "consent", "document", "translation",
    "comment", "moderation", "chat", "presence", "calendar", "booking", "ticketing", "survey",
    "crawler", "indexer", "ranking", "quota", "license", "backup", "archive", "sync",
]

NOUNS = [
    "user", "order", "invoice", "token", "session", "report", "payment", "account", "cart",
    "product", "shipment", "customer", "message", "ticket", "document", "event", "batch",
    "profile", "comment", "review", "coupon", "refund", "schedule", "webhook", "upload",
    "thumbnail", "subscription", "address", "contract", "credential", "snapshot", "metric",
]

VERBS = ["fetch", "load", "get", "read", "parse", "build", "sync", "validate", "render",
         "export", "resolve", "lookup", "compute", "create", "update", "archive", "send"]

MODULE_DIRS = ["app", "src", "lib", "core", "services", "internal", "pkg", "server"]
MODULE_SUBS = ["utils", "helpers", "domain", "handlers", "models", "repository", "api",
               "common", "io", "adapters", "workers", "jobs"]

PARAMS = ["timeout", "retries", "session", "cache", "limit", "offset", "verbose", "strict",
          "locale", "page", "dry_run", "force", "batch_size", "callback", "headers", "client",
          "context", "fields", "since", "tenant_id"]

PACKAGES = [
    "requests", "flask", "django", "numpy", "pandas", "pydantic", "sqlalchemy", "fastapi",
    "uvicorn", "httpx", "celery", "boto3", "pytest", "black", "ruff", "mypy", "jinja2",
    "click", "rich", "typer", "attrs", "pyyaml", "lxml", "pillow", "scipy", "matplotlib",
    "cryptography", "paramiko", "alembic", "gunicorn", "starlette", "aiohttp", "orjson",
    "marshmallow", "pendulum", "tqdm", "loguru", "structlog", "sentry-sdk", "psycopg2",
    "pymongo", "elasticsearch", "grpcio", "protobuf", "tenacity", "react", "express", "lodash",
    "axios", "webpack", "typescript", "eslint", "jest", "vite", "next", "prettier", "redux",
    "moment", "dayjs", "zod", "prisma", "vitest", "tailwindcss", "esbuild", "rollup",
    "mocha", "chai", "sinon", "nodemon", "dotenv", "cors", "helmet", "winston", "pino",
    "knex", "sequelize", "mongoose", "graphql", "apollo-server", "socket.io", "serde",
    "tokio", "reqwest", "clap", "anyhow", "thiserror", "hyper", "axum", "rayon", "regex",
]

ENVS = [("staging", "production"), ("eu", "us"), ("primary", "replica"), ("web", "mobile"),
        ("internal", "public"), ("blue", "green"), ("canary", "stable"), ("batch", "realtime")]

LANGS = ["Go", "Rust", "Python", "TypeScript", "Kotlin", "Java", "Elixir", "Scala", "Ruby",
         "C#", "Haskell", "Clojure", "Swift", "PHP", "OCaml", "Zig", "Crystal", "Erlang"]
PLATFORMS = ["Kubernetes", "ECS", "Nomad", "Heroku", "Fly.io", "Cloud Run", "Lambda", "Render",
             "Railway", "OpenShift", "DigitalOcean", "Vercel", "Netlify", "Azure Functions"]
TEAMS = ["platform", "growth", "core", "infra", "data", "mobile", "web", "security",
         "payments", "search", "devex", "reliability", "identity", "commerce"]
BACKINGS = ["Redis", "Postgres", "Kafka", "RabbitMQ", "Elasticsearch", "S3", "MySQL",
            "MongoDB", "Memcached", "ClickHouse", "DynamoDB", "Cassandra", "NATS", "etcd",
            "Vault", "Consul", "MinIO", "SQLite"]
FORMATS = ["CSV", "JSON", "Parquet", "XML", "YAML", "Avro", "PDF", "XLSX", "NDJSON", "TSV"]
