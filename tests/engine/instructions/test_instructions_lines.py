"""Import-line syntax and lexical folding (S6.4; RELIABILITY §2 resolver design 1–2)."""

from __future__ import annotations

import pytest
from context_engine.instructions.import_lines import (
    FenceTracker,
    LexicalError,
    check_import_path,
    import_target,
)


@pytest.mark.parametrize(
    ("line", "target"),
    [
        ("@docs/setup.md", "docs/setup.md"),
        ("@./notes.txt", "./notes.txt"),
        ("  @docs/setup.md\t", "docs/setup.md"),
        ("@docs/setup.md\r", "docs/setup.md"),
        ("@docs\\setup.md", "docs\\setup.md"),
        ("@README.md", "README.md"),
        ("@docs／setup", "docs／setup"),  # look-alike separator: an import, refused later
        ("@mention", None),
        ("@", None),
        ("@ docs/x.md", None),
        ("@a/b and more", None),
        ("@a/b\u00a0c", None),  # no-break space is whitespace
        ("text @docs/x.md", None),
        ("`@docs/x.md`", None),
        ("@@docs/x.md", "@docs/x.md"),
        ("", None),
    ],
)
def test_import_target(line: str, target: str | None) -> None:
    assert import_target(line) == target


def test_fenced_code_blocks_are_text() -> None:
    lines = [
        "before",
        "```python",
        "@in/fence.md",
        "``",
        "```",
        "@after/fence.md",
        "  ~~~~~ text",
        "@tilde/fence.md",
        "```",
        "~~~~",  # shorter than the opening fence: does not close it
        "@still/text.md",
        "~~~~~~",
        "```inline``` is not a fence",
        "@outside.md",
    ]
    fence = FenceTracker()
    code = [fence.feed(line) for line in lines]
    assert code == [
        False, True, True, True, True,
        False, True, True, True, True, True, True,
        False, False,
    ]


@pytest.mark.parametrize(
    ("path", "base", "parts"),
    [
        ("docs/x.md", (), ("docs", "x.md")),
        ("./x.md", ("docs",), ("docs", "x.md")),
        ("../x.md", ("docs",), ("x.md",)),
        ("a//b/./c.md", (), ("a", "b", "c.md")),
        ("docs/../docs/x.md", (), ("docs", "x.md")),
        ("100%.md", (), ("100%.md",)),
        ("café/ﬁle.md", (), ("café", "ﬁle.md")),  # never NFKC: the ligature stays
        (".github/rules.md", (), (".github", "rules.md")),
    ],
)
def test_fold_inside_boundary(path: str, base: tuple[str, ...], parts: tuple[str, ...]) -> None:
    assert check_import_path(path, base) == parts


@pytest.mark.parametrize(
    ("path", "base", "code"),
    [
        ("../x.md", (), "import_outside_source"),
        ("a/../../x.md", (), "import_outside_source"),
        ("../../x.md", ("docs",), "import_outside_source"),
        ("/x.md", (), "import_outside_source"),
        ("~/x.md", (), "import_outside_source"),
        ("Z:x.md", (), "import_outside_source"),
        ("a\\x.md", (), "import_invalid_path"),
        ("%2e%2e/x.md", (), "import_invalid_path"),
        ("．．/x.md", (), "import_invalid_path"),
        ("nul.txt", (), "import_invalid_path"),
        ("Com1.md", (), "import_invalid_path"),
        (".Git/config", (), "import_invalid_path"),
    ],
)
def test_refusals(path: str, base: tuple[str, ...], code: str) -> None:
    result = check_import_path(path, base)
    assert isinstance(result, LexicalError)
    assert result.code == code
    assert result.message
