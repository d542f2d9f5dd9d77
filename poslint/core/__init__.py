"""Foundations every layer uses: diagnostics and source text."""
