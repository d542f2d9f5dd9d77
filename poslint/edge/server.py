"""``poslint server``: a language server (LSP) on stdin/stdout, for editors.

It is built on pygls, the Python LSP framework maintained by the Open Law Library and used by
many Python language servers: it brings the JSON-RPC transport, document synchronisation
(incremental edits applied to an in-memory copy of each buffer) and the typed protocol
messages of lsprotocol, so this module only maps poslint's findings and fixes onto LSP. Using
lsprotocol alone would mean writing the transport and the document store here.

What it offers:

* diagnostics on open, change and save, computed from the editor's buffer (saved or not) with
  the configuration closest to the file, as ``poslint check`` would;
* a quick fix per finding that has a fix, titled with the fix and whether it is safe or unsafe;
* a quick fix that adds ``# noqa: CODE`` to the line;
* a ``source.fixAll.poslint`` action that applies every safe fix (unsafe ones too when
  ``unsafeFixes`` is on);
* hover over a finding (or a rule code): the rule's summary and a link to its page.

Settings come from ``initializationOptions``: ``select``, ``extendSelect``, ``ignore`` (lists of
codes) and ``unsafeFixes`` (bool); they are applied after each file's configuration, as
command-line options are. Positions are converted to UTF-16 code units, LSP's default.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Dict, List, Optional, Tuple

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.workspace import TextDocument

from poslint import __version__
from poslint.core.diagnostics import Diagnostic
from poslint.edge.output import docs_path, docs_url
from poslint.engine.add_noqa import add_noqa
from poslint.engine.buffer import options_for
from poslint.engine.checker import PARSE_ERROR
from poslint.engine.config import Config, ConfigError, Resolver, Selection
from poslint.engine.linter import lint_text
from poslint.fix.fixer import applicable, fix_text
from poslint.rules import all_rules

SOURCE = "poslint"
FIX_ALL = f"{types.CodeActionKind.SourceFixAll.value}.poslint"
_CODE = re.compile(r"[A-Z]+[0-9]+")


class PoslintServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("poslint", __version__, text_document_sync_kind=types.TextDocumentSyncKind.Incremental)
        self.resolver = Resolver()
        self.unsafe_fixes: Optional[bool] = None
        # The findings of each open document, with the text they refer to.
        self.findings: Dict[str, Tuple[str, List[Diagnostic]]] = {}

    def configure(self, options: object) -> None:
        """Apply ``initializationOptions``; a bad value is shown to the user and ignored."""
        options = options if isinstance(options, dict) else {}

        def codes(*keys: str) -> Optional[Tuple[str, ...]]:
            for key in keys:
                value = options.get(key)
                if value is not None:
                    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                        raise ConfigError(f"initializationOptions {key}: expected a list of codes, got {value!r}")
                    return tuple(value)
            return None

        unsafe = options.get("unsafeFixes", options.get("unsafe-fixes"))
        if unsafe is not None and not isinstance(unsafe, bool):
            raise ConfigError(f"initializationOptions unsafeFixes: expected true or false, got {unsafe!r}")
        selection = Selection(codes("select"), codes("extendSelect", "extend-select") or (), codes("ignore") or ())
        layer = (Config(selection=selection, unsafe_fixes=unsafe), "initializationOptions {}")
        resolver = Resolver(command_line=layer)
        resolver.for_directory(os.getcwd())  # check the codes now
        self.resolver, self.unsafe_fixes = resolver, unsafe

    def lint(self, document: TextDocument) -> None:
        path = _path(document)
        text = document.source
        try:
            settings = self.resolver.for_path(path)
            options = options_for(settings, path, {}, unsafe_fixes=self.unsafe_fixes)
        except ConfigError as exc:
            self.window_show_message(types.ShowMessageParams(types.MessageType.Error, f"poslint: {exc}"))
            self.findings[document.uri] = (text, [])
            self._publish(document, [])
            return
        result, _ = lint_text(text, path, options, options.codes)
        found = [d if d.code not in settings.unfixable else _without_fix(d) for d in result.diagnostics]
        self.findings[document.uri] = (text, found)
        self._publish(document, found)

    def _publish(self, document: TextDocument, found: List[Diagnostic]) -> None:
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(
            uri=document.uri, version=document.version, diagnostics=[_lsp_diagnostic(d, document) for d in found]))

    def unsafe_for(self, document: TextDocument) -> bool:
        try:
            return self.resolver.for_path(_path(document)).unsafe_fixes
        except ConfigError:
            return False


server = PoslintServer()


@server.feature(types.INITIALIZE)
def _initialize(ls: PoslintServer, params: types.InitializeParams) -> None:
    try:
        ls.configure(params.initialization_options)
    except ConfigError as exc:
        ls.window_show_message(types.ShowMessageParams(types.MessageType.Error, f"poslint: {exc}"))


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
def _did_open(ls: PoslintServer, params: types.DidOpenTextDocumentParams) -> None:
    ls.lint(ls.workspace.get_text_document(params.text_document.uri))


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
def _did_change(ls: PoslintServer, params: types.DidChangeTextDocumentParams) -> None:
    ls.lint(ls.workspace.get_text_document(params.text_document.uri))


@server.feature(types.TEXT_DOCUMENT_DID_SAVE)
def _did_save(ls: PoslintServer, params: types.DidSaveTextDocumentParams) -> None:
    ls.lint(ls.workspace.get_text_document(params.text_document.uri))


@server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
def _did_close(ls: PoslintServer, params: types.DidCloseTextDocumentParams) -> None:
    ls.findings.pop(params.text_document.uri, None)
    ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=params.text_document.uri, diagnostics=[]))


@server.feature(types.TEXT_DOCUMENT_CODE_ACTION, types.CodeActionOptions(
    code_action_kinds=[types.CodeActionKind.QuickFix, types.CodeActionKind.SourceFixAll, FIX_ALL]))
def _code_action(ls: PoslintServer, params: types.CodeActionParams) -> List[types.CodeAction]:
    document = ls.workspace.get_text_document(params.text_document.uri)
    text, found = ls.findings.get(document.uri, (None, []))
    if text != document.source:  # edited since the last lint: the offsets would be wrong
        ls.lint(document)
        text, found = ls.findings[document.uri]
    wanted = params.context.only
    actions: List[types.CodeAction] = []
    if not wanted or any(kind in (types.CodeActionKind.QuickFix, "quickfix") for kind in wanted):
        for d in found:
            if not _overlaps(_range(d, document), params.range):
                continue
            lsp = _lsp_diagnostic(d, document)
            if d.fix is not None:
                new = fix_text(text, lambda _: ([], []), True, ([d], [])).text
                if new != text:
                    actions.append(_action(f"poslint ({d.code}): {d.fix.description} ({d.fix.safety} fix)",
                                           types.CodeActionKind.QuickFix, document, text, new, [lsp],
                                           preferred=d.fix.safety == "safe"))
            if d.code != PARSE_ERROR:
                new = add_noqa(text, [d])[0]
                if new != text:
                    actions.append(_action(f"poslint ({d.code}): add `# noqa: {d.code}`",
                                           types.CodeActionKind.QuickFix, document, text, new, [lsp]))
    if not wanted or any(str(kind).startswith(("source.fixAll", "source")) and kind != "source.organizeImports"
                         for kind in wanted):
        unsafe = ls.unsafe_for(document)
        chosen = [d for d in found if applicable(d.fix, unsafe)]
        if chosen:
            new = fix_text(text, _checker(ls, document), unsafe, (found, [])).text
            title = "poslint: fix all problems (unsafe fixes too)" if unsafe else "poslint: fix all safe problems"
            if new != text:
                actions.append(_action(title, FIX_ALL, document, text, new, []))
    return actions


@server.feature(types.TEXT_DOCUMENT_HOVER)
def _hover(ls: PoslintServer, params: types.HoverParams) -> Optional[types.Hover]:
    document = ls.workspace.get_text_document(params.text_document.uri)
    _, found = ls.findings.get(document.uri, (None, []))
    point = types.Range(params.position, params.position)
    codes = list(dict.fromkeys(d.code for d in found if _overlaps(_range(d, document), point)))
    line = document.lines[params.position.line] if params.position.line < len(document.lines) else ""
    for match in _CODE.finditer(line):  # a code under the cursor, as in `# noqa: POS101`
        start, end = _utf16(line, match.start()), _utf16(line, match.end())
        if start <= params.position.character <= end and match.group() in all_rules():
            codes.append(match.group())
    rules = all_rules()
    parts = []
    for code in dict.fromkeys(codes):
        rule = rules.get(code)
        if rule is None:
            continue
        url = docs_url(code) or docs_path(code)
        parts.append(f"**{code}** `{rule.name}`: {rule.summary}\n\nFix: {rule.fix_availability}. [Rule page]({url})")
    if not parts:
        return None
    return types.Hover(contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value="\n\n---\n\n".join(parts)))


# --- helpers ----------------------------------------------------------------------------------

def _path(document: TextDocument) -> str:
    """The file the buffer stands for; an unsaved buffer counts as a file in the current directory."""
    if document.path and document.uri.startswith("file:"):
        return document.path
    return str(Path.cwd() / "untitled.py")


def _checker(ls: PoslintServer, document: TextDocument):
    path = _path(document)
    settings = ls.resolver.for_path(path)
    options = options_for(settings, path, {}, fix=True, unsafe_fixes=ls.unsafe_fixes)

    def check(text: str):
        result, _ = lint_text(text, path, options, options.codes)
        found = [d if d.code not in settings.unfixable else _without_fix(d) for d in result.diagnostics]
        return found, result.internal_errors

    return check


def _without_fix(d: Diagnostic) -> Diagnostic:
    from dataclasses import replace

    return replace(d, fix=None)


def _utf16(line: str, index: int) -> int:
    """A character index in ``line`` as UTF-16 code units (LSP positions)."""
    return len(line[:index].encode("utf-16-le")) // 2


def _position(document: TextDocument, row: int, col: int) -> types.Position:
    """An LSP position from poslint's 1-based row and column (characters)."""
    lines = document.lines
    line = lines[row - 1] if 0 < row <= len(lines) else ""
    return types.Position(line=max(0, row - 1), character=_utf16(line, col - 1))


def _range(d: Diagnostic, document: TextDocument) -> types.Range:
    return types.Range(_position(document, d.line, d.col), _position(document, d.end_line, d.end_col))


def _overlaps(a: types.Range, b: types.Range) -> bool:
    def key(p: types.Position):
        return p.line, p.character

    return key(a.start) <= key(b.end) and key(b.start) <= key(a.end)


def _lsp_diagnostic(d: Diagnostic, document: TextDocument) -> types.Diagnostic:
    url = docs_url(d.code)
    return types.Diagnostic(
        range=_range(d, document), message=d.message, source=SOURCE, code=d.code,
        code_description=types.CodeDescription(href=url) if url else None,
        severity=types.DiagnosticSeverity.Error if d.code == PARSE_ERROR else types.DiagnosticSeverity.Warning,
        data={"fix": d.fix.safety if d.fix is not None else None})


def _action(title: str, kind: str, document: TextDocument, old: str, new: str,
            diagnostics: List[types.Diagnostic], preferred: bool = False) -> types.CodeAction:
    """A code action that turns ``old`` (the buffer) into ``new`` with one edit over the changed span."""
    start = 0
    limit = min(len(old), len(new))
    while start < limit and old[start] == new[start]:
        start += 1
    end_old, end_new = len(old), len(new)
    while end_old > start and end_new > start and old[end_old - 1] == new[end_new - 1]:
        end_old -= 1
        end_new -= 1
    if 0 < start < len(old) and old[start - 1] == "\r" and old[start] == "\n":
        start -= 1  # never split a \r\n
        end_old, end_new = max(end_old, start), max(end_new, start)
    if 0 < end_old < len(old) and old[end_old - 1] == "\r" and old[end_old] == "\n":
        end_old, end_new = end_old + 1, end_new + 1
    edit = types.TextEdit(range=types.Range(_offset_position(old, start), _offset_position(old, end_old)),
                          new_text=new[start:end_new])
    return types.CodeAction(
        title=title, kind=kind, diagnostics=diagnostics or None, is_preferred=preferred or None,
        edit=types.WorkspaceEdit(document_changes=[types.TextDocumentEdit(
            text_document=types.OptionalVersionedTextDocumentIdentifier(uri=document.uri, version=document.version),
            edits=[edit])]))


def _offset_position(text: str, offset: int) -> types.Position:
    """The LSP position of a character offset in ``text`` (lines end at \\n, \\r\\n or \\r)."""
    before = text[:offset]
    starts = [m.end() for m in re.finditer(r"\r\n|\r(?!\n)|\n", before)]
    line_start = starts[-1] if starts else 0
    return types.Position(line=len(starts), character=_utf16(before[line_start:], offset - line_start))


def serve() -> None:
    """Run the server on stdin/stdout until the client asks it to exit."""
    server.start_io()
