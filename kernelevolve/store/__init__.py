"""Persistence: DuckDB for metadata, an fsspec object store for artifacts."""
