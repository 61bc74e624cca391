"""The relation vocabulary: canonical relations (lowercase, ``depends_on``) with their
cardinality, synonyms, attribute words and role nouns; unlisted relations are single-valued."""

from __future__ import annotations

from ..types import Cardinality

_MULTI = (
    "depends_on", "uses", "supports", "integrates_with", "maintainer", "contains",
    "imports", "calls", "exposes", "connects_to", "reads_from", "writes_to", "member",
)
_SINGLE = (
    "value", "port", "url", "host", "version", "timeout", "ttl", "owner", "name",
    "location", "deployed_to", "region", "zone", "cluster", "database", "lead", "on_call",
    "language", "framework", "path", "default_branch", "rate_limit", "pool_size",
    "batch_size", "page_size", "log_level", "retry_limit", "size", "limit", "level", "interval",
    "threshold", "quota", "replicas", "namespace", "bucket", "queue", "topic", "image",
    "runtime", "schedule", "format", "encoding", "driver", "provider", "domain", "ip",
    "key", "id", "email", "channel", "branch", "directory", "memory", "cpu", "count",
    "capacity", "concurrency", "workers", "manager", "contact", "architect", "model",
)

DEFAULT_VOCABULARY: dict[str, Cardinality] = {
    **{r: Cardinality.SINGLE for r in _SINGLE},
    **{r: Cardinality.MULTI for r in _MULTI},
}

# Synonym phrase (lowercase, words separated by one space) -> canonical relation.
RELATION_SYNONYMS: dict[str, str] = {
    # ports
    "port": "port", "ports": "port", "port number": "port", "listens on": "port",
    "listen on": "port", "listening on": "port", "listens on port": "port",
    "runs on port": "port", "is on port": "port", "on port": "port", "uses port": "port",
    "serves on port": "port", "bound to port": "port", "binds to": "port",
    "binds to port": "port",
    # urls and endpoints
    "url": "url", "urls": "url", "uri": "url", "endpoint": "url", "endpoints": "url",
    "base url": "url", "base uri": "url", "api url": "url", "api endpoint": "url",
    "is at": "url", "lives at": "url", "served at": "url", "available at": "url",
    "reachable at": "url", "link": "url", "address": "url",
    # hosts
    "host": "host", "hostname": "host", "host name": "host", "server": "host",
    # versions
    "version": "version", "versions": "version", "is on": "version", "on": "version",
    "pinned to": "version", "pinned at": "version", "at version": "version",
    "bumped to": "version", "upgraded to": "version", "downgraded to": "version",
    "is on version": "version", "release": "version",
    # ownership and roles
    "owner": "owner", "owners": "owner", "owned by": "owner", "owns": "owner",
    "maintained by": "owner", "maintains": "owner", "belongs to": "owner",
    "owning team": "owner", "product owner": "owner",
    "maintainer": "maintainer", "maintainers": "maintainer",
    "lead": "lead", "tech lead": "lead", "team lead": "lead", "technical lead": "lead",
    "engineering lead": "lead", "led by": "lead",
    "on call": "on_call", "oncall": "on_call", "on call engineer": "on_call",
    "manager": "manager", "engineering manager": "manager", "em": "manager",
    "point of contact": "contact", "contact": "contact", "dri": "owner",
    "directly responsible individual": "owner",
    # deployment
    "deployed to": "deployed_to", "deployed on": "deployed_to", "deployed in": "deployed_to",
    "deployed at": "deployed_to", "deploy to": "deployed_to", "deploys to": "deployed_to",
    "runs in": "deployed_to", "runs on": "deployed_to", "running in": "deployed_to",
    "running on": "deployed_to", "hosted on": "deployed_to", "hosted in": "deployed_to",
    "hosted at": "deployed_to", "lives in": "deployed_to", "lives on": "deployed_to",
    "deployment": "deployed_to", "deployment target": "deployed_to",
    "is deployed to": "deployed_to", "deployed_to": "deployed_to",
    # multi-valued
    "depends on": "depends_on", "depend on": "depends_on", "dependency": "depends_on",
    "dependencies": "depends_on", "requires": "depends_on", "require": "depends_on",
    "needs": "depends_on", "relies on": "depends_on", "rely on": "depends_on",
    "dependent on": "depends_on", "depends_on": "depends_on", "deps": "depends_on",
    "uses": "uses", "use": "uses", "using": "uses", "built with": "uses",
    "supports": "supports", "support": "supports", "compatible with": "supports",
    "integrates with": "integrates_with", "integrate with": "integrates_with",
    "integration": "integrates_with", "integrations": "integrates_with",
    "contains": "contains", "includes": "contains", "imports": "imports",
    "calls": "calls", "exposes": "exposes", "connects to": "connects_to",
    "talks to": "connects_to", "reads from": "reads_from", "writes to": "writes_to",
    # authentication
    "auth": "auth", "authentication": "auth", "authentication scheme": "auth",
    "auth scheme": "auth", "authentication method": "auth", "auth method": "auth",
    "authentication mechanism": "auth", "auth mechanism": "auth", "authorization scheme": "auth",
    # names and locations
    "name": "name", "renamed to": "name", "now called": "name", "called": "name",
    "named": "name", "known as": "name", "is now called": "name", "new name": "name",
    "location": "location", "moved to": "location", "located in": "location",
    "located at": "location", "module path": "location",
    # generic values
    "value": "value", "is": "value", "are": "value", "=": "value", "==": "version",
    ":": "value", "equals": "value", "set to": "value", "is set to": "value",
    "changed to": "value", "is now": "value",
    # common configuration attributes
    "timeout": "timeout", "time out": "timeout", "timeouts": "timeout",
    "ttl": "ttl", "time to live": "ttl", "expiry": "ttl", "expiration": "ttl",
    "region": "region", "zone": "zone", "availability zone": "zone", "cluster": "cluster",
    "database": "database", "db": "database", "datastore": "database",
    "language": "language", "programming language": "language",
    "framework": "framework", "path": "path", "file path": "path", "directory": "directory",
    "dir": "directory", "folder": "directory",
    "default branch": "default_branch", "main branch": "default_branch",
    "rate limit": "rate_limit", "ratelimit": "rate_limit", "rate limits": "rate_limit",
    "pool size": "pool_size", "batch size": "batch_size", "log level": "log_level",
    "logging level": "log_level", "retry limit": "retry_limit",
    "replica count": "replicas", "replicas": "replicas", "worker count": "workers",
}

# Attribute words that turn a noun phrase "<owner> <attribute>" into (owner, attribute).
# Single words are matched on the last word of a key phrase.
ATTRIBUTE_WORDS: dict[str, str] = {
    w: RELATION_SYNONYMS.get(w, w)
    for w in (
        "port", "timeout", "url", "uri", "endpoint", "version", "host", "hostname", "region",
        "zone", "owner", "ttl", "limit", "size", "level", "path", "directory", "dir",
        "database", "db", "name", "lead", "language", "framework", "branch", "interval",
        "threshold", "quota", "capacity", "replicas", "address", "ip", "domain",
        "namespace", "bucket", "cluster", "queue", "topic", "image", "runtime", "schedule",
        "format", "encoding", "driver", "provider", "maintainer", "maintainers", "oncall",
        "manager", "contact", "architect", "id", "email", "channel", "memory", "count",
        "concurrency", "location", "model", "partitions", "shards", "nodes",
    )
}

# Two- and three-word attributes, matched before single words.
COMPOUND_ATTRIBUTES: dict[str, str] = {
    "rate limit": "rate_limit", "base url": "url", "base uri": "url", "api url": "url",
    "pool size": "pool_size", "batch size": "batch_size", "log level": "log_level",
    "logging level": "log_level", "retry limit": "retry_limit", "page size": "page_size",
    "ip address": "ip", "default branch": "default_branch", "main branch": "default_branch",
    "tech lead": "lead", "team lead": "lead", "technical lead": "lead",
    "engineering lead": "lead", "on call": "on_call", "product owner": "owner",
    "engineering manager": "manager", "point of contact": "contact",
    "port number": "port", "host name": "host", "time to live": "ttl",
    "replica count": "replicas", "worker count": "workers", "partition count": "partitions",
    "shard count": "shards", "node count": "nodes",
    "request timeout": "timeout", "connect timeout": "connect_timeout",
    "connection timeout": "connect_timeout", "read timeout": "read_timeout",
    "idle timeout": "idle_timeout", "memory limit": "memory_limit", "cpu limit": "cpu_limit",
    "disk size": "disk_size", "alerts channel": "alerts_channel",
    "alert channel": "alerts_channel", "replica set": "replica_set",
}

# Role nouns accepted in "<person> is the <role> for <thing>".
ROLE_WORDS = (
    "owner", "product owner", "tech lead", "team lead", "technical lead",
    "engineering lead", "lead", "maintainer", "on-call", "oncall", "on call",
    "point of contact", "contact", "engineering manager", "manager", "architect", "dri",
    "directly responsible individual",
)
