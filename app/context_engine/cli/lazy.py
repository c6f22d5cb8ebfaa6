"""A click group that imports a command's module only when that command runs (S12 start-up).

It also gives every command it loads the global options ``--home``, ``--workspace`` and
``--json``, so they may follow the command as well as precede it (``list --json``).
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from typing import Any

import click
from click.shell_completion import CompletionItem

from .registry import COMPLETED_ARGUMENTS, CompletionKind

# Global options that may follow the command: option name -> CliContext attribute.
GLOBAL_AFTER: dict[str, str] = {"--home": "home", "--workspace": "workspace", "--json": "json"}


class LazyGroup(click.Group):
    """A group whose commands live in other modules, loaded on first use.

    ``entries`` maps a command name to (module under ``context_engine.cli``, attribute);
    ``short_help`` gives the one line ``--help`` lists without loading the command.
    """

    def __init__(
        self,
        *args: Any,
        entries: Mapping[str, tuple[str, str]] | None = None,
        short_help_table: Mapping[str, str] | None = None,
        path: tuple[str, ...] = (),
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.entries: Mapping[str, tuple[str, str]] = entries or {}
        self.short_help_table: Mapping[str, str] = short_help_table or {}
        self.path = path
        self._loaded: set[str] = set()

    def list_commands(self, ctx: click.Context) -> list[str]:
        """Every command name, loaded or not, in the table's order."""
        return list(dict.fromkeys([*self.entries, *self.commands]))

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """The command, importing its module the first time."""
        if cmd_name in self.entries and cmd_name not in self._loaded:
            module_name, attribute = self.entries[cmd_name]
            module = importlib.import_module(f"{__package__}.{module_name}")
            command = getattr(module, attribute)
            if not isinstance(command, click.Command):  # pragma: no cover - a table error
                raise TypeError(f"{module_name}.{attribute} is not a click command")
            prepare(command, (*self.path, cmd_name))
            self.add_command(command, cmd_name)
            self._loaded.add(cmd_name)
        return self.commands.get(cmd_name)

    def shell_complete(self, ctx: click.Context, incomplete: str) -> list[CompletionItem]:
        """Complete command names from the table (click's own would import every command)."""
        items = [
            CompletionItem(name, help=self.short_help_table.get(name))
            for name in self.list_commands(ctx)
            if name.startswith(incomplete)
        ]
        return items + click.Command.shell_complete(self, ctx, incomplete)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """List the commands from the table's short help, importing none of them."""
        rows: list[tuple[str, str]] = []
        limit = (
            formatter.width - 6 - max((len(name) for name in self.list_commands(ctx)), default=0)
        )
        for name in self.list_commands(ctx):
            loaded = self.commands.get(name)
            if loaded is not None and loaded.hidden:
                continue
            text = self.short_help_table.get(name)
            if text is None:
                command = self.get_command(ctx, name)
                text = command.get_short_help_str(limit) if command is not None else ""
            rows.append((name, shorten(text, max(limit, 45))))
        if rows:
            with formatter.section("Commands"):
                formatter.write_dl(rows)


def shorten(text: str, limit: int) -> str:
    """``text`` cut at a word boundary to at most ``limit`` characters, ``...`` marking a cut."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 3].rsplit(" ", 1)[0]
    return f"{cut}..."


def prepare(command: click.Command, path: tuple[str, ...]) -> None:
    """Add the global options that may follow the command, and its shell completers."""
    names = {opt for param in command.params for opt in getattr(param, "opts", ())}
    if "--json" not in names:
        command.params.append(
            click.Option(
                ["--json"],
                is_flag=True,
                expose_value=False,
                callback=_set_global,
                help="Print one JSON object on stdout (also before the command).",
            )
        )
    for option in ("--home", "--workspace"):
        if option not in names:
            command.params.append(
                click.Option(
                    [option],
                    type=click.Path(file_okay=False),
                    expose_value=False,
                    callback=_set_global,
                    hidden=True,
                )
            )
    for completed_path, argument, kind in COMPLETED_ARGUMENTS:
        if completed_path == path:
            for param in command.params:
                if param.name == argument:
                    # click keeps the callback here (Parameter(shell_complete=...)); the commands
                    # are other modules', so it is attached rather than redefined.
                    param._custom_shell_complete = lazy_completer(kind)


def _set_global(ctx: click.Context, param: click.Parameter, value: Any) -> None:
    """Store a global option given after the command on the invocation's context."""
    from .output import CliContext

    if value is None or value is False:
        return
    obj = ctx.find_object(CliContext)
    if obj is None:  # pragma: no cover - the root callback always makes one
        return
    attribute = GLOBAL_AFTER[max(param.opts, key=len)]
    before = getattr(obj, attribute)
    if attribute != "json" and before is not None and before != value:
        raise click.UsageError(f"{param.opts[0]} given twice with different values", ctx)
    setattr(obj, attribute, value)


def lazy_completer(
    kind: CompletionKind,
) -> Callable[[click.Context, click.Parameter, str], list[CompletionItem]]:
    """A shell-completion callback that loads the catalog only when a person presses TAB."""

    def complete(
        ctx: click.Context, param: click.Parameter, incomplete: str
    ) -> list[CompletionItem]:
        from .completion_cmds import completer

        return completer(kind)(ctx, param, incomplete)

    return complete
