"""`poslint server` driven over stdio by pygls' real LSP client, as an editor would drive it."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("pygls")

from lsprotocol import types  # noqa: E402
from pygls.lsp.client import LanguageClient  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = (ROOT / "examples" / "llama_rope_bf16.py").read_text()
POSITIONS = "t = torch.arange(self.max_seq_len_cached, device=device, dtype=self.inv_freq.dtype)"


class Session:
    """A started server, its client, and the diagnostics published per document."""

    def __init__(self, client: LanguageClient):
        self.client = client
        self.published: dict = {}
        self.messages: list = []
        self.changed = asyncio.Event()

        @client.feature(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
        def _published(params: types.PublishDiagnosticsParams):
            self.published[params.uri] = params.diagnostics
            self.changed.set()

        @client.feature(types.WINDOW_SHOW_MESSAGE)
        def _message(params: types.ShowMessageParams):
            self.messages.append(params.message)

    async def diagnostics(self, uri: str, action) -> list:
        self.changed.clear()
        self.published.pop(uri, None)
        action()
        while uri not in self.published:
            await asyncio.wait_for(self.changed.wait(), 60)
            self.changed.clear()
        return self.published[uri]

    async def open(self, path: Path, text: str) -> list:
        uri = path.as_uri()
        return await self.diagnostics(uri, lambda: self.client.text_document_did_open(types.DidOpenTextDocumentParams(
            types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text))))

    async def actions(self, path: Path, line: int, only=None) -> list:
        diags = self.published.get(path.as_uri(), [])
        at = types.Range(types.Position(line, 0), types.Position(line, 200))
        return await self.client.text_document_code_action_async(types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=path.as_uri()), range=at,
            context=types.CodeActionContext(diagnostics=[d for d in diags if d.range.start.line == line], only=only)))


def scenario(body, cwd: Path, init_options=None):
    """Start ``poslint server`` in ``cwd``, initialize, run ``body(session)``, shut down."""

    async def main():
        client = LanguageClient("poslint-tests", "1")
        session = Session(client)
        await client.start_io(sys.executable, "-m", "poslint", "server", cwd=str(cwd))
        try:
            await client.initialize_async(types.InitializeParams(
                capabilities=types.ClientCapabilities(), root_uri=cwd.as_uri(),
                initialization_options=init_options))
            client.initialized(types.InitializedParams())
            return await body(session)
        finally:
            await client.shutdown_async(None)
            client.exit(None)
            await client.stop()

    return asyncio.run(asyncio.wait_for(main(), 240))


def apply(text: str, action: types.CodeAction) -> str:
    """Apply a code action's single text edit, as an editor does."""
    (change,) = action.edit.document_changes
    (edit,) = change.edits
    lines = text.splitlines(keepends=True)

    def offset(p: types.Position) -> int:
        return sum(len(line) for line in lines[: p.line]) + p.character

    return text[: offset(edit.range.start)] + edit.new_text + text[offset(edit.range.end):]


def cli_fixed(tmp_path: Path, text: str, *options: str) -> str:
    """What `poslint --fix` makes of ``text`` (through stdin)."""
    done = subprocess.run([sys.executable, "-m", "poslint", "--fix", *options, "--stdin-filename", "x.py"],
                          input=text, capture_output=True, text=True, cwd=tmp_path, timeout=120)
    assert done.returncode in (0, 1), done.stderr
    assert done.stdout != text
    return done.stdout


def test_diagnostics_follow_the_unsaved_buffer_and_the_files_configuration(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.poslint]\nignore = ["POS102"]\n')
    path = tmp_path / "rope.py"
    path.write_text("x = 1\n")  # what is on disk does not matter: the buffer is linted

    async def body(s: Session):
        opened = await s.open(path, EXAMPLE)
        codes = sorted((d.code, d.range.start.line + 1, d.range.start.character + 1) for d in opened)
        assert codes == [("POS101", 31, 13), ("POS103", 32, 17)]
        assert all(d.source == "poslint" for d in opened)
        assert opened[0].code_description.href == "https://github.com/poslint/poslint/blob/main/docs/rules/POS101.md"
        # an edit that fixes the positions: only POS103 is left
        line = next(i for i, text in enumerate(EXAMPLE.splitlines()) if POSITIONS in text)
        start = EXAMPLE.splitlines()[line].index("self.inv_freq.dtype")
        changed = await s.diagnostics(path.as_uri(), lambda: s.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=path.as_uri(), version=2),
                content_changes=[types.TextDocumentContentChangePartial(
                    range=types.Range(types.Position(line, start), types.Position(line, start + 19)),
                    text="torch.float32")])))
        assert [d.code for d in changed] == ["POS103"]
        saved = await s.diagnostics(path.as_uri(), lambda: s.client.text_document_did_save(
            types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri=path.as_uri()))))
        assert [d.code for d in saved] == ["POS103"]

    scenario(body, tmp_path)


def test_code_actions_fix_one_finding_add_noqa_and_fix_all_safe(tmp_path):
    path = tmp_path / "rope.py"

    async def body(s: Session):
        opened = await s.open(path, EXAMPLE)
        pos101 = next(d for d in opened if d.code == "POS101")
        actions = await s.actions(path, pos101.range.start.line)
        titles = [a.title for a in actions]
        assert "poslint (POS101): compute the positions in float32 (safe fix)" in titles
        assert "poslint (POS101): add `# noqa: POS101`" in titles
        assert "poslint: fix all safe problems" in titles
        fix = next(a for a in actions if a.title.startswith("poslint (POS101): compute"))
        assert fix.kind == types.CodeActionKind.QuickFix and fix.is_preferred
        fixed = apply(EXAMPLE, fix)
        assert POSITIONS.replace("self.inv_freq.dtype", "torch.float32") in fixed
        noqa = apply(EXAMPLE, next(a for a in actions if "noqa" in a.title))
        assert f"{POSITIONS}  # noqa: POS101" in noqa
        # the unsafe fix of POS102 is offered and labelled so
        pos102 = next(d for d in opened if d.code == "POS102")
        unsafe = [a.title for a in await s.actions(path, pos102.range.start.line) if "unsafe fix" in a.title]
        assert unsafe and unsafe[0].startswith("poslint (POS102):")
        # fix all safe: a source action; the result keeps only the finding whose fix is unsafe
        (fix_all,) = await s.actions(path, 0, only=[types.CodeActionKind.SourceFixAll])
        assert fix_all.kind == "source.fixAll.poslint"
        assert apply(EXAMPLE, fix_all) == cli_fixed(tmp_path, EXAMPLE)

    scenario(body, tmp_path)


def test_hover_shows_the_rule_summary_and_link(tmp_path):
    path = tmp_path / "rope.py"

    async def body(s: Session):
        opened = await s.open(path, EXAMPLE)
        pos101 = next(d for d in opened if d.code == "POS101")
        hover = await s.client.text_document_hover_async(types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=path.as_uri()), position=pos101.range.start))
        assert hover.contents.kind == types.MarkupKind.Markdown
        assert "**POS101** `low-precision-positions`" in hover.contents.value
        assert "(https://github.com/poslint/poslint/blob/main/docs/rules/POS101.md)" in hover.contents.value
        nothing = await s.client.text_document_hover_async(types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=path.as_uri()), position=types.Position(0, 0)))
        assert nothing is None

    scenario(body, tmp_path)


def test_initialization_options_select_ignore_and_unsafe_fixes(tmp_path):
    path = tmp_path / "rope.py"

    async def body(s: Session):
        opened = await s.open(path, EXAMPLE)
        assert sorted(d.code for d in opened) == ["POS101", "POS102"]
        (fix_all,) = await s.actions(path, 0, only=[types.CodeActionKind.SourceFixAll])
        assert fix_all.title == "poslint: fix all problems (unsafe fixes too)"
        assert apply(EXAMPLE, fix_all) == cli_fixed(tmp_path, EXAMPLE, "--select", "POS1", "--ignore", "POS103",
                                                    "--unsafe-fixes")

    scenario(body, tmp_path, {"select": ["POS1"], "ignore": ["POS103"], "unsafeFixes": True})


def test_bad_initialization_options_are_shown_not_fatal(tmp_path):
    path = tmp_path / "rope.py"

    async def body(s: Session):
        opened = await s.open(path, EXAMPLE)
        assert {d.code for d in opened} == {"POS101", "POS102", "POS103"}
        assert any("unknown rule code or prefix 'POS9'" in m for m in s.messages)

    scenario(body, tmp_path, {"select": ["POS9"]})
