"""``python -m context_engine.hooks [--home DIR] [--workspace DIR] <agent> [event]``.

The same as ``context-engine hook`` without loading the whole command line: the lean entry
point to register in an agent's hook settings, since it runs once per prompt.
"""

from __future__ import annotations

import gc

if __name__ == "__main__":
    # One short-lived process per prompt: collecting cycles among the ~10^5 objects the imports
    # and a snapshot build costs tens of ms and frees nothing the exit would not.
    gc.disable()

import os
import sys

from .protocol import AGENTS, Agent


class Options:
    """The parsed command line (a plain class: a relayed hook imports no ``typing``)."""

    __slots__ = ("agent", "event", "home", "with_instructions", "workspace")

    def __init__(
        self,
        home: str | None,
        workspace: str | None,
        with_instructions: bool,
        agent: Agent,
        event: str | None,
    ) -> None:
        self.home = home
        self.workspace = workspace
        self.with_instructions = with_instructions
        self.agent = agent
        self.event = event

    def _fields(self) -> tuple[str | None, str | None, bool, str, str | None]:
        return (self.home, self.workspace, self.with_instructions, self.agent, self.event)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Options):
            return NotImplemented
        return self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())

    def __repr__(self) -> str:
        return f"Options{self._fields()!r}"


def quick_parse(argv: list[str]) -> Options | None:
    """The usual hook command line (options, then ``agent [event]``) parsed without argparse.

    argparse's help formatter imports ``shutil`` (and lzma, bz2) even when no help is shown;
    anything but the plain form (help, abbreviations, ``--``, values starting with ``-``, an
    option after a positional, an unknown agent) returns ``None`` and goes to argparse, which
    gives the same result for every form this accepts (tested).
    """
    values: dict[str, str] = {}
    flag = False
    positional: list[str] = []
    i = 0
    while i < len(argv):
        token = argv[i]
        name, eq, value = token.partition("=")
        if token == "--with-instructions" and not positional:
            flag = True
        elif name in ("--home", "--workspace") and eq and not positional:
            values[name] = value
        elif token in ("--home", "--workspace") and not positional:
            if i + 1 >= len(argv) or argv[i + 1].startswith("-"):
                return None
            values[token] = argv[i + 1]
            i += 1
        elif token.startswith("-"):
            return None
        else:
            positional.append(token)
        i += 1
    if not 1 <= len(positional) <= 2:
        return None
    agent = next((name for name in AGENTS if name == positional[0]), None)
    if agent is None:
        return None
    event = positional[1] if len(positional) == 2 else None
    return Options(values.get("--home"), values.get("--workspace"), flag, agent, event)


def parse(argv: list[str]) -> Options:
    """The command line, by :func:`quick_parse` when it can, else by argparse."""
    quick = quick_parse(argv)
    return quick if quick is not None else full_parse(argv)


def full_parse(argv: list[str]) -> Options:
    """The command line by argparse (help, errors and every form it accepts)."""
    import argparse

    parser = argparse.ArgumentParser(prog="python -m context_engine.hooks")
    parser.add_argument("--home", help="Reasonix home (also the state root).")
    parser.add_argument("--workspace", help="Workspace directory (default: the payload's cwd).")
    parser.add_argument(
        "--with-instructions",
        action="store_true",
        help="SessionStart also adds the # Instructions block (REASONIX.md, AGENTS.md, …).",
    )
    parser.add_argument("agent", choices=AGENTS)
    parser.add_argument("event", nargs="?", help="Default: the payload's hook_event_name.")
    args = parser.parse_args(argv)
    agent: Agent = next(name for name in AGENTS if name == args.agent)
    return Options(args.home, args.workspace, args.with_instructions, agent, args.event)


def main(argv: list[str] | None = None) -> int:
    """Parse the few options a hook needs and answer one hook call."""
    from .runner import run

    options = parse(sys.argv[1:] if argv is None else argv)
    return run(
        options.agent,
        options.event,
        home=options.home,
        workspace=options.workspace,
        with_instructions=options.with_instructions,
    )


if __name__ == "__main__":
    code = main()
    # Everything is written (files atomically, stdout flushed next): skip tearing down the
    # ~10^5 objects of the snapshot and index one by one, ~10–20 ms of a hook's wall time.
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(code)
