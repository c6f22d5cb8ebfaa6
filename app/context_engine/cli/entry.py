"""The ``context-engine`` console script: ``hook`` answers before click or any command loads.

So do the plain read commands (``list``, ``memory``, ``read``, ``recall``: ``cli/fast.py``).

Agents run ``context-engine hook <agent> [event]`` once per prompt (docs/agents.md), so that
form goes straight to the hook runner — the same one the ``hook`` command calls — without
importing click and the command-line machinery (~100+ ms a prompt). Every other form, and any
hook command line this does not recognise as plain (help, ``--`` …), goes to the full CLI,
which gives the same result for it.
"""

from __future__ import annotations

import sys


def hook_argv(argv: list[str]) -> list[str] | None:
    """The hook runner's arguments for a plain ``[--home D] [--workspace D] hook …`` line.

    Global options may come before ``hook`` (``--home D`` / ``--home=D``, same for
    ``--workspace``); they are handed on as the runner's own options. ``None``: not a plain
    hook command line.
    """
    leading: list[str] = []
    i = 0
    while i < len(argv) and argv[i] != "hook":
        token = argv[i]
        name, eq, _ = token.partition("=")
        if name in ("--home", "--workspace") and eq:
            leading.append(token)
        elif token in ("--home", "--workspace") and i + 1 < len(argv):
            if argv[i + 1].startswith("-"):
                return None
            leading += [f"{token}={argv[i + 1]}"]
            i += 1
        else:
            return None
        i += 1
    if i >= len(argv):
        return None
    rest = argv[i + 1 :]
    given = {token.partition("=")[0] for token in leading}
    if any(token.partition("=")[0] in given for token in rest):
        return None  # the same option twice: let the full parser judge
    return [*leading, *rest]


def main() -> None:
    """Console-script entry point."""
    argv = hook_argv(sys.argv[1:])
    if argv is not None:
        from ..hooks.__main__ import quick_parse

        options = quick_parse(argv)
        if options is not None:
            import gc
            import os

            from ..hooks.runner import run
            from ..short_process import mark_short

            gc.disable()  # one short process: see hooks/__main__.py
            mark_short()  # NumPy, if a turn needs it, starts no BLAS threads
            code = run(
                options.agent,
                options.event,
                home=options.home,
                workspace=options.workspace,
                with_instructions=options.with_instructions,
            )
            sys.stdout.flush()
            sys.stderr.flush()
            os._exit(code)
    from ..facts import build_progress
    from .fast import plain_command

    build_progress.enable()  # a command a person runs: a first build shows how far it is
    plain = plain_command(sys.argv[1:])
    if plain is not None:
        import gc
        import os

        from ..short_process import mark_short
        from .fast import run as run_plain

        gc.disable()  # one short process, as a hook
        mark_short()
        try:
            code = run_plain(plain)
        except KeyboardInterrupt:
            # Harmless: the derived index keeps every committed batch, the recall state is
            # replaced whole or not at all (facts/build_progress.py).
            sys.stderr.write("\ncontext-engine: interrupted; what was built so far is kept\n")
            code = 130
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except OSError:
            code = code or 1
        os._exit(code)  # the catalog is closed and the output flushed: skip the teardown
    from .main import main as full_main

    full_main()
