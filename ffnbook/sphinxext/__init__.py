"""Sphinx extensions used by the book's own build (not needed to use ffnbook)."""
