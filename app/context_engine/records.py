"""Frozen value classes, made without importing ``dataclasses`` (issue 14: cold processes).

``@record`` turns an annotated class into what ``@dataclass(frozen=True, slots=True)`` makes —
``__init__`` with the defaults, ``__repr__``, ``__eq__`` and ``__hash__`` over the compared
fields, assignment refused, ``__slots__``, ``__match_args__``, pickling — from one generated
source per class. ``dataclasses`` (and ``inspect``, ``ast``, ``tokenize`` with it) costs a cold
process ~10–25 ms, and each ``@dataclass`` compiles five to eight functions, ~1 ms a class here.

``dataclasses.replace``/``fields``/``asdict`` keep working: ``__dataclass_fields__`` is built on
first use, from a twin dataclass (``dataclasses`` is imported only then). Type checkers see a
dataclass (PEP 681). Fields are declared as for a dataclass; ``field(default=…,
default_factory=…, compare=…, repr=…)`` as ``dataclasses.field``. Annotations must be strings
(``from __future__ import annotations``); inheriting a record's fields is supported.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar, dataclass_transform

T = TypeVar("T", bound=type)


class _Missing:
    __slots__ = ()

    def __repr__(self) -> str:
        return "MISSING"


MISSING: Any = _Missing()


class FrozenRecordError(AttributeError):
    """Assignment to a field of a record (``dataclasses.FrozenInstanceError``'s role)."""


class Field:
    """A field's declaration: its default (or factory) and whether it is compared."""

    __slots__ = ("compare", "default", "factory", "repr")

    def __init__(
        self, default: Any, factory: Callable[[], Any] | Any, compare: bool, repr: bool = True
    ) -> None:
        self.default = default
        self.factory = factory
        self.compare = compare
        self.repr = repr


def field(
    *, default: Any = MISSING, default_factory: Callable[[], Any] | Any = MISSING,
    compare: bool = True, repr: bool = True,
) -> Any:
    """A field with a default or a default factory, maybe left out of ``==``, the hash, repr."""
    return Field(default, default_factory, compare, repr)


class _Twin:
    """``__dataclass_fields__`` or ``__dataclass_params__``, taken on first use from a twin
    dataclass (so ``dataclasses`` functions, and a dataclass inheriting a record, work)."""

    def __init__(self, attribute: str) -> None:
        self.attribute = attribute

    def __get__(self, obj: object, owner: type) -> Any:
        import dataclasses

        specs = []
        fields: dict[str, Field] = owner.__record_fields__  # type: ignore[attr-defined]  # reason: set by record
        for name, spec in fields.items():
            kwargs: dict[str, Any] = {"compare": spec.compare, "repr": spec.repr}
            if spec.default is not MISSING:
                kwargs["default"] = spec.default
            if spec.factory is not MISSING:
                kwargs["default_factory"] = spec.factory
            specs.append((name, object, dataclasses.field(**kwargs)))
        twin = dataclasses.make_dataclass(owner.__name__, specs, frozen=True)
        for attribute in ("__dataclass_fields__", "__dataclass_params__"):
            type.__setattr__(owner, attribute, getattr(twin, attribute))
        return getattr(twin, self.attribute)


def _getter(names: list[str]) -> Callable[[object], tuple[Any, ...]]:
    """The values of ``names`` as a tuple (``attrgetter`` runs in C)."""
    if not names:
        return lambda _obj: ()
    if len(names) == 1:
        one = names[0]
        return lambda obj: (getattr(obj, one),)
    from operator import attrgetter

    return attrgetter(*names)


def _frozen_setattr(self: object, name: str, value: object) -> None:
    raise FrozenRecordError(f"cannot assign to field {name!r}")


def _frozen_delattr(self: object, name: str) -> None:
    raise FrozenRecordError(f"cannot delete field {name!r}")


@dataclass_transform(frozen_default=True, field_specifiers=(field,))
def record(cls: T) -> T:
    """The frozen, slotted value class of ``cls``'s annotated fields (see the module)."""
    inherited: dict[str, Field] = {}
    for base in reversed(cls.__mro__[1:]):
        inherited.update(getattr(base, "__record_fields__", {}))
    own: dict[str, Field] = {}
    body = dict(cls.__dict__)
    # Not ``inspect.get_annotations``: ``inspect`` is what a cold process is spared here.
    annotations = cls.__dict__.get("__annotations__", {})  # noqa: RUF063
    for name, annotation in annotations.items():
        if str(annotation).startswith(("ClassVar", "typing.ClassVar")):
            continue
        value = body.pop(name, MISSING)
        own[name] = value if isinstance(value, Field) else Field(value, MISSING, True)
    fields = {**inherited, **own}
    names = list(fields)
    compared = [n for n in names if fields[n].compare]
    shown_names = [n for n in names if fields[n].repr]
    params, lines, scope = [], [], {"_set": object.__setattr__, "_MISSING": MISSING}
    seen_default = False
    for name in names:
        spec = fields[name]
        if spec.factory is not MISSING:
            scope[f"_f_{name}"] = spec.factory
            params.append(f"{name}=_MISSING")
            lines.append(f"  _set(self, {name!r}, _f_{name}() if {name} is _MISSING else {name})")
            seen_default = True
            continue
        if spec.default is not MISSING:
            scope[f"_d_{name}"] = spec.default
            params.append(f"{name}=_d_{name}")
            seen_default = True
        elif seen_default:
            raise TypeError(f"non-default field {name!r} follows a default one in {cls.__name__}")
        else:
            params.append(name)
        lines.append(f"  _set(self, {name!r}, {name})")
    head = f"def __init__({', '.join(['self', *params])}):"
    exec("\n".join([head, *(lines or ["  pass"])]), scope)  # one compile per class
    init_function = scope["__init__"]
    init_function.__qualname__ = f"{cls.__qualname__}.__init__"
    body["__init__"] = init_function  # compiled: made per instance (100,000 facts a read)
    # The rest is shared code over C attribute getters: nothing more to compile.
    every, key, visible = _getter(names), _getter(compared), _getter(shown_names)

    def __repr__(self: Any) -> str:
        shown = ", ".join(f"{n}={v!r}" for n, v in zip(shown_names, visible(self), strict=True))
        return f"{type(self).__qualname__}({shown})"

    def __eq__(self: Any, other: object) -> bool:
        if other.__class__ is not self.__class__:
            return NotImplemented
        return bool(key(self) == key(other))

    def __hash__(self: Any) -> int:
        return hash(key(self))

    def __reduce__(self: Any) -> tuple[type, tuple[Any, ...]]:
        return (type(self), every(self))

    for function in (__repr__, __eq__, __hash__, __reduce__):
        function.__qualname__ = f"{cls.__qualname__}.{function.__name__}"
        body[function.__name__] = function
    body.pop("__dict__", None)
    body.pop("__weakref__", None)
    body["__slots__"] = tuple(own)
    body["__match_args__"] = tuple(names)
    body["__record_fields__"] = fields
    body["__dataclass_fields__"] = _Twin("__dataclass_fields__")
    body["__dataclass_params__"] = _Twin("__dataclass_params__")
    body["__setattr__"] = _frozen_setattr
    body["__delattr__"] = _frozen_delattr
    made = type(cls)(cls.__name__, cls.__bases__, body)
    made.__qualname__ = cls.__qualname__
    return made


R = TypeVar("R")


def replace(obj: R, /, **changes: Any) -> R:
    """``dataclasses.replace`` for a record (a dataclass is handed to ``dataclasses``)."""
    fields = getattr(type(obj), "__record_fields__", None)
    if fields is None:
        import dataclasses

        return dataclasses.replace(obj, **changes)  # type: ignore[type-var]  # reason: any dataclass
    values = {name: getattr(obj, name) for name in fields}
    values.update(changes)  # a name that is not a field: TypeError from __init__, as there
    return type(obj)(**values)
