"""The knowledge base: documents, code samples, the index, checks and deep search (docs/architecture.md §8)."""
