"""Governance: who stated a row and whose word retires whose (authority.py), permission
labels (labels.py), retention (retention.py), the audit trail (audit.py), privacy policy
(privacy.py, secrets.py, sanitize.py), and `Governance` (service.py), the services the
engine delegates to (holds, labels, expiry, erasure, the injection log)."""
