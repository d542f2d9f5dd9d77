"""Linting files: discovery, configuration, noqa, cache, parallel runs, prefilter, checker."""
