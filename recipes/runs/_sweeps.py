"""What moves runs besides a person's answer: a cancel, the expiry sweep, the retry sweep, and
the sweep for runs stranded by a process that died.

Each is the :class:`~recipes.runs.Runner`'s (its methods call these); each decides on what it
reads and writes with a compare-and-set, so several processes sweeping one store move each run
once. One run never holds up the others: a failure is recorded on its run and logged.
"""

from __future__ import annotations

import logging
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from interactions import ConflictError, UnreadableInteractionError, UsageError
from interactions.store import InteractionAnswer, InteractionRecord, RunRecord, RunStatus
from recipes.runs._auto_retry import retry_schedule_of
from recipes.runs._plan import describe_error, expiry_policy_of, plan_expiry
from recipes.runs._results import RunResult

if TYPE_CHECKING:
    from recipes.runs._runner import Runner

__all__ = ["cancel", "due_retries", "expire_due", "recover", "retry_due"]

logger = logging.getLogger("recipes.runs")

_CANCEL_TRIES = 5
_PAGE = 500


async def cancel(runner: Runner, run_id: str, reason: str) -> RunResult:
    """See :meth:`Runner.cancel`."""
    closing = InteractionAnswer(status="cancelled", answered_by="system", via=runner.host)
    for _ in range(_CANCEL_TRIES):
        run = await runner.store.get_run(run_id)
        try:
            await runner.store.update_run(
                run_id,
                expected_version=run.version,
                status=RunStatus.CANCELLED,
                error=reason,
                close_open=closing,
            )
        except ConflictError as exc:
            if exc.reason != "version":
                raise
            continue  # the run moved (a resume started): cancel it where it is now
        return await runner.status(run_id)
    raise ConflictError(
        f"run {run_id} kept changing while it was being cancelled; try again",
        run_id=run_id,
        reason="version",
    )


async def expire_due(runner: Runner, now: datetime, resume: bool) -> list[RunResult]:
    """See :meth:`Runner.expire_due`."""
    store = runner.store
    touched: dict[str, RunResult] = {}
    answered: list[str] = []
    expired = InteractionAnswer(status="expired", answered_by="system", via="expiry")
    by_run: dict[str, list[InteractionRecord]] = {}
    for record in await store.list_interactions(pending=True):
        by_run.setdefault(record.run_id, []).append(record)
    oldest_due_first = sorted(by_run.items(), key=lambda item: min(r.expires_at for r in item[1]))
    for run_id, pending in oldest_due_first:
        if not any(r.expires_at <= now for r in pending):
            continue
        run = await store.get_run(run_id)
        if run.status is not RunStatus.PAUSED_WAITING_HUMAN:
            continue
        plan = plan_expiry(expiry_policy_of(run.checkpoint), pending, now)
        if plan is None:
            continue
        if plan.fail:
            first = plan.due[0]
            await store.update_run(
                run.id,
                expected_version=run.version,
                status=RunStatus.FAILED,
                error=f"interaction {first.id} expired at {first.expires_at.isoformat()}",
                answers={r.id: expired for r in pending},
            )
        else:
            for record in plan.due:
                try:
                    await store.answer_interaction(
                        run.id, record.id, expired, now=record.expires_at
                    )
                except ConflictError:
                    continue  # answered meanwhile: the answer stands
        try:
            touched[run.id] = await runner.status(run.id)
        except UnreadableInteractionError as exc:  # settled; it cannot be shown, nor go on here
            logger.warning("run %s: its expired questions are settled, but %s", run.id, exc)
            continue
        if not plan.fail and not touched[run.id].interrupts:
            answered.append(run.id)
    for run_id in answered if resume else ():
        touched[run_id] = await _continue_expired(runner, run_id)
    return list(touched.values())


async def _continue_expired(runner: Runner, run_id: str) -> RunResult:
    """Continue a run the expiry sweep left with nothing open; a failure is recorded on the run
    (or, when it cannot continue here, leaves it paused) and logged, not raised."""
    try:
        claimed = await runner.claim_answered(run_id)
        if claimed is not None:  # else another process continued it first, or it moved
            return await runner.proceed(claimed)
    except UsageError as exc:
        logger.warning(
            "run %s: its expired questions are settled, but it cannot continue here: %s",
            run_id, exc,
        )  # fmt: skip
    except Exception as exc:
        logger.warning(
            "run %s failed after its expired questions were settled: %s",
            run_id, runner.scrub(describe_error(exc)),
        )  # fmt: skip
    return await runner.status(run_id)


async def recover(runner: Runner, older_than: float, now: datetime) -> list[RunResult]:
    """See :meth:`Runner.recover`."""
    if not 0 <= older_than < 10**9:  # NaN and infinity fail too
        raise UsageError(f"older_than must be a number of seconds >= 0, got {older_than!r}")
    cutoff = now - timedelta(seconds=older_than)
    marked: list[RunResult] = []
    for run in await _all_runs(runner, RunStatus.RUNNING):
        if run.updated_at > cutoff:
            continue
        try:
            await runner.store.update_run(
                run.id,
                expected_version=run.version,
                status=RunStatus.FAILED_RESUMABLE,
                error=f"stranded: no progress since {run.updated_at.isoformat()}",
            )
        except ConflictError:
            continue  # it moved meanwhile: not stranded
        marked.append(await runner.status(run.id))
    return marked


async def retry_due(runner: Runner, now: datetime) -> list[RunResult]:
    """See :meth:`Runner.retry_due`."""
    retried: list[RunResult] = []
    for run in await due_retries(runner, now):
        try:
            retried.append(await runner.retry(run.id))
        except ConflictError:
            continue  # another process retried it first, or it moved
        except UsageError as exc:
            logger.warning("run %s is due for a retry but cannot continue here: %s", run.id, exc)
        except Exception as exc:  # recorded on the run; the next due run is retried all the same
            logger.warning("run %s failed again on its automatic retry: %s",
                           run.id, runner.scrub(describe_error(exc)))  # fmt: skip
            retried.append(await runner.status(run.id))
    return retried


async def due_retries(runner: Runner, now: datetime) -> list[RunRecord]:
    """See :meth:`Runner.due_retries`."""
    due: list[RunRecord] = []
    for run in await _all_runs(runner, RunStatus.FAILED_RESUMABLE):
        schedule = retry_schedule_of(run.checkpoint)
        if schedule is not None and schedule.due_at is not None and schedule.due_at <= now:
            due.append(run)
    return due


async def _all_runs(runner: Runner, status: RunStatus) -> list[RunRecord]:
    """Every run in ``status``, oldest first, read a page at a time."""
    found: list[RunRecord] = []
    while True:
        after = found[-1].id if found else None
        page = await runner.store.list_runs(status, _PAGE, oldest_first=True, after=after)
        found += page
        if len(page) < _PAGE:
            return found
