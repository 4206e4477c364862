"""What run drivers and engines are built from (the tier beside :mod:`recipes.runs`).

A run's *driver* continues the runs of its ``kind`` (the recipe runner's is built in; the graph
engine registers its own): :class:`RunDriver`, found by :func:`driver_for` through
:func:`register_driver` or the ``pi_recipes.run_drivers`` entry point group. Every kind's
checkpoint is a :class:`RunEnvelope` (legs, expiry policy, automatic retries, retries in a row)
and every leg of every kind ends through :func:`close_leg`, one write. A leg watches its run for
another writer with :func:`watch_run`, says so with :func:`moved_error`, and a leg cut short is
recorded by :func:`record_interrupted`. An agent's async questions write through the driver
(:class:`RunWrites`, :class:`LegWrites`, :class:`RunAsyncQuestions`). An *engine* (Temporal's)
is a store that makes the runner of its runs (:class:`RunEngine`). The recipe driver's own
pieces (:class:`Checkpoint`, :class:`LegRecord`, :func:`drive_leg`) are here for engines that
run recipe runs their own way.
"""

from recipes.runs._async import BRANCH_AWAIT_ERROR, LegWrites, RunAsyncQuestions, RunWrites
from recipes.runs._auto_retry import (
    AUTO_RESUME_KEY,
    RETRY_SCHEDULED,
    RETRY_SKIPPED,
    RetrySchedule,
    retry_schedule_of,
)
from recipes.runs._checkpoint import (
    LEG_ENDED,
    AwaitingRef,
    Checkpoint,
    LegRecord,
    PausedCalls,
    message_id,
)
from recipes.runs._close import close_leg, moved_error, record_failed_resumable, record_interrupted
from recipes.runs._drivers import DRIVER_ENTRY_POINTS, RunDriver, driver_for, register_driver
from recipes.runs._engines import RunEngine
from recipes.runs._envelope import (
    KeptPolicy,
    LegIds,
    RunEnvelope,
    continuing_policy,
    default_agui_run_id,
)
from recipes.runs._leg import drive_leg
from recipes.runs._recipe_driver import RecipeDriver, durable_model, durable_ref
from recipes.runs._watch import watch_run

__all__ = [
    "AUTO_RESUME_KEY",
    "BRANCH_AWAIT_ERROR",
    "DRIVER_ENTRY_POINTS",
    "LEG_ENDED",
    "RETRY_SCHEDULED",
    "RETRY_SKIPPED",
    "AwaitingRef",
    "Checkpoint",
    "KeptPolicy",
    "LegIds",
    "LegRecord",
    "LegWrites",
    "PausedCalls",
    "RecipeDriver",
    "RetrySchedule",
    "RunAsyncQuestions",
    "RunDriver",
    "RunEngine",
    "RunEnvelope",
    "RunWrites",
    "close_leg",
    "continuing_policy",
    "default_agui_run_id",
    "drive_leg",
    "driver_for",
    "durable_model",
    "durable_ref",
    "message_id",
    "moved_error",
    "record_failed_resumable",
    "record_interrupted",
    "register_driver",
    "retry_schedule_of",
    "watch_run",
]
