"""Fixes: building blocks for rules, applying edits to a file, mapping locations."""
