"""Lint text that is not read from disk: standard input (``poslint -``) and editor buffers
(``poslint server``), with the settings of the path the text stands for."""

from __future__ import annotations

from dataclasses import replace
from typing import Callable, Dict, Optional, Tuple

from poslint.engine.config import Settings
from poslint.engine.linter import FileResult, LintOptions, lint_bytes
from poslint.engine.project import project_reduced_matmul


def options_for(settings: Settings, path: str, handlers: Dict[str, Callable], fix: bool = False,
                ignore_noqa: bool = False, unsafe_fixes: Optional[bool] = None) -> LintOptions:
    """The options that lint ``path`` as its configuration says (per-file-ignores included)."""
    unsafe = settings.unsafe_fixes if unsafe_fixes is None else unsafe_fixes
    return LintOptions(codes=settings.file_codes(path), ignore_noqa=ignore_noqa, fix=fix, write=False,
                       unsafe_fixes=unsafe, handlers=handlers, unfixable=settings.unfixable,
                       reduced_matmul=project_reduced_matmul(None, settings.assume_tf32),
                       src=settings.src if settings.follow_imports else None)


def lint_buffer(data: bytes, path: str, options: LintOptions) -> Tuple[FileResult, Optional[bytes]]:
    """Lint (with ``options.fix``, fix) ``data`` as the file ``path``; never writes. Returns the
    result and, when fixing changed the text, the fixed bytes (in the text's own encoding)."""
    options = replace(options, write=False)
    handler = next((h for suffix, h in options.handlers.items() if path.endswith(suffix)), None)
    try:
        if handler is not None:
            return handler(path, data, options)
        result, source, new_text = lint_bytes(data, path, options)
    except Exception as exc:  # noqa: BLE001 - report it as poslint's failure, never as a traceback
        return FileResult(path, internal_errors=[f"{path}: {type(exc).__name__}: {exc}"]), None
    if source is None or new_text is None:
        return result, None
    try:
        return result, source.to_bytes(new_text)
    except UnicodeEncodeError as exc:
        result.errors.append(f"{path}: not fixed: the fixed text cannot be encoded as {source.encoding}: {exc}")
        result.fixed = 0
        return result, None
