"""Every leaf of the scenario model, with the ``--set`` overrides that select its union
members: walked once here for the error-key tests and the hostile catalogue (not a test module)."""

from __future__ import annotations

import types
from collections.abc import Iterator
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel

from streamrag.simulator.scenario import Scenario

BASE = "load"  # the built-in scenario with every optional section set ([resources], [load])


def _strip(tp: Any) -> Any:
    while get_origin(tp) is Annotated:
        tp = get_args(tp)[0]
    return tp


def _leaves(tp: Any, path: str, select: tuple[str, ...]) -> Iterator[tuple[str, tuple[str, ...]]]:
    """(dotted path, the ``--set`` overrides selecting its union members) of every leaf."""
    tp = _strip(tp)
    if get_origin(tp) in (Union, types.UnionType):
        members = [_strip(m) for m in get_args(tp) if m is not type(None)]
        models = [m for m in members if isinstance(m, type) and issubclass(m, BaseModel)]
        tagged = [m for m in models if "kind" in m.model_fields]
        for member in tagged:
            yield from _leaves(member, path, (*select, f"{path}.kind={member.model_fields['kind'].default}"))
        if not tagged:
            for member in models:
                yield from _leaves(member, path, select)
        if not models:
            yield path, select
        return
    if isinstance(tp, type) and issubclass(tp, BaseModel):
        for name, field in tp.model_fields.items():
            yield from _leaves(field.annotation, f"{path}.{name}" if path else name, select)
        return
    if get_origin(tp) is dict:
        key_type, value_type = get_args(tp)
        keys = get_args(_strip(key_type)) if get_origin(_strip(key_type)) is Literal else ("x",)
        for key in keys:
            yield from _leaves(value_type, f"{path}.{key}", select)
        return
    yield path, select


LEAVES = sorted(set(_leaves(Scenario, "", ())))
