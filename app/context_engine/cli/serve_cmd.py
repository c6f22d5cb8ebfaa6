"""``context-engine serve --stdio``: serve one workspace's catalog to a remote client (issue 8).

stdout carries the protocol only: it is taken for the channel and ``sys.stdout`` is pointed at
stderr, so a stray print anywhere in the engine cannot corrupt a message.
"""

from __future__ import annotations

import sys

import click

from ..catalog.base import CAPABILITIES
from ..paths import EnginePaths
from .output import CliContext, engine_errors, pass_cli


@click.command("serve")
@click.option("--stdio", is_flag=True, required=True, help="Speak JSON-RPC 2.0 on stdin/stdout.")
@click.option("--home", "serve_home", type=click.Path(file_okay=False), help="Reasonix home.")
@click.option("--workspace", "serve_workspace", type=click.Path(file_okay=False), help="Workspace.")
@click.option(
    "--without",
    multiple=True,
    type=click.Choice(CAPABILITIES),
    help="Do not offer this capability (repeatable).",
)
@click.option("--no-watch", is_flag=True, help="Do not push change notifications.")
@click.option(
    "--confirm-timeout",
    type=float,
    default=600.0,
    show_default=True,
    help="Seconds to wait for the person's answer; no answer is a refusal.",
)
@pass_cli
@engine_errors
def serve_cmd(
    ctx: CliContext,
    stdio: bool,
    serve_home: str | None,
    serve_workspace: str | None,
    without: tuple[str, ...],
    no_watch: bool,
    confirm_timeout: float,
) -> None:
    """Serve this workspace's catalog over stdin/stdout (e.g. through ssh)."""
    from ..catalog.local import LocalCatalog
    from ..remote.server import serve_stdio

    paths = EnginePaths.resolve(
        home=serve_home if serve_home is not None else ctx.home,
        workspace=serve_workspace if serve_workspace is not None else ctx.workspace,
    )
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr
    catalog = LocalCatalog(paths, without=without)
    catalog.index.watch_changes = True  # a long-lived host: store changes come from the kernel
    try:
        serve_stdio(catalog, stdin, stdout, confirm_timeout=confirm_timeout, watch=not no_watch)
    finally:
        catalog.close()


def register(group: click.Group) -> None:
    """Attach ``serve``."""
    group.add_command(serve_cmd)
