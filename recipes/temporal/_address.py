"""Where a Temporal engine is: ``temporal://HOST:PORT/NAMESPACE?task_queue=QUEUE``.

Pure: parsing and printing only; nothing connects here.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import parse_qs, quote, urlsplit

from interactions import UsageError
from recipes.runs import ENGINE_ENV

__all__ = ["DEFAULT_NAMESPACE", "DEFAULT_TASK_QUEUE", "ENGINE_ENV", "EngineAddress"]


DEFAULT_NAMESPACE = "default"
DEFAULT_TASK_QUEUE = "pi-recipes"

_EXAMPLE = "temporal://127.0.0.1:7233/default"
_NAME = re.compile(r"[A-Za-z0-9._-]{1,200}")


@dataclass(frozen=True)
class EngineAddress:
    """A Temporal frontend (``host:port``), the namespace its runs live in, and the task queue
    the workers of one recipe poll."""

    target: str
    namespace: str = DEFAULT_NAMESPACE
    task_queue: str = DEFAULT_TASK_QUEUE

    @classmethod
    def parse(cls, url: str) -> EngineAddress:
        """Read ``temporal://HOST:PORT[/NAMESPACE][?task_queue=QUEUE]``.

        Raises ``UsageError`` saying what was expected for anything else (another scheme, no
        port, a path with more than a namespace, an unknown parameter).
        """
        parts = urlsplit(url.strip())
        if parts.scheme != "temporal":
            raise UsageError(f"an engine is a temporal:// URL such as {_EXAMPLE}, got {url!r}")
        try:
            port = parts.port
        except ValueError:
            port = None
        if not parts.hostname or port is None:
            raise UsageError(f"the engine URL {url!r} needs HOST:PORT, e.g. {_EXAMPLE}")
        namespace = parts.path.strip("/") or DEFAULT_NAMESPACE
        if "/" in namespace:
            raise UsageError(f"the engine URL {url!r} has a path of more than a namespace")
        params = parse_qs(parts.query, keep_blank_values=True)
        unknown = sorted(set(params) - {"task_queue"})
        if unknown:
            raise UsageError(f"the engine URL {url!r} has unknown parameters {unknown}")
        queues = params.get("task_queue", [DEFAULT_TASK_QUEUE])
        if len(queues) != 1 or not queues[0]:
            raise UsageError(f"the engine URL {url!r} names one non-empty task_queue at most")
        for what, name in (("namespace", namespace), ("task_queue", queues[0])):
            if not _NAME.fullmatch(name):
                raise UsageError(
                    f"the engine URL's {what} {name!r} may hold letters, digits, '.', '_' and "
                    "'-' only"
                )
        host = f"[{parts.hostname}]" if ":" in parts.hostname else parts.hostname
        return cls(target=f"{host}:{port}", namespace=namespace, task_queue=queues[0])

    @classmethod
    def of(cls, target: str, namespace: str | None, task_queue: str | None) -> EngineAddress:
        """The address a worker's ``--temporal HOST:PORT [--namespace] [--task-queue]`` give."""
        return cls.parse(
            f"temporal://{target}/{quote(namespace or DEFAULT_NAMESPACE, safe='')}"
            f"?task_queue={quote(task_queue or DEFAULT_TASK_QUEUE, safe='')}"
        )

    def url(self) -> str:
        """The URL that parses back to this address."""
        query = "" if self.task_queue == DEFAULT_TASK_QUEUE else f"?task_queue={self.task_queue}"
        return f"temporal://{self.target}/{self.namespace}{query}"
