"""The plain command lines of reads and ``remember``, run without click (issue 14).

``[--home D] [--workspace D] [--json] list | memory | read REF | recall WORDS… |
remember --name/--title/--description/--type/--scope/--body/--id/--expected-revision V…``
(``--json`` also after the command) runs the same code as the click command
(``cli/reads.py``, ``cli/saving.py``) and prints the same bytes, exit code included; click and
the command modules cost such a process more than a third of its time. Anything else — another
option, a value empty or starting with ``-``, an option given twice, ``--help``, a path option
naming a file (click refuses it), a choice click would refuse, a ``remember`` click would call
a usage error, ``memory`` on a terminal (it pages) — returns ``None`` from
:func:`plain_command`, and the full command line judges it, as it always has.
"""

from __future__ import annotations

import os
import sys

# Positional arguments each command takes: (fewest, most; None = any number).
_ARITY: dict[str, tuple[int, int | None]] = {
    "list": (0, 0),
    "memory": (0, 0),
    "read": (1, 1),
    "recall": (1, None),
    "remember": (0, 0),
}
# ``remember``'s options that take a value: option → keyword of ``saving.remember_fact``.
_REMEMBER = {
    "--name": "name",
    "--title": "title",
    "--description": "description",
    "--type": "fact_type",
    "--scope": "scope",
    "--body": "body",
    "--id": "fact_id",
    "--expected-revision": "expected_revision",
}


class PlainCommand:
    """A parsed plain command line: the command, its words and the global options."""

    __slots__ = ("args", "as_json", "command", "home", "options", "workspace")

    def __init__(
        self,
        command: str,
        args: list[str],
        home: str | None,
        workspace: str | None,
        as_json: bool,
        options: dict[str, str] | None = None,
    ) -> None:
        self.command = command
        self.args = args
        self.home = home
        self.workspace = workspace
        self.as_json = as_json
        self.options = options or {}  # ``remember``'s, by keyword


def plain_command(argv: list[str]) -> PlainCommand | None:
    """The command line as a plain read command, or ``None`` for the full command line."""
    options: dict[str, str] = {}
    as_json = False
    i = 0
    while i < len(argv):
        token = argv[i]
        name, eq, value = token.partition("=")
        if token == "--json":
            as_json = True
        elif name in ("--home", "--workspace"):
            if name in options:
                return None  # the same option twice: click judges
            if not eq:
                if i + 1 >= len(argv):
                    return None
                value = argv[i + 1]
                i += 1
            if not value or value.startswith("-") or os.path.isfile(value):
                return None  # click.Path(file_okay=False) refuses a file
            options[name] = value
        else:
            break
        i += 1
    if i >= len(argv) or argv[i] not in _ARITY:
        return None
    command = argv[i]
    words: list[str] = []
    given: dict[str, str] = {}
    rest = argv[i + 1 :]
    j = 0
    while j < len(rest):
        token = rest[j]
        name, eq, value = token.partition("=")
        if token == "--json":
            as_json = True
        elif command == "remember" and name in _REMEMBER:
            if not eq:
                if j + 1 >= len(rest):
                    return None
                value = rest[j + 1]
                j += 1
            if _REMEMBER[name] in given or not value or value.startswith("-"):
                return None
            given[_REMEMBER[name]] = value
        elif token.startswith("-"):
            return None
        else:
            words.append(token)
        j += 1
    if command == "remember" and not _plain_remember(given):
        return None
    fewest, most = _ARITY[command]
    if len(words) < fewest or (most is not None and len(words) > most):
        return None
    if command == "memory" and not as_json and sys.stdout is not None and sys.stdout.isatty():
        return None  # the summary goes through click's pager on a terminal
    return PlainCommand(
        command, words, options.get("--home"), options.get("--workspace"), as_json, given
    )


def _plain_remember(given: dict[str, str]) -> bool:
    """Whether click would accept these ``remember`` values as they are (else it judges)."""
    from ..facts.model import FACT_TYPES, SCOPES

    if given.get("fact_type", FACT_TYPES[0]) not in FACT_TYPES:
        return False
    if given.get("scope", SCOPES[0]) not in SCOPES:
        return False
    revision = given.get("expected_revision", "1")
    if not (revision.isascii() and revision.isdigit()):
        return False
    # Without --id, click's own checks ask for --name and a body (usage errors, exit 2).
    return "fact_id" in given or ("name" in given and "body" in given)


def run(plain: PlainCommand) -> int:
    """Run a plain command as its click command would; the exit code."""
    from ..errors import ContextEngineError
    from .context import CliContext, echo, echo_parts, fail
    from .reads import list_facts, read_fact, recall_message, summary, summary_printed

    ctx = CliContext(home=plain.home, workspace=plain.workspace, json=plain.as_json)
    try:
        try:
            if plain.command == "list":
                list_facts(ctx, None, None)
            elif plain.command == "read":
                read_fact(ctx, plain.args[0])
            elif plain.command == "remember":
                from .saving import remember_fact

                values = plain.options
                revision = values.get("expected_revision")
                remember_fact(
                    ctx,
                    name=values.get("name"),
                    title=values.get("title"),
                    description=values.get("description"),
                    body=values.get("body"),
                    fact_type=values.get("fact_type"),
                    scope=values.get("scope"),
                    fact_id=values.get("fact_id"),
                    expected_revision=None if revision is None else int(revision),
                )
            elif plain.command == "recall":
                from ..defaults import RECALL_BUDGET, RECALL_LIMIT

                recall_message(ctx, " ".join(plain.args), RECALL_LIMIT, RECALL_BUDGET)
            elif not ctx.json and (printed := summary_printed(ctx.catalog())) is not None:
                echo_parts(printed)  # what ``memory_cmds.page`` does off a terminal
            else:
                payload, text = summary(ctx.catalog())
                if ctx.json:
                    ctx.emit(payload, text)
                else:
                    echo(text)  # what ``memory_cmds.page`` does off a terminal
        except ContextEngineError as exc:  # as ``output.engine_errors``
            fail(ctx, exc.code, exc.message)
        except OSError as exc:
            fail(ctx, "io_error", str(exc))
        finally:
            ctx.close_catalog()
    except SystemExit as exc:
        return exc.code if isinstance(exc.code, int) else 1
    except OSError as exc:
        if not _broken_pipe(exc):
            raise
        return 1  # click's main: a closed pipe exits 1 without a message
    return 0


def _broken_pipe(exc: OSError) -> bool:
    import errno

    return exc.errno == errno.EPIPE
