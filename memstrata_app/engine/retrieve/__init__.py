"""The read path: embedders (embedders.py), the in-memory vector index (index.py) kept in
step with the ledger (sync.py), the term side's ranking (lexical.py), fusion (fusion.py),
and `Retriever` (retriever.py): as-of and known-at reads, and re-embedding (reindex)."""
