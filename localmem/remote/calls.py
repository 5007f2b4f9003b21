"""The client's methods, made from the declaration: one per operation a server answers."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from typing import Any

from localmem import wire
from localmem.api import Operation, operations
from localmem.remote.transport import BadArguments


def install(cls: type, owners: Iterable[str]) -> None:
    """Give ``cls`` a method for every operation of ``owners`` it does not define itself.

    ``cls`` has a ``call(name, **arguments)`` that sends one request and returns the JSON
    answer; a method of its own (written where the client does more than send) wins.
    """
    for op in operations().values():
        if op.owner in owners and not op.local and op.attribute not in vars(cls):
            setattr(cls, op.attribute, _method(op))


def _method(op: Operation) -> Callable[..., Any]:
    """A method that binds its arguments as the declaration says, sends the ones given (the
    server applies the defaults) and decodes the answer into the declared type."""
    me = inspect.Parameter("self", inspect.Parameter.POSITIONAL_OR_KEYWORD)
    signature = op.signature.replace(parameters=[me, *op.signature.parameters.values()])
    local = {p.name for p in op.params if p.local}
    spread = {p.name for p in op.params if p.kind is inspect.Parameter.VAR_KEYWORD}

    def method(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            bound = signature.bind(self, *args, **kwargs)
        except TypeError as exc:
            raise BadArguments(f"{op.name}: {exc}") from None
        sent: dict[str, Any] = {}
        for name, value in bound.arguments.items():
            if name in spread:
                sent.update(value)
            elif name != "self" and name not in local:
                sent[name] = value
        return wire.decode(op.result_type, self.call(op.name, **sent))

    method.__name__ = method.__qualname__ = op.attribute
    method.__doc__ = op.doc
    method.__signature__ = signature  # type: ignore[attr-defined]
    return method
