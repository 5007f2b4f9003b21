"""An engine for OpenAI-compatible HTTP servers: llama.cpp's ``llama-server``, llama-cpp-python's
``llama_cpp.server``, vLLM, or anything that speaks ``POST /v1/chat/completions``.

Standard library only (``urllib``). The same contract as the llama.cpp engine: grammar or JSON
schema constraint (``engine.http_constraint``), pydantic validation, one retry, typed errors:
a server that is down or too slow raises :class:`~localmem.errors.EngineUnavailableError`, one
that answers with an error or with something that is not a chat completion raises
:class:`~localmem.errors.ModelError`.

Token counts come from the server's tokenizer when it offers one (``/extras/tokenize/count`` of
llama_cpp.server, ``/tokenize`` of llama-server); otherwise they are estimated as one token per
three bytes, which over-counts for English so that trimming errs on the safe side. The server's
context size is not discovered: set ``engine.n_ctx`` to it.
"""

from __future__ import annotations

import contextlib
import json
import math
import re
import urllib.error
import urllib.request
from collections.abc import Sequence
from typing import Any
from urllib.parse import urlparse

from localmem.config import EngineConfig
from localmem.errors import EngineUnavailableError, InputError, ModelError
from localmem.llm.base import (
    Engine,
    Generation,
    M,
    Message,
    MessageLike,
    Timer,
    Usage,
    as_messages,
    log,
    retry_temperature,
    text_generation,
    validated,
)
from localmem.llm.grammar import grammar_for_model

_MESSAGE_OVERHEAD = 8  # tokens a chat template adds around each message, roughly
_BYTES_PER_TOKEN_ESTIMATE = 3
_LOOPBACK = ("127.0.0.1", "localhost", "::1")


def _api_base(url: str) -> str:
    parsed = urlparse(url)
    if parsed.scheme not in ("http", "https") or not parsed.netloc:
        raise InputError(f"engine.http_url must be an http(s) URL, not {url!r}")
    base = url.rstrip("/")
    return base if base.endswith("/v1") else base + "/v1"


def _extract_json(text: str) -> str:
    """The JSON object in a reply, without code fences or chatter around it."""
    text = text.strip()
    fenced = re.match(r"^```(?:json)?\s*(.*?)\s*```$", text, re.DOTALL)
    if fenced:
        text = fenced.group(1)
    start, end = text.find("{"), text.rfind("}")
    return text[start : end + 1] if 0 <= start < end else text


class HttpEngine(Engine):
    """A model served over HTTP by an OpenAI-compatible server."""

    def __init__(
        self,
        url: str,
        *,
        model: str | None = None,
        api_key: str | None = None,
        timeout_s: float = 120.0,
        n_ctx: int = 4096,
        temperature: float = 0.0,
        seed: int = 42,
        max_tokens: int = 512,
        constraint: str = "gbnf",
    ) -> None:
        """Nothing is sent until the first call.

        Args:
            url: The server, e.g. ``http://127.0.0.1:8080`` (``/v1`` is added when missing).
            model: Model name sent with each request (servers with one model ignore it).
            api_key: Sent as a bearer token when set.
            timeout_s: Seconds to wait for a connection or an answer.
            n_ctx: The server's context size (used to trim prompts).
            temperature: 0 decodes greedily.
            seed: Sampling seed.
            max_tokens: Default limit on the output of one call.
            constraint: ``gbnf``, ``json_schema`` or ``none`` (see the config field).
        """
        if constraint not in ("gbnf", "json_schema", "none"):
            raise InputError(f"unknown HTTP constraint {constraint!r}")
        self.base = _api_base(url)
        self.root = self.base.removesuffix("/v1")
        self.model, self.api_key, self.timeout_s = model, api_key, timeout_s
        self.context_window = n_ctx
        self.temperature, self.seed, self.max_tokens = temperature, seed, max_tokens
        self.constraint = constraint
        host = urlparse(self.base).hostname or "server"
        self.name = f"http:{model or host}"
        # A local server must not be sent through a proxy taken from the environment.
        handlers = [urllib.request.ProxyHandler({})] if host in _LOOPBACK else []
        self._opener = urllib.request.build_opener(*handlers)
        self._tokenizer: str | None = None  # which tokenize endpoint works, once probed

    @classmethod
    def from_config(cls, config: EngineConfig) -> HttpEngine:
        """Build the engine from the ``engine`` config section."""
        if not config.http_url:
            raise InputError("engine.kind is 'http' but engine.http_url is not set")
        return cls(
            config.http_url,
            model=config.http_model,
            api_key=config.http_api_key,
            timeout_s=config.timeout_s,
            n_ctx=config.n_ctx,
            temperature=config.temperature,
            seed=config.seed,
            max_tokens=config.max_tokens,
            constraint=config.http_constraint,
        )

    # -- transport -----------------------------------------------------------------------

    def _request(self, url: str, body: dict[str, Any] | None = None) -> Any:
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        data = json.dumps(body).encode("utf-8") if body is not None else None
        request = urllib.request.Request(url, data=data, headers=headers)
        try:
            with self._opener.open(request, timeout=self.timeout_s) as response:
                raw = response.read()
        except urllib.error.HTTPError as exc:
            detail = exc.read().decode("utf-8", errors="replace")
            with contextlib.suppress(ValueError, KeyError, TypeError):
                detail = json.loads(detail)["error"]["message"]
            detail = " ".join(str(detail).split())[:200]  # one line for a person
            raise ModelError(f"{self.name}: the server answered {exc.code}: {detail}") from None
        except TimeoutError:
            raise EngineUnavailableError(
                f"{self.name}: no answer from {self.root} within {self.timeout_s:g} s "
                "(engine.timeout_s)"
            ) from None
        except (urllib.error.URLError, ConnectionError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise EngineUnavailableError(
                f"{self.name}: cannot reach {self.root} ({reason}); is the server running?"
            ) from None
        try:
            return json.loads(raw)
        except ValueError:
            raise ModelError(
                f"{self.name}: the server answered something that is not JSON: {raw[:80]!r}"
            ) from None

    def ping(self) -> list[str]:
        """The models the server lists (``GET /v1/models``); raises if it is not reachable."""
        answer = self._request(f"{self.base}/models")
        try:
            return [m["id"] for m in answer["data"]]
        except (KeyError, TypeError):
            raise ModelError(f"{self.name}: /v1/models answered {str(answer)[:80]}") from None

    def _chat(
        self,
        messages: list[Message],
        *,
        max_tokens: int,
        temperature: float,
        seed: int,
        extra: dict[str, Any] | None = None,
        stop: Sequence[str] = (),
    ) -> tuple[str, str, Usage]:
        body: dict[str, Any] = {
            "messages": [m.as_dict() for m in messages],
            "max_tokens": max_tokens,
            "temperature": temperature,
            "seed": seed,
            "stream": False,
        }
        if self.model:
            body["model"] = self.model
        if stop:
            body["stop"] = list(stop)
        body |= extra or {}
        with Timer() as timer:
            answer = self._request(f"{self.base}/chat/completions", body)
        try:
            choice = answer["choices"][0]
            text = choice["message"]["content"] or ""
            finish = choice.get("finish_reason") or "stop"
            usage = answer.get("usage") or {}
        except (KeyError, IndexError, TypeError):
            raise ModelError(
                f"{self.name}: the server's answer is not a chat completion: {str(answer)[:120]}"
            ) from None
        prompt_tokens = usage.get("prompt_tokens")
        if prompt_tokens is None:
            prompt_tokens = self.count_prompt_tokens(messages)
        completion_tokens = usage.get("completion_tokens")
        if completion_tokens is None:
            completion_tokens = self.count_tokens(text)
        return text, finish, Usage(int(prompt_tokens), int(completion_tokens), timer.seconds)

    # -- tokens --------------------------------------------------------------------------

    def count_tokens(self, text: str) -> int:
        """Tokens by the server's tokenizer when it has an endpoint, else an estimate."""
        if self._tokenizer is None:
            self._tokenizer = self._probe_tokenizer()
        if self._tokenizer == "extras":
            answer = self._request(f"{self.root}/extras/tokenize/count", {"input": text})
            return int(answer["count"])
        if self._tokenizer == "llama-server":
            return len(self._request(f"{self.root}/tokenize", {"content": text})["tokens"])
        return math.ceil(len(text.encode("utf-8")) / _BYTES_PER_TOKEN_ESTIMATE)

    def _probe_tokenizer(self) -> str:
        probes = (
            ("extras", f"{self.root}/extras/tokenize/count", {"input": "probe"}, "count"),
            ("llama-server", f"{self.root}/tokenize", {"content": "probe"}, "tokens"),
        )
        for name, url, body, key in probes:
            try:
                if key in self._request(url, body):
                    return name
            except (ModelError, TypeError):
                continue
        log.info("%s: no tokenize endpoint; token counts are estimates", self.name)
        return "estimate"

    def count_prompt_tokens(self, messages: list[Message]) -> int:
        """Tokens of all message texts plus a small allowance per message for the template."""
        text = "\n".join(m.render() for m in messages)
        return self.count_tokens(text) + _MESSAGE_OVERHEAD * len(messages)

    # -- generation ----------------------------------------------------------------------

    def _constraint(self, schema: type[M]) -> dict[str, Any]:
        grammar = grammar_for_model(schema)  # also refuses unbounded schemas, like llama.cpp
        if self.constraint == "gbnf":
            # llama.cpp servers: our grammar, and no repetition penalty (JSON repeats keys
            # and quotes by nature; the in-process engine does not penalise either)
            return {"grammar": grammar.gbnf, "repeat_penalty": 1.0}
        if self.constraint == "json_schema":
            return {
                "response_format": {
                    "type": "json_schema",
                    "json_schema": {
                        "name": schema.__name__,
                        "schema": schema.model_json_schema(),
                        "strict": True,
                    },
                }
            }
        return {}

    def generate_json(
        self, messages: Sequence[MessageLike], schema: type[M], *, max_tokens: int | None = None
    ) -> Generation[M]:
        """Generate an object of ``schema`` (see :meth:`Engine.generate_json`)."""
        extra = self._constraint(schema)
        limit = max_tokens or self.max_tokens
        fit = self.fit(messages, max_tokens=limit)

        def attempt(n: int) -> tuple[str, str, Usage]:
            return self._chat(
                fit.messages,
                max_tokens=limit,
                temperature=retry_temperature(self.temperature, n),
                seed=self.seed + n - 1,
                extra=extra,
            )

        return validated(self.name, schema, attempt, max_tokens=limit, fit=fit, parse=_extract_json)

    def generate_text(
        self,
        messages: Sequence[MessageLike],
        *,
        max_tokens: int | None = None,
        stop: Sequence[str] | None = None,
    ) -> Generation[str]:
        """Generate free text (see :meth:`Engine.generate_text`)."""
        limit = max_tokens or self.max_tokens
        fit = self.fit(as_messages(messages), max_tokens=limit)
        text, finish, usage = self._chat(
            fit.messages,
            max_tokens=limit,
            temperature=self.temperature,
            seed=self.seed,
            stop=stop or (),
        )
        return text_generation(self.name, text, finish, usage, fit)

    def describe(self) -> dict[str, Any]:
        """Where the server is and how it is used; sends nothing."""
        return {
            "name": self.name,
            "kind": "http",
            "url": self.base,
            "model": self.model,
            "constraint": self.constraint,
            "timeout_s": self.timeout_s,
            "context_window": self.context_window,
            "temperature": self.temperature,
            "seed": self.seed,
        }
