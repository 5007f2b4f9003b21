"""JSON schema -> GBNF grammar for llama.cpp, written for localmem's task schemas.

Why our own converter: llama-cpp-python's helper silently falls back to "any JSON" when it meets
a schema it cannot convert, which turns a broken schema into unconstrained output. This one
raises :class:`GrammarError` instead, naming the place in the schema.

What it converts: objects (every property is emitted, in declared order: pydantic accepts a
non-required property that is present, and a fixed order keeps the grammar small), strings with a
``maxLength`` (and ``minLength``), ``enum``/``const`` (``Literal``), arrays with ``maxItems``
(and ``minItems``), integers, numbers, booleans, null, ``anyOf`` (``Optional``), and nested models
through ``$defs``/``$ref``.

Every string and array must be bounded: the grammar then admits only finitely long outputs, so
even a random-weight model reaches the end and stops. :attr:`Grammar.max_bytes` says how long
the longest admitted output is, which the engine uses to check ``max_tokens``.

Ranges the grammar cannot express exactly (``minimum`` 3 on a large integer, a list without
duplicates) are approximated from above; pydantic validates afterwards.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from pydantic import BaseModel

from localmem.errors import SchemaError

# A character inside a JSON string. No \uXXXX escapes: a model could emit a lone surrogate,
# which is not valid text; any character can be written raw instead.
_CHAR_RULE = r'char ::= [^"\\\x00-\x1f] | "\\" ["\\/bfnrt]'
_CHAR_MAX_BYTES = 4  # one UTF-8 character
_WS_RULE = 'ws ::= " "?'  # at most one space after ':' and ',' (bounded on purpose)

_INT_DIGITS = 15  # fits a float64 exactly
_FRACTION_DIGITS = 6
_ENUMERATE_INT_RANGE = 64  # small integer ranges are listed exactly

# Keys that only annotate a schema.
_ANNOTATIONS = frozenset(
    {"title", "description", "default", "examples", "$schema", "$comment", "$defs"}
)
_ALLOWED = {
    "object": {"type", "properties", "required", "additionalProperties"},
    "string": {"type", "maxLength", "minLength"},
    "integer": {"type", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"},
    "number": {"type", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"},
    "array": {"type", "items", "maxItems", "minItems", "uniqueItems"},
    "boolean": {"type"},
    "null": {"type"},
}


class GrammarError(SchemaError):
    """A JSON schema that this converter cannot turn into a bounded grammar."""


@dataclass(frozen=True)
class Grammar:
    """A GBNF grammar (root rule ``root``) and the longest output it admits, in bytes."""

    gbnf: str
    max_bytes: int


def gbnf_literal(text: str) -> str:
    """Quote ``text`` as a GBNF string literal."""
    out = text.replace("\\", "\\\\").replace('"', '\\"')
    return '"' + out.replace("\n", "\\n").replace("\r", "\\r").replace("\t", "\\t") + '"'


def _rule_name(hint: str) -> str:
    name = re.sub(r"[^a-zA-Z0-9]+", "-", hint).strip("-").lower()
    return name or "rule"


class _Builder:
    def __init__(self, schema: dict[str, Any]) -> None:
        self.defs: dict[str, Any] = schema.get("$defs", {})
        self.rules: dict[str, str] = {}
        self.def_rules: dict[str, tuple[str, int]] = {}
        self.in_progress: set[str] = set()
        self.uses_char = False
        self.uses_ws = False

    def fail(self, where: str, why: str) -> GrammarError:
        return GrammarError(f"cannot build a grammar for {where or 'the schema root'}: {why}")

    def add_rule(self, hint: str, body: str) -> str:
        name = _rule_name(hint)
        base, n = name, 2
        while name in self.rules or name in ("root", "char", "ws"):
            name, n = f"{base}-{n}", n + 1
        self.rules[name] = body
        return name

    def visit(self, node: Any, where: str) -> tuple[str, int]:
        """An expression for ``node`` and the most bytes it can produce."""
        if not isinstance(node, dict):
            raise self.fail(where, f"expected a schema object, got {node!r}")
        node = {k: v for k, v in node.items() if k not in _ANNOTATIONS}
        if "$ref" in node:
            return self.visit_ref(node, where)
        if "allOf" in node:
            parts = node["allOf"]
            if len(parts) != 1 or len(node) != 1:
                raise self.fail(where, "allOf with more than one schema is not supported")
            return self.visit(parts[0], where)
        if "anyOf" in node or "oneOf" in node:
            key = "anyOf" if "anyOf" in node else "oneOf"
            if len(node) != 1:
                extra = sorted(set(node) - {key})
                raise self.fail(where, f"{key} beside {extra} is not supported")
            return self.alternatives(
                [self.visit(sub, f"{where}|{i}") for i, sub in enumerate(node[key])]
            )
        if "enum" in node or "const" in node:
            values = node["enum"] if "enum" in node else [node["const"]]
            if not values:
                raise self.fail(where, "an empty enum admits no value")
            encoded = [json.dumps(v, ensure_ascii=False) for v in values]
            return self.alternatives([(gbnf_literal(e), len(e.encode())) for e in encoded])
        kind = node.get("type")
        if isinstance(kind, list):
            return self.alternatives(
                [self.visit({**node, "type": k}, f"{where}<{k}>") for k in kind]
            )
        if kind not in _ALLOWED:
            raise self.fail(where, f"type {kind!r} is not supported")
        unknown = sorted(set(node) - _ALLOWED[kind])
        if unknown:
            raise self.fail(where, f"keyword(s) {', '.join(unknown)} not supported for {kind}")
        return getattr(self, f"visit_{kind}")(node, where)

    def alternatives(self, options: list[tuple[str, int]]) -> tuple[str, int]:
        if len(options) == 1:
            return options[0]
        return "(" + " | ".join(e for e, _ in options) + ")", max(n for _, n in options)

    def visit_ref(self, node: dict[str, Any], where: str) -> tuple[str, int]:
        ref = node["$ref"]
        if len(node) != 1:
            raise self.fail(where, "$ref beside other keywords is not supported")
        if not ref.startswith("#/$defs/"):
            raise self.fail(where, f"only local $defs references are supported, not {ref}")
        name = ref.removeprefix("#/$defs/")
        if name in self.def_rules:
            return self.def_rules[name]
        if name in self.in_progress:
            raise self.fail(where, f"recursive model {name} has no bound on its size")
        if name not in self.defs:
            raise self.fail(where, f"undefined reference {ref}")
        self.in_progress.add(name)
        expr, size = self.visit(self.defs[name], name)
        self.in_progress.discard(name)
        rule = self.add_rule(f"def-{name}", expr)
        self.def_rules[name] = (rule, size)
        return rule, size

    def visit_object(self, node: dict[str, Any], where: str) -> tuple[str, int]:
        props: dict[str, Any] = node.get("properties", {})
        extra = node.get("additionalProperties", False)
        if extra not in (False, None) and not props:
            raise self.fail(where, "free-form mappings (dict fields) are not supported")
        missing = set(node.get("required", [])) - set(props)
        if missing:
            raise self.fail(where, f"required names without a schema: {sorted(missing)}")
        if not props:
            return '"{}"', 2
        parts, size = [], 2
        for i, (key, sub) in enumerate(props.items()):
            expr, n = self.visit(sub, f"{where}.{key}" if where else key)
            key_json = json.dumps(key, ensure_ascii=False)
            sep = "" if i == 0 else '"," ws '
            parts.append(f"{sep}{gbnf_literal(key_json + ':')} ws {expr}")
            size += (2 if i else 0) + len(key_json.encode()) + 2 + n
        self.uses_ws = True
        return '"{" ' + " ".join(parts) + ' "}"', size

    def visit_string(self, node: dict[str, Any], where: str) -> tuple[str, int]:
        if "maxLength" not in node:
            raise self.fail(where, "a string needs max_length so the output is bounded")
        low, high = int(node.get("minLength", 0)), int(node["maxLength"])
        if high < low:
            raise self.fail(where, f"maxLength {high} < minLength {low}")
        self.uses_char = True
        return f'"\\"" char{{{low},{high}}} "\\""', 2 + high * _CHAR_MAX_BYTES

    def visit_integer(self, node: dict[str, Any], where: str) -> tuple[str, int]:
        low, high = _bounds(node, integer=True)
        if low is not None and high is not None:
            if high < low:
                raise self.fail(where, f"empty integer range {low}..{high}")
            if high - low < _ENUMERATE_INT_RANGE:
                return self.alternatives(
                    [(gbnf_literal(str(v)), len(str(v))) for v in range(int(low), int(high) + 1)]
                )
        sign = "" if low is not None and low >= 0 else '"-"? '
        body = f'{sign}("0" | [1-9] [0-9]{{0,{_INT_DIGITS - 1}}})'
        return f"({body})", _INT_DIGITS + (len(sign) > 0)

    def visit_number(self, node: dict[str, Any], where: str) -> tuple[str, int]:
        low, high = _bounds(node, integer=False)
        if low is not None and high is not None and low >= 0 and high <= 1:
            # The common 0..1 score: a grammar that cannot leave the interval.
            frac = f"[0-9]{{1,{_FRACTION_DIGITS}}}"
            return f'("0" ("." {frac})? | "1" ("." "0"{{1,{_FRACTION_DIGITS}}})?)', 8
        sign = "" if low is not None and low >= 0 else '"-"? '
        body = (
            f'{sign}("0" | [1-9] [0-9]{{0,{_INT_DIGITS - 1}}}) ("." [0-9]{{1,{_FRACTION_DIGITS}}})?'
        )
        return f"({body})", 1 + _INT_DIGITS + 1 + _FRACTION_DIGITS

    def visit_boolean(self, node: dict[str, Any], where: str) -> tuple[str, int]:
        return '("true" | "false")', 5

    def visit_null(self, node: dict[str, Any], where: str) -> tuple[str, int]:
        return '"null"', 4

    def visit_array(self, node: dict[str, Any], where: str) -> tuple[str, int]:
        if "items" not in node or not isinstance(node["items"], dict):
            raise self.fail(where, "an array needs one items schema")
        if "maxItems" not in node:
            raise self.fail(where, "an array needs max_length (maxItems) so it is bounded")
        low, high = int(node.get("minItems", 0)), int(node["maxItems"])
        if high < low:
            raise self.fail(where, f"maxItems {high} < minItems {low}")
        if high == 0:
            return '"[]"', 2
        item, n = self.visit(node["items"], f"{where}[]")
        rule = self.add_rule(f"{where or 'root'}-item", item)
        self.uses_ws = True
        more = f'("," ws {rule}){{{max(low - 1, 0)},{high - 1}}}'
        body = f"{rule} {more}"
        if low == 0:
            body = f"({body})?"
        return f'"[" {body} "]"', 2 + high * n + (high - 1) * 2


def _bounds(node: dict[str, Any], *, integer: bool) -> tuple[float | None, float | None]:
    step = 1 if integer else 0
    low = node.get("minimum")
    if "exclusiveMinimum" in node:
        low = node["exclusiveMinimum"] + step
    high = node.get("maximum")
    if "exclusiveMaximum" in node:
        high = node["exclusiveMaximum"] - step
    return low, high


def grammar_from_json_schema(schema: dict[str, Any]) -> Grammar:
    """Convert a JSON schema (as pydantic writes it) into a bounded GBNF grammar.

    Raises:
        GrammarError: The schema uses something the converter does not handle, or is unbounded.
    """
    builder = _Builder(schema)
    expr, size = builder.visit(schema, "")
    lines = [f"root ::= {expr}"]
    lines += [f"{name} ::= {body}" for name, body in builder.rules.items()]
    if builder.uses_char:
        lines.append(_CHAR_RULE)
    if builder.uses_ws:
        lines.append(_WS_RULE)
    return Grammar(gbnf="\n".join(lines) + "\n", max_bytes=size)


@lru_cache(maxsize=256)
def grammar_for_model(model: type[BaseModel]) -> Grammar:
    """The grammar of a pydantic model's JSON schema (cached per model class)."""
    return grammar_from_json_schema(model.model_json_schema())
