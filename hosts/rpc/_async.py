"""Async questions over RPC (``pi-recipes rpc --async-questions``): the agent's
``ask_user_async`` and ``await_answers`` calls are handed to the client driving it.

The client (a graph engine running the node on its ``pi`` backend) owns the run's store and is
the only side that can keep a question or wait for its answers, as Iterion's pi extension
reports to Iterion: each call goes out as an ``extension_ui_request`` of method
``ask_user_async`` (``question``, ``options``, ``allowFreeText``, ``toolCallId``; the answer's
``value`` is the question's interaction id) or ``await_answers`` (``toolCallId``; the
``value`` is the answers' text, sent once every posted question is answered). An ``error``
response refuses the call: the model reads it. The answers themselves arrive as ``steer``
messages while the agent works.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from hosts.rpc._ui import RpcDialogUI
from interactions.asks import interrupt_ttl
from recipes.messages import UserMessage

__all__ = ["RpcAsyncQuestions"]

POST_TIMEOUT = 120.0
"""Seconds the client has to store a posted question."""

AWAIT_SLACK = 30.0
"""Seconds an ``await_answers`` call waits past the questions' lifetime: the client settles a
question that expires meanwhile at its expiry, and its reply must not lose the race with this
side's own bound (the call starts a little after the questions were posted)."""


class RpcAsyncQuestions:
    """The :class:`~recipes.async_questions.AsyncQuestions` binder of an agent served over RPC:
    every call goes to the client through ``ui``. ``env`` bounds a wait for answers (the
    questions' lifetime, ``PI_INTERRUPT_TTL_SECONDS``, and :data:`AWAIT_SLACK`); the client
    bounds it sooner."""

    def __init__(self, ui: RpcDialogUI, env: Mapping[str, str]) -> None:
        self._ui = ui
        self._wait = interrupt_ttl(env).total_seconds() + AWAIT_SLACK

    async def post(
        self,
        question: str,
        *,
        options: Sequence[str] | None,
        allow_free_text: bool | None,
        tool_call_id: str,
    ) -> str:
        fields = {"question": question, "toolCallId": tool_call_id}
        if options is not None:
            fields["options"] = list(options)  # type: ignore[assignment]
        if allow_free_text is not None:
            fields["allowFreeText"] = allow_free_text  # type: ignore[assignment]
        return await self._ui.call_host("ask_user_async", fields, POST_TIMEOUT)

    async def await_answers(self, tool_call_id: str, interrupt_id: str) -> str:
        return await self._ui.call_host("await_answers", {"toolCallId": tool_call_id}, self._wait)

    async def inbox(self) -> Sequence[UserMessage]:
        return []  # the answers come as steer messages
