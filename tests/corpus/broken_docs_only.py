"""Docs only, and a syntax error."""


def f(x:
    return x
