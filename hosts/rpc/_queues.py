"""The host's view of the session's queues of steering and follow-up messages.

The session takes queued messages in order and delivers each one as the very object it was
given (``message_start`` carries it), so the host knows a queued message is gone when it sees
that object start.
"""

from __future__ import annotations

from typing import Any

from hosts.rpc._notices import queue_update
from recipes.messages import Message, UserMessage

__all__ = ["Queues"]


class Queues:
    """What is queued, in order: :meth:`steer`/:meth:`follow_up` add, :meth:`delivered` takes."""

    def __init__(self) -> None:
        self._steering: list[UserMessage] = []
        self._follow_up: list[UserMessage] = []

    def __len__(self) -> int:
        return len(self._steering) + len(self._follow_up)

    def steer(self, message: UserMessage) -> None:
        self._steering.append(message)

    def follow_up(self, message: UserMessage) -> None:
        self._follow_up.append(message)

    def delivered(self, message: Message) -> bool:
        """Forget ``message`` if it was queued; ``True`` when the queues changed."""
        for queue in (self._steering, self._follow_up):
            for i, queued in enumerate(queue):
                if queued is message:
                    del queue[i]
                    return True
        return False

    def record(self) -> dict[str, Any]:
        """The ``queue_update`` record of the queues as they are."""
        return queue_update(self._steering, self._follow_up)
