from poslint.rules.base import Rule


class ParseError(Rule):
    """
    ## What it does
    Reports a file that poslint cannot read as Python: a syntax error, bytes that do not
    decode in the file's declared encoding (UTF-8 by default), or a null byte. poslint parses
    with the grammar of the Python it runs under: code for a newer Python (3.12's type
    parameters, `class Box[T]:`, `type Alias = ...`) is reported with a note saying so; run
    poslint under that Python to lint it.

    ## Why is this bad?
    poslint cannot check what it cannot parse, so a file reported here was not linted at all.
    The finding counts like any other, so a broken file never passes CI silently.

    ## Example
    ```python
    def rope(x:
        return x
    ```

    ## Use instead
    Fix the syntax, or save the file in the encoding its coding cookie declares.

    ```python
    def rope(x):
        return x
    ```

    ## Fix safety
    There is no fix.
    """

    code = "POS001"
    name = "cannot-parse"
    summary = "The file cannot be decoded or parsed, so it was not checked"
