"""The page: plain HTML, CSS and JavaScript shipped in the package (``hosts/web/static``).

Served with a strict Content-Security-Policy (scripts and styles from this server only; no
inline script; connections to this server only), so nothing a run shows can load or run code.
"""

from __future__ import annotations

import re
from importlib.resources import files
from pathlib import Path

from fastapi import APIRouter, FastAPI, Request
from fastapi.responses import HTMLResponse, Response
from starlette.staticfiles import StaticFiles

__all__ = ["STATIC", "mount_static", "router"]

STATIC = Path(str(files("hosts.web") / "static"))
"""The folder of the page's files."""

router = APIRouter(include_in_schema=False)


_HOST = re.compile(r"[A-Za-z0-9.-]+(:[0-9]{1,5})?|\[[0-9A-Fa-f:.]+\](:[0-9]{1,5})?")
"""A ``Host`` header as browsers send it: a name or an address, maybe a port."""


def _headers(request: Request) -> dict[str, str]:
    host = request.headers.get("host", "")
    # Only a well-formed host goes into the policy: one holding ";" or a space would add
    # directives of its own.
    sockets = f"ws://{host} wss://{host}" if _HOST.fullmatch(host) else ""
    return {
        "Content-Security-Policy": (
            "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
            f"connect-src 'self' {sockets}; base-uri 'none'; form-action 'none'; "
            "frame-ancestors 'none'"
        ),
        "Referrer-Policy": "no-referrer",
        "Cache-Control": "no-cache",
    }


@router.get("/", response_class=HTMLResponse)
@router.get("/runs", response_class=HTMLResponse)
@router.get("/runs/{run_id}", response_class=HTMLResponse)
async def page(request: Request) -> Response:
    """The page (it asks for the token once, then keeps it in this browser), at each of its
    views' addresses: ``/`` the inbox, ``/runs`` the runs list, ``/runs/RUN`` one run (the
    page reads which from the address; the run itself is read over REST, with the token)."""
    html = (STATIC / "index.html").read_text(encoding="utf-8")
    return HTMLResponse(html, headers=_headers(request))


@router.get("/favicon.ico")
async def favicon() -> Response:
    return Response(status_code=204)


def mount_static(app: FastAPI) -> None:
    """Serve ``/static/*`` (the page's script and styles) on ``app``."""
    app.mount("/static", StaticFiles(directory=STATIC), name="static")
