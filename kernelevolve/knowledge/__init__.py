"""The knowledge base: documents, the generated index, checks, and deep search (DESIGN §6)."""
