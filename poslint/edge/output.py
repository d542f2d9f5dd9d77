"""Output formats, chosen by name with ``--output-format`` (or ``POSLINT_OUTPUT_FORMAT``).

A formatter takes a :class:`Report` (the sorted findings, which fixes ``--fix`` would apply, and
a :class:`~poslint.fix.locations.SourceMap` per file) and returns the text for stdout or
``--output-file``. To add a format, add a function to :data:`FORMATTERS`; the command line
offers every key. The formats are described for users in ``docs/configuration.md``; the JSON and
SARIF layouts documented there are stable: fields may be added, never renamed or removed. The
JSON layout (also one finding per line in ``json-lines``) is described by the JSON Schema shipped
in ``poslint/edge/schemas/json-output.schema.json``; :data:`JSON_LAYOUT_VERSION` is its version.

Findings in notebooks (:class:`poslint.integrations.notebook.NotebookDiagnostic`) carry a 1-based ``cell``,
and their rows and columns count within that cell.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections import Counter
from dataclasses import dataclass, field
from importlib import metadata
from pathlib import Path
from typing import Callable, Dict, List, Mapping, Optional, Sequence
from urllib.parse import quote
from xml.sax.saxutils import quoteattr, escape as xml_escape

from poslint import __version__
from poslint.core.diagnostics import Diagnostic, Fix
from poslint.fix.locations import SourceMap, cell_of

Applicable = Callable[[Diagnostic], bool]

# The version of the JSON layout, in every finding's ``version`` field: raised when fields are added,
# so that a consumer can tell which to expect (none is ever renamed or removed). Keep it equal to
# the ``const`` of ``version`` in schemas/json-output.schema.json.
JSON_LAYOUT_VERSION = 1

SARIF_SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"


@dataclass
class Report:
    diagnostics: Sequence[Diagnostic]  # sorted
    applicable: Applicable = lambda d: False  # noqa: E731 - whether --fix would apply the finding's fix
    sources: Mapping[str, SourceMap] = field(default_factory=dict)  # by path
    color: bool = False  # ANSI colours in the concise and full formats (--color)

    def source(self, d: Diagnostic) -> Optional[SourceMap]:
        return self.sources.get(d.path)


Formatter = Callable[[Report], str]


# --- rule metadata ----------------------------------------------------------------------------

def _rules():
    from poslint.rules import all_rules

    return all_rules()


def rule_name(code: str) -> str:
    rule = _rules().get(code)
    return rule.name if rule is not None else code


def project_url() -> Optional[str]:
    """The project's home page from the installed metadata (``[project.urls]``), if it has one."""
    try:
        md = metadata.metadata("poslint")
    except metadata.PackageNotFoundError:
        return None
    for entry in md.get_all("Project-URL") or []:
        label, _, url = entry.partition(",")
        if label.strip().lower() in ("homepage", "home", "repository", "source"):
            return url.strip()
    return md.get("Home-page") or None


def docs_path(code: str) -> str:
    """The rule's page, relative to the root of the poslint repository."""
    return f"docs/rules/{code}.md"


def docs_url(code: str) -> Optional[str]:
    base = project_url()
    return f"{base.rstrip('/')}/blob/main/{docs_path(code)}" if base else None


# --- helpers ----------------------------------------------------------------------------------

def location(d: Diagnostic) -> str:
    """``path:line:col``, or ``path:cell N:line:col`` in a notebook."""
    cell = cell_of(d)
    where = f"{d.path}:cell {cell}" if cell is not None else d.path
    return f"{where}:{d.line}:{d.col}"


def _headline(d: Diagnostic, report: Report) -> str:
    marker = " [*]" if report.applicable(d) else ""
    if not report.color:
        return f"{location(d)}: {d.code}{marker} {d.message}"
    import click

    where = click.style(location(d), bold=True)
    code = click.style(d.code, fg="red", bold=True)
    return f"{where}: {code}{click.style(marker, fg='cyan')} {d.message}"


def _fix_summary(fix: Fix) -> str:
    needs = f"; adds `{'`, `'.join(fix.imports)}` if missing" if fix.imports else ""
    return f"{fix.description} ({fix.safety} fix{needs})"


# --- formats ----------------------------------------------------------------------------------

def concise(report: Report) -> str:
    """flake8-style ``path:line:col: CODE message``; a fix ``--fix`` would apply is marked ``[*]``."""
    return "".join(_headline(d, report) + "\n" for d in report.diagnostics)


def full(report: Report) -> str:
    """The concise line, then a code frame around the finding and the fix as a unified diff."""
    blocks = []
    for d in report.diagnostics:
        lines = [_headline(d, report)]
        source = report.source(d)
        if source is not None:
            lines.extend(_frame(d, source))
        if d.fix is not None:
            how = "fix" if report.applicable(d) else "fix, not applied by --fix with the current settings"
            lines.append(f"  = {how}: {_fix_summary(d.fix)}")
            if source is not None:
                try:
                    diff = source.fix_diff(d.path, d.fix.edits)
                except Exception:  # noqa: BLE001 - a frame is a courtesy; never fail the output over it
                    diff = ""
                lines.extend("    " + line for line in diff.splitlines())
        blocks.append("\n".join(lines) + "\n")
    return "\n".join(blocks)


def _frame(d: Diagnostic, source: SourceMap, context: int = 2) -> List[str]:
    text_lines = source.lines(cell_of(d))
    if not 1 <= d.line <= len(text_lines):
        return []
    first, last = max(1, d.line - context), min(len(text_lines), d.line + context)
    width = len(str(last))
    gutter = " " * width + " |"
    out = [gutter]
    for n in range(first, last + 1):
        out.append(f"{n:>{width}} | {text_lines[n - 1]}".rstrip())
        if n == d.line:
            line = text_lines[n - 1]
            end = d.end_col if d.end_line == d.line else len(line) + 1
            carets = "^" * max(1, end - d.col)
            out.append(f"{gutter} {' ' * (d.col - 1)}{carets} {d.code}")
    out.append(gutter)
    return out


def _position(source: Optional[SourceMap], offset: int) -> Dict[str, int]:
    if source is None:
        return {"row": 0, "column": 0}
    p = source.position(offset)
    return {"row": p.row, "column": p.column}


def _text_path(path: str) -> str:
    """A path as valid Unicode: file-name bytes that are not UTF-8 become U+FFFD, as in ruff."""
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def _json_items(report: Report) -> List[dict]:
    items = []
    for d in report.diagnostics:
        source = report.source(d)
        fix = None
        if d.fix is not None:
            fix = {
                "applicability": d.fix.safety,
                "message": d.fix.description,
                "edits": [{"content": e.replacement, "location": _position(source, e.start),
                           "end_location": _position(source, e.end)} for e in d.fix.edits],
                "imports": list(d.fix.imports),
            }
        items.append({
            "code": d.code,
            "name": rule_name(d.code),
            "message": d.message,
            "filename": _text_path(d.path),
            "cell": cell_of(d),
            "location": {"row": d.line, "column": d.col},
            "end_location": {"row": d.end_line, "column": d.end_col},
            "noqa_row": source.noqa_row(d) if source is not None else d.line,
            "fix": fix,
            "fixable": report.applicable(d),
            "docs": docs_path(d.code),
            "url": docs_url(d.code),
            "version": JSON_LAYOUT_VERSION,
        })
    return items


def json_format(report: Report) -> str:
    """A JSON array with one object per finding; the schema is in schemas/json-output.schema.json."""
    return json.dumps(_json_items(report), indent=2, ensure_ascii=False) + "\n"


def json_lines(report: Report) -> str:
    """The objects of the ``json`` format, one per line (nothing at all when there are none)."""
    return "".join(json.dumps(item, ensure_ascii=False) + "\n" for item in _json_items(report))


def _escape_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(text: str) -> str:
    return _escape_data(text).replace(":", "%3A").replace(",", "%2C")


def github(report: Report) -> str:
    """GitHub Actions workflow commands, which Actions shows as annotations on the diff.

    A finding in a notebook is annotated on the line of the ``.ipynb`` file that holds the cell's
    source line, without columns, and its message starts with ``cell N, line L, column C``.
    """
    lines = []
    for d in report.diagnostics:
        cell = cell_of(d)
        message = d.message
        if cell is None:
            props = [("file", d.path), ("line", d.line), ("endLine", d.end_line), ("col", d.col),
                     ("endColumn", d.end_col)]
        else:
            source = report.source(d)
            row = source.file_row(d) if source is not None else None
            props = [("file", d.path)] + ([("line", row), ("endLine", row)] if row else [])
            message = f"cell {cell}, line {d.line}, column {d.col}: {message}"
        props.append(("title", d.code))
        rendered = ",".join(f"{key}={_escape_property(str(value))}" for key, value in props)
        lines.append(f"::error {rendered}::{_escape_data(message)}\n")
    return "".join(lines)


def pylint(report: Report) -> str:
    """pylint's parseable format: ``path:line: [CODE(name), ] message``."""
    lines = []
    for d in report.diagnostics:
        cell = cell_of(d)
        where = f"{d.path}:cell {cell}" if cell is not None else d.path
        lines.append(f"{where}:{d.line}: [{d.code}({rule_name(d.code)}), ] {d.message}\n")
    return "".join(lines)


def _uri(path: str) -> str:
    """A URI for ``path``, percent-encoding its file-system bytes, so that a name that is not
    valid UTF-8 (kept by Python as surrogate escapes) still gets one."""
    p = Path(path)
    encoded = quote(os.fsencode(p.as_posix()), safe="/")
    return "file://" + encoded if p.is_absolute() else encoded


def _first_paragraph(doc: str, heading: str) -> Optional[str]:
    marker = f"## {heading}"
    if marker not in doc:
        return None
    rest = doc.split(marker, 1)[1].strip()
    return " ".join(rest.split("\n\n", 1)[0].split())


def sarif(report: Report) -> str:
    """SARIF 2.1.0, for GitHub code scanning and other SARIF viewers.

    Every rule is listed under ``tool.driver.rules`` with its page as help; each finding is a
    result with a region (1-based, end column exclusive, columns in Unicode code points) and, when
    it has a fix, a SARIF fix with its replacements. Findings in notebooks point at the line of
    the ``.ipynb`` file that holds the cell's source line and carry no fix.
    """
    rules = _rules()
    codes = list(rules)
    for d in report.diagnostics:
        if d.code not in rules and d.code not in codes:
            codes.append(d.code)
    driver_rules = []
    for code in codes:
        rule = rules.get(code)
        entry = {"id": code, "name": rule.name if rule else code,
                 "defaultConfiguration": {"level": "error"}}
        if rule is not None:
            doc = rule.documentation()
            entry["shortDescription"] = {"text": rule.summary}
            entry["fullDescription"] = {"text": _first_paragraph(doc, "What it does") or rule.summary}
            entry["help"] = {"text": doc, "markdown": doc}
            entry["properties"] = {"fixAvailability": rule.fix_availability}
        url = docs_url(code)
        if url:
            entry["helpUri"] = url
        driver_rules.append(entry)
    index = {code: i for i, code in enumerate(codes)}

    results = []
    for d in report.diagnostics:
        cell = cell_of(d)
        uri = _uri(d.path)
        artifact = {"uri": uri}
        if cell is None:
            region = {"startLine": d.line, "startColumn": d.col, "endLine": d.end_line, "endColumn": d.end_col}
            text = d.message
        else:
            source = report.source(d)
            row = (source.file_row(d) if source is not None else None) or 1
            region = {"startLine": row, "endLine": row}
            text = f"cell {cell}, line {d.line}, column {d.col}: {d.message}"
        result = {
            "ruleId": d.code,
            "ruleIndex": index[d.code],
            "level": "error",
            "message": {"text": text},
            "locations": [{"physicalLocation": {"artifactLocation": artifact, "region": region}}],
        }
        source = report.source(d)
        if d.fix is not None and cell is None and source is not None:
            replacements = []
            for edit in d.fix.edits:
                start, end = source.position(edit.start), source.position(edit.end)
                replacements.append({
                    "deletedRegion": {"startLine": start.row, "startColumn": start.column,
                                      "endLine": end.row, "endColumn": end.column},
                    "insertedContent": {"text": edit.replacement},
                })
            result["fixes"] = [{
                "description": {"text": _fix_summary(d.fix)},
                "artifactChanges": [{"artifactLocation": {"uri": uri}, "replacements": replacements}],
            }]
        results.append(result)

    driver = {"name": "poslint", "version": __version__, "semanticVersion": __version__, "rules": driver_rules}
    if project_url():
        driver["informationUri"] = project_url()
    log = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{"tool": {"driver": driver}, "columnKind": "unicodeCodePoints", "results": results}],
    }
    return json.dumps(log, indent=2, ensure_ascii=False) + "\n"


def _notebook_row(d: Diagnostic, report: Report) -> Optional[int]:
    """For a notebook finding, the row of the ``.ipynb`` file that holds the cell's source line."""
    source = report.source(d)
    return source.file_row(d) if source is not None else None


def _cell_message(d: Diagnostic) -> str:
    """The message, prefixed with the position in the cell for formats that can only point at the file."""
    cell = cell_of(d)
    return d.message if cell is None else f"cell {cell}, line {d.line}, column {d.col}: {d.message}"


def _project_path(path: str) -> str:
    """A path for GitLab: relative to the repository root (``CI_PROJECT_DIR`` when it is set and holds
    the file), ``/``-separated, without a leading ``./``."""
    project = os.environ.get("CI_PROJECT_DIR")
    if project:
        relative = os.path.relpath(os.path.abspath(path), os.path.abspath(project))
        if relative != ".." and not relative.startswith(".." + os.sep):
            path = relative
    return _text_path(Path(os.path.normpath(path)).as_posix())


def gitlab(report: Report) -> str:
    """GitLab Code Quality: a JSON array of issues for the merge request's Code Quality widget.

    The fingerprint hashes the path, the code, the message and the text of the reported line, and
    counts repeats of all four, so that it stays the same when lines above the finding move.
    """
    issues = []
    seen: Counter = Counter()
    for d in report.diagnostics:
        cell = cell_of(d)
        source = report.source(d)
        path = _project_path(d.path)
        lines = source.lines(cell) if source is not None else []
        text = lines[d.line - 1].strip() if 1 <= d.line <= len(lines) else ""
        key = "\0".join([path, str(cell), d.code, d.message, text])
        seen[key] += 1
        if cell is None:
            begin, end = d.line, d.end_line
        else:
            begin = end = _notebook_row(d, report) or 1
        issues.append({
            "type": "issue",
            "check_name": d.code,
            "description": f"{d.code} {rule_name(d.code)}: {_cell_message(d)}",
            "categories": ["Bug Risk"],
            "severity": "major",
            "fingerprint": hashlib.sha256(f"{key}\0{seen[key]}".encode("utf-8", "surrogatepass")).hexdigest(),
            "location": {"path": path, "lines": {"begin": begin, "end": end}},
        })
    return json.dumps(issues, indent=2, ensure_ascii=False) + "\n"


def _xml_text(text: str) -> str:
    """``text`` with the characters XML 1.0 cannot hold (control characters, lone surrogates) as U+FFFD."""
    return "".join(c if c in "\t\n\r" or "\x20" <= c <= "\ud7ff" or "\ue000" <= c <= "\ufffd"
                   or c >= "\U00010000" else "\ufffd" for c in text)


def junit(report: Report) -> str:
    """JUnit XML, for CI test reports: one test suite per file with findings and one failed test case
    per finding; a run without findings is one suite with one passing case."""
    by_path: Dict[str, List[Diagnostic]] = {}
    for d in report.diagnostics:
        by_path.setdefault(d.path, []).append(d)
    suites = []
    for path, found in by_path.items():
        name = quoteattr(_xml_text(_text_path(path)))
        cases = []
        for d in found:
            where = _xml_text(_text_path(location(d)))
            cases.append(
                f'    <testcase name={quoteattr(f"{d.code} at {location(d)[len(d.path) + 1:]}")} '
                f'classname={name}>\n'
                f'      <failure message={quoteattr(_xml_text(d.message))} type={quoteattr(d.code)}>'
                f'{xml_escape(f"{where}: {d.code} {_xml_text(d.message)}")}</failure>\n'
                f'    </testcase>\n')
        suites.append(f'  <testsuite name={name} tests="{len(found)}" failures="{len(found)}" errors="0" '
                      f'skipped="0">\n{"".join(cases)}  </testsuite>\n')
    failures = len(report.diagnostics)
    if not suites:
        suites.append('  <testsuite name="poslint" tests="1" failures="0" errors="0" skipped="0">\n'
                      '    <testcase name="no findings" classname="poslint"/>\n  </testsuite>\n')
    tests = max(failures, 1)
    return ('<?xml version="1.0" encoding="UTF-8"?>\n'
            f'<testsuites name="poslint" tests="{tests}" failures="{failures}" errors="0">\n'
            f'{"".join(suites)}</testsuites>\n')


def _byte_column(line: str, column: int) -> int:
    """A 1-based column counted in UTF-8 bytes, as reviewdog counts, from one counted in characters."""
    return len(line[:column - 1].encode("utf-8", "surrogatepass")) + 1


def rdjson(report: Report) -> str:
    """reviewdog's Diagnostic Format (``reviewdog -f=rdjson``): one diagnostic per finding, with
    columns in UTF-8 bytes; a fix that ``--fix`` would apply and that adds no import becomes
    suggestions. Notebook findings point at the line of the ``.ipynb`` file and have no suggestion."""
    diagnostics = []
    for d in report.diagnostics:
        cell = cell_of(d)
        source = report.source(d)
        lines = source.lines() if source is not None and cell is None else []

        def position(row: int, column: int) -> Dict[str, int]:
            if not 1 <= row <= len(lines):  # no text to count bytes in
                return {"line": row, "column": column}
            return {"line": row, "column": _byte_column(lines[row - 1], column)}

        if cell is None:
            where = {"start": position(d.line, d.col), "end": position(d.end_line, d.end_col)}
        else:
            where = {"start": {"line": _notebook_row(d, report) or 1}}
        diagnostic = {
            "message": _cell_message(d),
            "location": {"path": _text_path(d.path), "range": where},
            "severity": "ERROR",
            "code": {"value": d.code},
        }
        url = docs_url(d.code)
        if url:
            diagnostic["code"]["url"] = url
        if cell is None and source is not None and d.fix is not None and not d.fix.imports and report.applicable(d):
            suggestions = []
            for edit in d.fix.edits:
                start, end = source.position(edit.start), source.position(edit.end)
                suggestions.append({"range": {"start": position(start.row, start.column),
                                              "end": position(end.row, end.column)},
                                    "text": edit.replacement})
            diagnostic["suggestions"] = suggestions
        diagnostics.append(diagnostic)
    result = {"source": {"name": "poslint"}, "severity": "ERROR", "diagnostics": diagnostics}
    if project_url():
        result["source"]["url"] = project_url()
    return json.dumps(result, indent=2, ensure_ascii=False) + "\n"


def _escape_azure_property(text: str) -> str:
    return text.replace("\r", "%0D").replace("\n", "%0A").replace(";", "%3B").replace("]", "%5D")


def azure(report: Report) -> str:
    """Azure Pipelines logging commands (``##vso[task.logissue ...]``), which the agent shows as errors.

    Property values escape ``;``, ``]`` and line breaks, the message its line breaks, as the agent
    decodes them. Notebook findings point at the line of the ``.ipynb`` file, without a column.
    """
    lines = []
    for d in report.diagnostics:
        if cell_of(d) is None:
            props = [("type", "error"), ("sourcepath", d.path), ("linenumber", d.line), ("columnnumber", d.col)]
        else:
            row = _notebook_row(d, report)
            props = [("type", "error"), ("sourcepath", d.path)] + ([("linenumber", row)] if row else [])
        props.append(("code", d.code))
        rendered = "".join(f"{key}={_escape_azure_property(str(value))};" for key, value in props)
        message = _cell_message(d).replace("\r", "%0D").replace("\n", "%0A")
        lines.append(f"##vso[task.logissue {rendered}]{d.code} {message}\n")
    return "".join(lines)


FORMATTERS: Dict[str, Formatter] = {
    "concise": concise,
    "full": full,
    "json": json_format,
    "github": github,
    "sarif": sarif,
    "pylint": pylint,
    "json-lines": json_lines,
    "gitlab": gitlab,
    "junit": junit,
    "rdjson": rdjson,
    "azure": azure,
}


# --- --statistics and --show-fixes ------------------------------------------------------------

def statistics(report: Report, output_format: str) -> str:
    """Counts per rule, most frequent first: ``COUNT  CODE  [*] name`` (``[*]``: some are fixable by --fix).

    With ``--output-format json`` it is a JSON array of ``{code, name, count, fixable}``, and with
    ``json-lines`` those objects one per line.
    """
    counts = Counter(d.code for d in report.diagnostics)
    fixable = Counter(d.code for d in report.diagnostics if report.applicable(d))
    rows = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    items = [{"code": code, "name": rule_name(code), "count": n, "fixable": fixable[code]} for code, n in rows]
    if output_format == "json":
        return json.dumps(items, indent=2) + "\n"
    if output_format == "json-lines":
        return "".join(json.dumps(item) + "\n" for item in items)
    if not rows:
        return ""
    width = len(str(rows[0][1]))
    code_width = max(len(code) for code, _ in rows)
    lines = []
    for code, n in rows:
        marker = "[*]" if fixable[code] else "   "
        lines.append(f"{n:>{width}}  {code:<{code_width}}  {marker} {rule_name(code)}\n")
    return "".join(lines)


def fixes_applied(fixed_codes: Mapping[str, Mapping[str, int]]) -> List[str]:
    """``--show-fixes`` after ``--fix``: for each file, how many findings of each rule were fixed."""
    lines = []
    for path, codes in fixed_codes.items():
        if not codes:
            continue
        lines.append(f"{path}:")
        for code, n in sorted(codes.items()):
            lines.append(f"    {n} × {code} ({rule_name(code)})")
    return lines


def fixes_available(report: Report) -> List[str]:
    """``--show-fixes`` without ``--fix``: each remaining finding that has a fix, and what the fix does."""
    lines = []
    for d in report.diagnostics:
        if d.fix is not None:
            status = "applied by --fix" if report.applicable(d) else "needs --unsafe-fixes"
            lines.append(f"{location(d)}: {d.code}: {_fix_summary(d.fix)}, {status}")
    return lines
