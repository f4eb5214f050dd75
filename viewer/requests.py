"""A request from a page or the API (untrusted JSON) read as a record, field by field.

viewer/server_api.py declares each server function's request as a msgspec record; `read` takes the JSON the way
a page's link is taken: a field missing, of another type or out of its bounds takes its default, text longer than
its bound is cut, numbers are read by viewer/untrusted.py's one rule. Nothing here raises on what a visitor sends.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from typing import Any, TypeVar

import msgspec

from .untrusted import MOST, number, whole

MAX_NESTED_BYTES = 4096  # a record the page sends back (a run context): it only labels what the server answers
R = TypeVar("R", bound=msgspec.Struct)
_BAD = object()


def lenient(t: msgspec.inspect.StructType) -> bool:
    """A record read field by field (a request, or a part of one): every field has a default."""
    i = msgspec.inspect
    return all(f.default is not i.NODEFAULT or f.default_factory is not i.NODEFAULT for f in t.fields)


def read(data: object, kind: type[R], unread: list[str] | None = None) -> R | None:
    """`data` (untrusted JSON) as a `kind`, field by field: a field missing, of another type or out of its bounds
    takes its default; text longer than its bound is cut; numbers are read by viewer/untrusted.py's rule (a
    link's "3" is 3). None when `data` is not an object. `unread` gets the names of the fields that were sent
    but could not be read, for a handler that names them rather than use the default."""
    if not isinstance(data, Mapping):
        return None
    got = {}
    for f in _fields(kind):
        if f.encode_name in data:
            value = _value(data[f.encode_name], f.type)
            if value is not _BAD:
                got[f.name] = value
            elif unread is not None:
                unread.append(f.encode_name)
    return kind(**got)


@functools.cache
def _fields(kind: type[msgspec.Struct]) -> tuple[msgspec.inspect.Field, ...]:
    """A record's fields with their types, worked out once per kind (msgspec's inspection walks every record a
    field refers to: ~0.7 ms for a request carrying a run context, on every call of a server function)."""
    info = msgspec.inspect.type_info(kind)
    assert isinstance(info, msgspec.inspect.StructType)
    return info.fields


def _value(v: object, t: msgspec.inspect.Type) -> Any:
    """`v` as type `t`, or _BAD."""
    i = msgspec.inspect
    if isinstance(t, i.UnionType):
        if v is None and any(isinstance(x, i.NoneType) for x in t.types):
            return None
        for x in t.types:
            if not isinstance(x, i.NoneType) and (got := _value(v, x)) is not _BAD:
                return got
        return _BAD
    if isinstance(t, i.StrType):
        return v[: t.max_length] if isinstance(v, str) else _BAD
    if isinstance(t, i.BoolType):
        return v if isinstance(v, bool) else _BAD
    if isinstance(t, i.IntType):
        got = whole(v, most=t.le if t.le is not None else MOST, least=t.ge if t.ge is not None else -MOST)
        return _BAD if got is None else got
    if isinstance(t, i.FloatType):
        got = number(v, 1e300, -1e300)
        return _BAD if got is None else got
    if isinstance(t, i.LiteralType):
        return v if isinstance(v, (str, int)) and v in t.values else _BAD
    if isinstance(t, i.ListType):
        if not isinstance(v, list):
            return _BAD
        items = [x for x in (_value(x, t.item_type) for x in v[:1000]) if x is not _BAD]
        return items[: t.max_length] if t.max_length is not None else items
    if isinstance(t, i.TupleType):
        if not isinstance(v, (list, tuple)) or len(v) != len(t.item_types):
            return _BAD
        pair = tuple(_value(x, xt) for x, xt in zip(v, t.item_types, strict=True))
        return _BAD if any(x is _BAD for x in pair) else pair
    if isinstance(t, i.StructType) and lenient(t):
        return read(v, t.cls) if isinstance(v, Mapping) else _BAD  # a part of the request: read as the request is
    if isinstance(t, i.StructType):  # a record the page was given and sends back: whole and small, or nothing
        try:
            if len(msgspec.json.encode(v)) > MAX_NESTED_BYTES:
                return _BAD
            return msgspec.convert(v, t.cls)
        except (msgspec.ValidationError, TypeError, ValueError):
            return _BAD
    raise TypeError(f"a request field of type {t!r}: teach viewer/server_api.py `read` to read it")


