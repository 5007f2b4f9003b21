"""The JSON-schema -> GBNF converter: what it accepts, what it refuses, and llama.cpp agreeing."""

from __future__ import annotations

from typing import Literal

import pytest
from pydantic import BaseModel, Field

from localmem.errors import SchemaError
from localmem.llm.grammar import GrammarError, grammar_for_model, grammar_from_json_schema
from localmem.llm.tasks import all_tasks, task_schema


class Inner(BaseModel):
    focus: Literal["time", "entities"]
    text: str = Field(min_length=1, max_length=20)


class Everything(BaseModel):
    items: list[Inner] = Field(min_length=1, max_length=3)
    note: str | None = Field(None, max_length=5)
    score: float = Field(ge=0, le=1)
    small: int = Field(ge=1, le=4)
    count: int = Field(ge=0)
    anything: float
    flag: bool
    fixed: Literal["x"]
    flags: list[bool] = Field(max_length=2)


def test_every_supported_construct_becomes_rules():
    g = grammar_for_model(Everything)
    assert g.gbnf.startswith("root ::= ")
    for piece in ('"\\"time\\""', "char{1,20}", '"1" | "2" | "3" | "4"', '"null"', '"true"'):
        assert piece in g.gbnf, piece
    assert "def-inner ::=" in g.gbnf  # nested model through $defs
    assert g.max_bytes > 0


def test_bound_is_an_upper_bound_of_real_outputs():
    value = Everything(
        items=[Inner(focus="entities", text="é" * 20)] * 3,
        note="abcde",
        score=0.123456,
        small=4,
        count=10**14,
        anything=-123456789012345.123456,
        flag=False,
        fixed="x",
        flags=[True, False],
    )
    text = value.model_dump_json()
    assert len(text.encode()) <= grammar_for_model(Everything).max_bytes


@pytest.mark.parametrize(
    ("schema", "message"),
    [
        ({"type": "string"}, "max_length"),
        ({"type": "array", "items": {"type": "integer"}}, "maxItems"),
        ({"type": "string", "maxLength": 5, "pattern": "a+"}, "pattern"),
        ({"type": "string", "maxLength": 5, "format": "date-time"}, "format"),
        ({"type": "object", "additionalProperties": {"type": "integer"}}, "dict"),
        ({"$ref": "#/$defs/Node", "$defs": {"Node": {"$ref": "#/$defs/Node"}}}, "recursive"),
        ({"type": "array", "prefixItems": [{"type": "integer"}], "maxItems": 1}, "prefixItems"),
        ({"enum": []}, "empty enum"),
        ({"not": {"type": "null"}}, "not supported"),
    ],
)
def test_unconvertible_schemas_raise_instead_of_falling_back(schema, message):
    with pytest.raises(GrammarError, match=message):
        grammar_from_json_schema(schema)


def test_grammar_error_is_a_schema_error():
    assert issubclass(GrammarError, SchemaError)


def test_unbounded_pydantic_model_is_refused():
    class Free(BaseModel):
        text: str

    with pytest.raises(GrammarError, match="text"):
        grammar_for_model(Free)


def test_literal_values_with_quotes_and_backslashes_survive_generation(tiny_engine):
    class Tricky(BaseModel):
        value: Literal['say "hi"', "back\\slash", "new\nline"]

    got = tiny_engine.generate_json([{"role": "user", "content": "pick"}], Tricky, max_tokens=40)
    assert got.value.value in ('say "hi"', "back\\slash", "new\nline")


@pytest.mark.parametrize("spec", all_tasks(), ids=lambda s: s.name)
def test_every_task_schema_converts(spec):
    # the base schema and the schema for the example's inputs
    grammar_for_model(spec.output)
    grammar_for_model(task_schema(spec.name, spec.example()))


@pytest.mark.parametrize("spec", all_tasks(), ids=lambda s: s.name)
def test_llama_cpp_parses_every_task_grammar(spec, tiny_llama):
    tiny_llama._check_grammar(grammar_for_model(task_schema(spec.name, spec.example())))


def test_llama_cpp_rejection_is_a_schema_error_not_a_crash(tiny_llama):
    from localmem.llm.grammar import Grammar

    with pytest.raises(SchemaError, match="rejected"):
        tiny_llama._check_grammar(Grammar('root ::= "a" undefined-rule\n', 1))
