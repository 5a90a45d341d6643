"""The local model's prompt, and the grammar its answer is held to (pure).

The gateway renders the prompt itself, in ChatML (SmolLM2's format, and that of llama.cpp's
``chatml-function-calling``), and asks the server's ``/v1/completions``, rather than letting the
server render a chat: llama-cpp-python's ``chatml-function-calling`` shows the tools only when a
request names a ``tool_choice``, cannot stream a round where the model may choose, answers such a
round's message empty, ignores ``max_tokens`` while a call's arguments are written, shows no tool
result to the model and HTML-escapes what it shows. Rendered here, every round of a session is an
extension of the one before (the server's KV cache holds its prefix), the tools are listed
compactly (a line of description and a signature each), a tool's result is in the prompt, and
the answer is held by a GBNF grammar to either ``message:`` and text, or one call
``functions.<name>:`` whose arguments are JSON matching the tool's schema: they always parse.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

from ..contracts.bodies import text_of

MESSAGE = "message:\n"  # how an answer in words begins
CALL = "functions."  # how a call begins: functions.<name>:\n{arguments}
END = "<|im_end|>"
LISTING = "Functions you can call:\n"
HOW = (
    "Answer with a message (begin with 'message:') or call one function (begin with "
    "'functions.<name>:' and its JSON arguments on the next line)."
)
# one character of a JSON string as json.dumps writes it (no raw control character)
GBNF_BASE = r"""
str ::= "\"" chr* "\""
chr ::= [^"\\\x00-\x1f] | "\\" (["\\/bfnrt] | "u" [0-9a-fA-F]{4})
int ::= "-"? ([0-9] | [1-9] [0-9]{1,15})
num ::= int ("." [0-9]{1,15})? ([eE] [-+]? [0-9]{1,15})?
bool ::= "true" | "false"
value ::= str | num | bool | "null" | "[" (value (", " value)*)? "]" | obj
obj ::= "{" (str ": " value (", " str ": " value)*)? "}"
text ::= [^\x00]*
"""


def first_sentence(text: str) -> str:
    """A tool description's first sentence, without its asides: its line in the listing."""
    sentence = re.split(r"(?<=[.!?])\s", " ".join(text.split()), maxsplit=1)[0]
    sentence = re.sub(r"\s*\([^)]*\)", "", sentence).split(":")[0].strip()
    return sentence if sentence.endswith((".", "!", "?")) else sentence + "."


def signature(schema: Any) -> str:
    """A schema as a person writes it: ``{"code": string, "note"?: string}``."""
    if not isinstance(schema, Mapping):
        return "any"
    if "enum" in schema and isinstance(schema["enum"], list):
        return "|".join(json.dumps(v) for v in schema["enum"])
    kind = schema.get("type")
    if kind == "object" or "properties" in schema:
        required = set(schema.get("required") or ())
        props = schema.get("properties") or {}
        order = sorted(props, key=lambda name: name not in required)  # as the grammar writes
        fields = [
            f"{json.dumps(name)}{'' if name in required else '?'}: {signature(props[name])}"
            for name in order
        ]
        return "{" + ", ".join(fields) + "}"
    if kind == "array":
        return f"[{signature(schema.get('items'))}]"
    return str(kind) if isinstance(kind, str) else "any"


def tool_parts(tool: Mapping[str, Any]) -> tuple[str, str, Any]:
    function = tool.get("function") or {}
    return (
        str(function.get("name") or ""),
        str(function.get("description") or ""),
        (function.get("parameters") or {"type": "object", "properties": {}}),
    )


def listing(tools: Sequence[Mapping[str, Any]]) -> str:
    """The tools as the system turn shows them: a line and a signature each."""
    lines = []
    for tool in tools:
        name, description, parameters = tool_parts(tool)
        lines.append(f"{CALL}{name}: {first_sentence(description)}\n{signature(parameters)}")
    return LISTING + "\n".join(lines)


def system_turn(system: str, tools: Sequence[Mapping[str, Any]]) -> str:
    """The system turn: the tools first, then the system text, then how to answer. The
    listing is the same in every session and the system text ends with the session's own
    lines (its notebook, its work folder: contracts/discipline.py), so a new session's prompt
    shares all but those lines with the last one in the server's KV cache, not only the
    text before them."""
    if not tools:
        return system
    return "\n\n".join(p for p in (listing(tools), system.strip(), HOW) if p)


def _call_names(messages: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """Each call id → its tool's name (a tool result names its call, not its tool)."""
    names: dict[str, str] = {}
    for message in messages:
        for call in message.get("tool_calls") or []:
            if isinstance(call, Mapping):
                function = call.get("function") or {}
                names[str(call.get("id"))] = str(function.get("name") or "")
    return names


def _assistant(message: Mapping[str, Any], tools: bool) -> str:
    parts = []
    content = text_of(message.get("content"))
    if content:
        parts.append((MESSAGE if tools else "") + content)
    for call in message.get("tool_calls") or []:
        function = call.get("function") or {} if isinstance(call, Mapping) else {}
        arguments = function.get("arguments")
        if not isinstance(arguments, str):
            arguments = json.dumps(arguments if arguments is not None else {})
        parts.append(f"{CALL}{function.get('name')}:\n{arguments}")
    return "\n".join(parts)


def render(messages: Sequence[Mapping[str, Any]], tools: Sequence[Mapping[str, Any]]) -> str:
    """The prompt for ``messages`` (OpenAI chat messages) with ``tools`` listed, ending where
    the assistant's answer begins."""
    names = _call_names(messages)
    turns: list[tuple[str, str]] = []
    listed = False  # the tools go in the first system turn (one is made when none is sent)
    if tools and not (messages and messages[0].get("role") == "system"):
        turns.append(("system", system_turn("", tools)))
        listed = True
    for message in messages:
        role = str(message.get("role") or "user")
        if role == "system":
            text = text_of(message.get("content"))
            turns.append(("system", text if listed else system_turn(text, tools)))
            listed = True
        elif role == "assistant":
            turns.append(("assistant", _assistant(message, bool(tools))))
        elif role == "tool":
            name = names.get(str(message.get("tool_call_id")), "the function")
            result = text_of(message.get("content"))
            turns.append(("user", f"Result of {CALL}{name}:\n{result}"))
        else:
            turns.append((role, text_of(message.get("content"))))
    prompt = "".join(f"<|im_start|>{role}\n{text}{END}\n" for role, text in turns)
    return prompt + "<|im_start|>assistant\n"


def _rule_name(text: str) -> str:
    return re.sub(r"[^a-zA-Z0-9]+", "-", text).strip("-").lower() or "x"


class Grammar:
    """GBNF rules for JSON matching a schema, as ``json.dumps`` writes it (``", "`` and
    ``": "``): required properties in order, then each optional one or not."""

    def __init__(self) -> None:
        self.rules: dict[str, str] = {}

    def add(self, name: str, body: str) -> str:
        base, n = name, 1
        while name in self.rules and self.rules[name] != body:
            n += 1
            name = f"{base}{n}"
        self.rules[name] = body
        return name

    def schema(self, schema: Any, name: str) -> str:
        """The rule for a value of ``schema``; a schema it cannot read takes any JSON."""
        if not isinstance(schema, Mapping):
            return "value"
        if isinstance(schema.get("enum"), list) and schema["enum"]:
            alternatives = " | ".join(_literal(json.dumps(v)) for v in schema["enum"])
            return self.add(name, alternatives)
        kind = schema.get("type")
        if kind == "object" or "properties" in schema:
            return self._object(schema, name)
        if kind == "array":
            item = self.schema(schema.get("items"), f"{name}-item")
            low = int(schema.get("minItems") or 0)
            rest = f'(", " {item})*'
            body = f'"[" {item} {rest} "]"' if low else f'"[" ({item} {rest})? "]"'
            return self.add(name, body)
        return {"string": "str", "integer": "int", "number": "num", "boolean": "bool"}.get(
            str(kind), "value"
        )

    def _object(self, schema: Mapping[str, Any], name: str) -> str:
        props = schema.get("properties") or {}
        if not isinstance(props, Mapping) or not props:
            return "obj"
        required = [p for p in schema.get("required") or () if p in props]
        if not required and len(props) > 1:
            return "obj"  # which one comes first is open: any object
        optional = [p for p in props if p not in required]
        pieces = []
        for i, prop in enumerate([*required, *optional]):
            rule = self.schema(props[prop], f"{name}-{_rule_name(prop)}")
            key = _literal(json.dumps(prop) + ": ")
            lead = "" if i == 0 else _literal(", ") + " "
            piece = f"{lead}{key} {rule}"
            pieces.append(piece if prop in required else f"({piece})?")
        return self.add(name, '"{" ' + " ".join(pieces) + ' "}"')


def _literal(text: str) -> str:
    return json.dumps(text)


def answer_grammar(
    tools: Sequence[Mapping[str, Any]], *, forced: str = "", words: bool = True
) -> str:
    """The grammar of a round's answer: ``message:`` and text (unless ``words`` is off or a
    tool is ``forced``), or one call of an offered tool (only ``forced``, when named)."""
    grammar = Grammar()
    calls = []
    for tool in tools:
        name, _, parameters = tool_parts(tool)
        if forced and name != forced:
            continue
        rule = grammar.schema(parameters, f"args-{_rule_name(name)}")
        head = _literal(f"{CALL}{name}:\n")
        calls.append(f"{head} {rule}")
    branches = ([_literal(MESSAGE) + " text"] if words and not forced else []) + calls
    if not branches:
        branches = [_literal(MESSAGE) + " text"]
    rules = [f"root ::= {' | '.join(branches)}"]
    rules += [f"{name} ::= {body}" for name, body in grammar.rules.items()]
    return "\n".join(rules) + GBNF_BASE
