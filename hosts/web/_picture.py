"""``GET /api/runs/{id}/picture``: a graph run's workflow laid out, each node's state and the
run's path (:func:`recipes.graph.picture.run_picture`), for the page to draw.

The picture is laid out once per workflow text (remembered); the states are read from the run
as stored at each request. 404 for an unknown run, 400 for a run that is not a graph run.
"""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter

from hosts.web._errors import ErrorBody, refusal
from hosts.web._host import Authorized
from interactions import PiRecipesError
from recipes.graph.picture import RunPicture

__all__ = ["router"]

_REFUSALS: dict[int | str, dict[str, Any]] = {
    code: {"model": ErrorBody} for code in (400, 401, 403, 404, 500, 503)
}
router = APIRouter(prefix="/api", tags=["runs"], responses=_REFUSALS)


@router.get("/runs/{run_id}/picture", response_model=RunPicture)
async def run_picture(host: Authorized, run_id: str) -> RunPicture:
    """The graph run's picture: ``{run_id, status, picture: {workflow, width, height, nodes:
    [{id, label, kind, detail, routes, entry, x, y, width, height, shape}], edges: [{id, from,
    to, label, kind, back, points, label_x, label_y, label_width}]}, states: {node: state},
    path: [{node, visit, branch, state, route}]}``."""
    from recipes.graph.picture import run_picture as picture_of_run

    try:
        return picture_of_run(await host.store.get_run(run_id))
    except PiRecipesError as exc:
        raise refusal(exc) from None
