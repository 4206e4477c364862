"""The workflow as a picture: a workflow laid out once, drawn as SVG, as Mermaid, or by the web
page with a run's node states.

- :func:`layout` lays a graph (:mod:`recipes.graph.ir`) out as a :class:`Picture`: nodes by
  kind with their boxes and outlines, edges with their labels (conditions, loops) and their
  points, edges that go back marked. :func:`picture_of` does it for a workflow's text,
  remembering the last pictures it made.
- :func:`to_svg` and :func:`to_mermaid` write a picture; :func:`draw_file` reads, validates
  and draws a ``.iter`` file (``pi-recipes graph draw``).
- :func:`run_picture` gives a graph run's picture, each node's state (:data:`NODE_STATES`) and
  the run's path, from what the run stored.

The layout library (grandalf) comes with the ``draw`` extra (``pip install
'pi-recipes[draw]'``). Errors: every function here raises ``UsageError`` when it is missing,
and :class:`~recipes.graph.compiler.GraphError` (a ``UsageError``) for a workflow that does not
validate or parse; :func:`run_picture` raises ``UsageError`` for a run that is not a graph run.
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Literal

from interactions import UsageError
from interactions.store import RunRecord
from recipes.graph.compiler import GraphError, compile_graph, read_source
from recipes.graph.language import parse
from recipes.graph.picture._layout import DRAW_EXTRA, layout
from recipes.graph.picture._mermaid import to_mermaid
from recipes.graph.picture._model import (
    EDGE_KINDS,
    NODE_KINDS,
    NODE_STATES,
    EdgeKind,
    NodeKind,
    NodeState,
    PathStep,
    Picture,
    PictureEdge,
    PictureNode,
    RunPicture,
)
from recipes.graph.picture._reading import back_edges, edge_label
from recipes.graph.picture._states import node_states
from recipes.graph.picture._svg import KIND_NAMES, STATE_NAMES, to_svg

__all__ = [
    "DRAW_EXTRA",
    "EDGE_KINDS",
    "FORMATS",
    "KIND_NAMES",
    "NODE_KINDS",
    "NODE_STATES",
    "STATE_NAMES",
    "EdgeKind",
    "NodeKind",
    "NodeState",
    "PathStep",
    "Picture",
    "PictureEdge",
    "PictureNode",
    "RunPicture",
    "back_edges",
    "draw_file",
    "edge_label",
    "layout",
    "node_states",
    "picture_of",
    "run_picture",
    "to_mermaid",
    "to_svg",
]

FORMATS = ("svg", "mermaid")
"""What :func:`draw_file` writes."""


@functools.lru_cache(maxsize=64)
def picture_of(source: str, file: str = "<graph>", *, state_line: bool = False) -> Picture:
    """The picture of the workflow ``source`` holds (``file`` names it in errors;
    ``state_line``: see :func:`layout`); the last 64 are remembered by their text, so a run's
    picture is laid out once, not at every look. Raises
    :class:`~recipes.graph.compiler.GraphError` when the text does not parse."""
    graph, found = parse(source, file)
    if any(d.is_error for d in found):
        raise GraphError(found)
    return layout(graph, state_line=state_line)


def draw_file(path: Path, format: Literal["svg", "mermaid"] = "svg") -> str:
    """The workflow file at ``path`` drawn in ``format``. The file must validate (its recipes
    are not loaded: a picture needs none); raises ``GraphError`` with the diagnostics when it
    does not, ``UsageError`` when it cannot be read or the layout library is missing."""
    compiled = compile_graph(read_source(path), file=str(path), recipes=False)
    picture = layout(compiled.graph)
    return to_svg(picture) if format == "svg" else to_mermaid(picture)


def run_picture(run: RunRecord) -> RunPicture:
    """The picture of the graph run ``run`` (as stored): its workflow (the text it stored when
    it started), each node's state and the path it took. Raises ``UsageError`` for a run of
    another kind."""
    if run.kind != "graph":
        raise UsageError(
            f"run {run.id} is a {run.kind} run, not a graph run: it has no workflow to draw"
        )
    from recipes.graph.runtime import GraphCheckpoint

    checkpoint = GraphCheckpoint.model_validate(run.checkpoint)
    picture = picture_of(checkpoint.source, checkpoint.file, state_line=True)
    states, path = node_states(picture, checkpoint, run.status)
    return RunPicture(run_id=run.id, status=run.status.value, picture=picture, states=states,
                      path=path)  # fmt: skip
