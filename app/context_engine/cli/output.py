"""Shared CLI plumbing: the click side of the per-invocation context and error exits (S12).

``CliContext``, its output and ``fail`` live in ``cli/context.py`` (no click there).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import ParamSpec, TypeVar

import click

from ..errors import ContextEngineError
from .context import CliContext, fail

__all__ = ["CliContext", "engine_errors", "fail", "pass_cli"]

P = ParamSpec("P")
R = TypeVar("R")


pass_cli = click.make_pass_decorator(CliContext)


def engine_errors(func: Callable[P, R]) -> Callable[P, R]:
    """Turn engine errors into exit 1 with a one-line message (S12)."""

    @wraps(func)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return func(*args, **kwargs)
        except ContextEngineError as exc:
            ctx = click.get_current_context().find_object(CliContext)
            fail(ctx or CliContext(None, None, False), exc.code, exc.message)
            raise AssertionError("unreachable") from exc
        except OSError as exc:
            ctx = click.get_current_context().find_object(CliContext)
            fail(ctx or CliContext(None, None, False), "io_error", str(exc))
            raise AssertionError("unreachable") from exc

    return wrapper
