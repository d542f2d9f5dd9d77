"""Load a user's factory: `path/to/file.py:factory` or `package.module:factory`.

This imports and runs the user's module.
"""

from __future__ import annotations

import importlib
import importlib.util
import os
import sys
import uuid
from typing import Callable

DEFAULT_FACTORY = "poslint_factory"


class VerifyError(Exception):
    """A problem with the target (load, factory result, outputs), reported without a traceback."""


def _split_target(target: str):
    path, sep, attr = target.rpartition(":")
    # No colon, or a Windows drive letter only ("C:\\m.py"): the whole thing names the module.
    if not sep or not path or (len(path) == 1 and attr.startswith(("\\", "/"))):
        return target, DEFAULT_FACTORY
    return path, attr or DEFAULT_FACTORY


def _load_file(path: str):
    if not os.path.isfile(path):
        raise VerifyError(f"file not found: {path}")
    directory = os.path.dirname(os.path.abspath(path))
    name = f"poslint_verify_target_{uuid.uuid4().hex}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise VerifyError(f"cannot import {path}: not a Python file")
    module = importlib.util.module_from_spec(spec)
    # Registered like any import (dataclasses and pickling look the module up); the target may
    # import modules that sit beside it.
    sys.modules[name] = module
    sys.path.insert(0, directory)
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[name]
        raise VerifyError(f"importing {path} raised {type(exc).__name__}: {exc}") from exc
    finally:
        sys.path.remove(directory)
    return module


def _load_module(dotted: str):
    try:
        return importlib.import_module(dotted)
    except Exception as exc:
        raise VerifyError(f"importing {dotted} raised {type(exc).__name__}: {exc}") from exc


def load_factory(target: str) -> Callable:
    """Return the factory named by TARGET.

    TARGET is `path/to/file.py:factory` or `package.module:factory`; without `:factory` the
    function `poslint_factory` is used.
    """
    where, attr = _split_target(target)
    is_file = where.endswith(".py") or os.sep in where or "/" in where
    module = _load_file(where) if is_file else _load_module(where)
    factory = getattr(module, attr, None)
    if factory is None:
        raise VerifyError(f"{where} defines no {attr!r}")
    if not callable(factory):
        raise VerifyError(f"{where}:{attr} is not callable")
    return factory
