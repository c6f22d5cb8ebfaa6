"""One catalog interface over a workspace's context: in process or over ``serve --stdio``."""

from .base import CAPABILITIES, Catalog
from .errors import Disconnected, Unavailable

__all__ = [
    "CAPABILITIES",
    "Catalog",
    "Disconnected",
    "LocalCatalog",
    "RemoteCatalog",
    "Unavailable",
]


def __getattr__(name: str) -> object:
    # Both pull in most of the engine; importing the package (the CLI does) stays cheap.
    if name == "LocalCatalog":
        from .local import LocalCatalog

        return LocalCatalog
    if name == "RemoteCatalog":
        from .remote import RemoteCatalog

        return RemoteCatalog
    raise AttributeError(name)
