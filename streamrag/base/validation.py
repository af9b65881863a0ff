"""The one translator of pydantic validation errors into streamrag's one-line errors.

Every loader of user settings (scenarios, sweep grids, latency profiles, analysis
settings, data records) validates with pydantic and reports the first problem as one line
naming the key a user would type: ``scenario s.toml: trigger.words: Input should be
greater than or equal to 1 (got 0)``.

Why a translator at all: pydantic's error location is a path through its *schema*, not
through the user's tables. It inserts the member of a union it tried (a discriminated
union's tag, ``resources.tool.servers.servers``; a plain union's type, ``data.split.int``),
a marker for a dict key (``latency.stages.X.[key]``) and validator wrappers
(``function-after[…]``). :func:`user_key` walks the model's types along the location and
keeps only the parts that are keys of the user's tables, so a key in a message typed back
with ``--set`` addresses the same setting. A discriminator that matches no member is
reported at the discriminator's own key (``trigger.kind``), where the user typed it.
"""

from __future__ import annotations

import types
import typing
from collections.abc import Mapping, Sequence
from typing import Annotated, Any, Literal, TypeVar, Union, get_args, get_origin

from pydantic import BaseModel, ConfigDict, ValidationError, model_validator
from pydantic_core import ErrorDetails, PydanticCustomError

from streamrag.base.errors import ConfigError

M = TypeVar("M", bound=BaseModel)

MAX_MS = 86_400_000.0
"""The longest duration a setting or a file may give in milliseconds (a day): a latency,
delay or word time beyond it is no turn of a conversation, and the virtual clock's
integer microseconds would overflow on the absurd ones (1e308)."""

MAX_WPS = 100.0
"""The fastest word rate a setting may give (words per second): ten times the fastest
speech or typing; beyond it a word's interval rounds to no time on the virtual clock."""

_SCALAR_TAGS: Mapping[type, str] = {int: "int", float: "float", str: "str", bool: "bool"}


def _strip(tp: Any) -> Any:
    while get_origin(tp) is Annotated:
        tp = get_args(tp)[0]
    return tp


def _members(tp: Any) -> list[Any] | None:
    """The non-None members of a union type, or None when ``tp`` is no union."""
    if get_origin(tp) in (Union, types.UnionType):
        return [_strip(m) for m in get_args(tp) if m is not type(None)]
    return None


def _is_model(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, BaseModel)


def _member_for(members: Sequence[Any], tag: str) -> Any:
    """The union member pydantic names by ``tag`` (a discriminator value, a type's name,
    ``literal[…]``, ``function-after[…, Name]``), or None when none matches."""
    for member in members:
        if _is_model(member):
            if tag == member.__name__ or tag.endswith(f", {member.__name__}]"):
                return member
            for field in member.model_fields.values():
                if get_origin(field.annotation) is Literal and tag in get_args(field.annotation):
                    return member
        elif _SCALAR_TAGS.get(member) == tag or (get_origin(member) is Literal and tag.startswith("literal[")):
            return member
    return None


def _child(tp: Any, part: Any) -> Any:
    """The type of ``part`` inside ``tp`` (a model's field, a dict's value, a sequence's
    item), or None when unknown."""
    if _is_model(tp):
        field = tp.model_fields.get(str(part))
        return None if field is None else _strip(field.annotation)
    origin = get_origin(tp)
    args = get_args(tp)
    if origin in (dict, Mapping, typing.Mapping) and len(args) == 2:
        return _strip(args[1])
    if origin in (list, tuple, Sequence) and args:
        return _strip(args[0])
    return None


def user_key(model: type[BaseModel], loc: Sequence[int | str], error_type: str = "", discriminator: str = "") -> str:
    """The dotted key a user types for pydantic location ``loc`` in ``model`` (a list's
    positions as numbers: ``search_results.0.page_result``)."""
    return ".".join(map(str, _user_parts(model, loc, error_type, discriminator)))


def _user_parts(model: type[BaseModel], loc: Sequence[int | str], error_type: str, discriminator: str) -> list[int | str]:
    out: list[int | str] = []
    tp: Any = model
    parts = [p for p in loc if not (isinstance(p, str) and (p.startswith("function-") or p == "[key]"))]
    i = 0
    while i < len(parts):
        members = None if tp is None else _members(tp)
        if members is not None and len(members) == 1:
            tp = members[0]  # ``X | None``: pydantic adds no tag
            continue
        if members is not None:
            tp = _member_for(members, str(parts[i]))  # the tag pydantic inserted: not a user key
            i += 1
            continue
        out.append(parts[i])
        tp = None if tp is None else _child(tp, parts[i])
        i += 1
    if error_type in ("union_tag_invalid", "union_tag_not_found") and discriminator:
        out.append(discriminator.strip("'\""))
    return out


def problem(error: ErrorDetails) -> str:
    """pydantic's message without the ``Value error, `` of a validator's ValueError (and
    in the user's words where pydantic speaks of its own machinery)."""
    if error.get("type") == "union_tag_not_found":  # a table of a union without its kind
        return "missing (the kind decides which other fields the table takes; streamrag list names the kinds)"
    return str(error.get("msg", "invalid")).removeprefix("Value error, ")


def error_key(model: type[BaseModel], error: ErrorDetails) -> str:
    """:func:`user_key` of one of a ValidationError's ``errors()``."""
    ctx = error.get("ctx") or {}
    return user_key(model, _location(error), error.get("type", ""), str(ctx.get("discriminator", "")))


def _location(error: ErrorDetails) -> tuple[int | str, ...]:
    """pydantic's location, plus the field a :class:`SettingsModel` check names."""
    loc = tuple(error.get("loc", ()))
    if error.get("type") == BOOL_FOR_NUMBER:
        return (*loc, str((error.get("ctx") or {})["field"]))
    return loc


def config_error(model: type[BaseModel], exc: ValidationError, where: str = "") -> ConfigError:
    """``WHERE: KEY: problem (got VALUE)`` for the first error of ``exc``.

    ``where`` names the file or setting (``scenario s.toml``; empty: the key starts the
    line); the value is shown when it is a scalar the user wrote. The key stops at a list
    (``--set`` sets a list whole); the position inside it precedes the problem:
    ``latency.stages.F.points: item [0][1]: …``."""
    err = exc.errors(include_url=False)[0]
    ctx = err.get("ctx") or {}
    parts = _user_parts(model, _location(err), err.get("type", ""), str(ctx.get("discriminator", "")))
    cut = next((i for i, part in enumerate(parts) if isinstance(part, int)), len(parts))
    key = ".".join(map(str, parts[:cut]))
    inside = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in parts[cut:])
    given = ctx["value"] if err.get("type") == BOOL_FOR_NUMBER else err.get("input")
    shown = "" if isinstance(given, dict) or given is None else f" (got {given!r})"
    head = ": ".join(part for part in (where, key, f"item {inside}" if inside else "") if part)
    return ConfigError(f"{head}: {problem(err)}{shown}" if head else f"{problem(err)}{shown}")


def validated(model: type[M], data: Any, where: str = "") -> M:
    """``model.model_validate(data)``; a :func:`config_error` instead of a ValidationError."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise config_error(model, exc, where) from None


# ------------------------------------------------------------------ the settings base


def _admits(tp: Any, kinds: tuple[type, ...]) -> bool:
    """Whether type ``tp`` (or a member of its union) is one of ``kinds`` or takes anything."""
    tp = _strip(tp)
    members = _members(tp)
    if members is not None:
        return any(_admits(m, kinds) for m in members)
    return tp is Any or tp is object or (isinstance(tp, type) and issubclass(tp, kinds))


def bool_for_number(value: Any, tp: Any) -> bool:
    """Whether ``value`` holds a boolean where ``tp`` expects a number: pydantic's lax mode
    takes ``true`` as 1 for an int or a float, so ``words = true`` would run as 1 word.
    Looks into lists, tuples and dict values by their item type."""
    tp = _strip(tp)
    if isinstance(value, bool):
        return _admits(tp, (int, float)) and not _admits(tp, (bool,))
    members = _members(tp)
    if members is not None and len(members) == 1:
        tp = members[0]
    origin, args = get_origin(tp), get_args(tp)
    if isinstance(value, list | tuple) and origin in (list, tuple, Sequence) and args:
        return any(bool_for_number(v, args[0]) for v in value)
    if isinstance(value, dict) and origin in (dict, Mapping, typing.Mapping) and len(args) == 2:
        return any(bool_for_number(v, args[1]) for v in value.values())
    return False


BOOL_FOR_NUMBER = "bool_for_number"
"""The error type of a boolean given for a number; its ``ctx`` names the ``field``."""


class SettingsModel(BaseModel):
    """The base of every settings model a user writes (scenario sections, grids, analysis
    and generator settings): frozen, no unknown key, and no boolean where a number is
    expected (``trigger.words = true`` is an error naming the key, not 1 word).

    A model validator, not a field validator: pydantic allows no before-validator on a
    discriminator field (``kind``); the error's ``ctx`` carries the field, which
    :func:`config_error` adds to the location."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    @model_validator(mode="before")
    @classmethod
    def _no_bool_for_a_number(cls, data: Any) -> Any:
        if isinstance(data, dict):
            for name, value in data.items():
                field = cls.model_fields.get(name) if isinstance(name, str) else None
                if field is not None and bool_for_number(value, field.annotation):
                    raise PydanticCustomError(
                        BOOL_FOR_NUMBER, "Input should be a number, not a boolean", {"field": name, "value": value}
                    )
        return data
