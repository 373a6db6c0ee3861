"""The knowledge base: documents, the generated index, checks, and deep search (docs/architecture.md §8)."""
