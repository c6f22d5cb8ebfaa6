"""One catalog interface over a workspace's context: in process or over ``serve --stdio``."""

from .base import CAPABILITIES, Catalog
from .errors import Disconnected, Unavailable
from .local import LocalCatalog

__all__ = [
    "CAPABILITIES",
    "Catalog",
    "Disconnected",
    "LocalCatalog",
    "RemoteCatalog",
    "Unavailable",
]


def __getattr__(name: str) -> object:
    # The remote side pulls in subprocess plumbing; hosts that stay local never import it.
    if name == "RemoteCatalog":
        from .remote import RemoteCatalog

        return RemoteCatalog
    raise AttributeError(name)
