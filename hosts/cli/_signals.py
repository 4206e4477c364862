"""How a command stops on Ctrl-C, SIGTERM and SIGHUP, whatever it is doing.

The first signal cancels the command from the event loop: a run it was driving is recorded as
interrupted (``failed_resumable``), never left ``running``, and the command exits with 128 +
the signal's number. An event loop busy with work that never awaits (a tool computing in a
pure-Python loop, say) would take that cancel only once the work ended: when the loop has not
taken the signal within :data:`STOP_GRACE` seconds, the signal is raised as :class:`Stopped`
in the main thread, inside the work itself, which ends it; the leg's driver records the run
on the way out, as it does for a cancel. A second signal acts as the default does (Ctrl-C
raises ``KeyboardInterrupt``, SIGTERM ends the process); and should the command still run
:data:`STOP_BOUND` seconds after the signal, the process ends at once, saying so.

Ctrl-C is received here too, not left to the event loop's own handler: that one cancels the
main task from outside every cancel scope, shields included, and a cancel landing while a
node's command was being started left asyncio waiting, unbounded, for pipes the command's own
children held open.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import sys
import threading
from types import FrameType, TracebackType

import anyio

__all__ = ["SIGNALS", "STOP_BOUND", "STOP_GRACE", "SignalStop", "Stopped", "stopped_by"]

SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
"""The signals that stop a command."""

STOP_GRACE = 2.0
"""How long (seconds) the event loop has to take a signal before it is raised in the work
that keeps the loop busy."""

STOP_BOUND = 20.0
"""How long (seconds) a command may take to stop after a signal before the process ends at
once (a tool that caught the stop and went on, say)."""


class Stopped(BaseException):
    """A signal raised in the main thread, inside work that kept the event loop from taking
    it. Not an ``Exception``: a tool's ``except Exception`` does not swallow it, and a leg's
    driver records its run as interrupted before it goes on up."""

    def __init__(self, signum: int) -> None:
        super().__init__(f"stopped by {signal.Signals(signum).name}")
        self.signum = signum


def stopped_by(error: BaseException) -> bool:
    """Whether ``error`` is (or its group holds) a :class:`Stopped`."""
    if isinstance(error, BaseExceptionGroup):
        return error.split(Stopped)[0] is not None
    return isinstance(error, Stopped)


class SignalStop:
    """While entered (in the event loop's thread, the main one), the signals in
    :data:`SIGNALS` cancel ``scope``, as the module's docstring says; :attr:`received` is the
    first one that came (``None``: none did)."""

    def __init__(self, scope: anyio.CancelScope) -> None:
        self.scope = scope
        self.received: int | None = None
        self._loop = asyncio.get_running_loop()
        self._main = threading.get_ident()
        self._lock = threading.Lock()
        self._signalled = threading.Event()  # a first signal came (or the command ended)
        self._settled = threading.Event()  # the loop took it (or the command ended)
        self._ended = threading.Event()
        self._raise = False  # the next signal handled is the watcher's: raise it
        self._taken = False
        self._previous: dict[int, object] = {}
        self._wakeup = socket.socketpair()
        self._old_wakeup = -1
        self._active = False

    def __enter__(self) -> SignalStop:
        self._active = threading.current_thread() is threading.main_thread()
        if not self._active:  # only the main thread may handle signals: the caller's do
            return self
        for signum in SIGNALS:
            self._previous[signum] = signal.signal(signum, self._on_signal)
        reader, writer = self._wakeup
        reader.setblocking(False)
        writer.setblocking(False)
        # A signal another thread receives wakes the loop's select, which then runs the
        # handler (in the main thread) at once.
        self._old_wakeup = signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)
        self._loop.add_reader(reader.fileno(), self._drain)
        threading.Thread(target=self._watch, name="pi-recipes-signals", daemon=True).start()
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if not self._active:
            return
        with self._lock:
            self._ended.set()
            self._settled.set()
            self._signalled.set()
            self._raise = False
        self._restore()
        signal.set_wakeup_fd(self._old_wakeup)
        self._loop.remove_reader(self._wakeup[0].fileno())
        for end in self._wakeup:
            end.close()

    def _restore(self) -> None:
        """Give each signal back its default action (a second one acts as it always does)."""
        for signum in SIGNALS:
            if signal.getsignal(signum) == self._on_signal:
                signal.signal(signum, signal.default_int_handler if signum == signal.SIGINT
                              else signal.SIG_DFL)  # fmt: skip

    def _drain(self) -> None:
        with contextlib.suppress(OSError):
            while self._wakeup[0].recv(512):
                pass

    def _on_signal(self, signum: int, frame: FrameType | None) -> None:
        """The Python-level handler: it runs in the main thread between two bytecodes of
        whatever runs there (a busy loop included)."""
        if self._raise:  # the watcher's: the loop did not take the first signal in time
            self._raise = False
            if asyncio.current_task(self._loop) is not None:  # in the work, not between it
                raise Stopped(self.received or signum)
            return  # the loop is free again: it takes the first signal now
        if self.received is not None:  # a second signal, before the first was taken
            self._restore()
            if signum == signal.SIGINT:
                raise KeyboardInterrupt
            signal.raise_signal(signum)
            return
        self.received = signum
        self._loop.call_soon_threadsafe(self._take)
        self._signalled.set()

    def _take(self) -> None:
        """In the event loop: cancel the command (its runs record themselves interrupted)."""
        with self._lock:
            if self._ended.is_set():
                return
            self._taken = True
            self._settled.set()
        self._restore()
        self.scope.cancel()

    def _watch(self) -> None:
        """The watcher's thread: once a signal came, give the loop :data:`STOP_GRACE` seconds
        to take it, then raise it in the main thread; end the process past
        :data:`STOP_BOUND`."""
        self._signalled.wait()
        if self._ended.is_set():
            return
        if not self._settled.wait(STOP_GRACE):
            with self._lock:
                if not self._taken and not self._ended.is_set():
                    self._raise = True
                    signal.pthread_kill(self._main, self.received or signal.SIGTERM)
        if self._ended.wait(STOP_BOUND - STOP_GRACE):
            return
        signum = self.received or signal.SIGTERM
        name = signal.Signals(signum).name
        sys.stderr.write(
            f"pi-recipes: stopped by {name}: the command did not stop within {STOP_BOUND:g} s "
            "and was ended; a run it drove and could not record is found and freed by: "
            "pi-recipes runs recover\n"
        )
        sys.stderr.flush()
        os._exit(128 + signum)
