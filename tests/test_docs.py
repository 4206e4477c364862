"""The docs cannot drift: every command and program in README.md and docs/**/*.md is run.

A page's ``sh`` blocks and untitled ``python`` blocks run in order, as printed, in a folder of
their own holding a copy of ``examples/`` and every titled block of the docs (```` ```python
title="painter.py" ```` is the file ``painter.py``): ``pi-recipes`` and ``.venv/bin/…`` are this
test's own install, ``RUN`` the newest run of the folder's store, standard input is not a
terminal (so runs pause durably), and no model key is set. Each command must exit 0, without a
traceback; a ``# prints: TEXT`` comment must hold. ``pip install`` lines are checked to name
extras pyproject declares (this install has them all); ``pi-recipes serve`` is started on a free
port, its page fetched, then stopped.

A block this runner cannot run (it needs a second terminal, Slack, a Temporal server, the
benchmarks' own venv) says so in an HTML comment above it, ``<!-- docs-test: tests/FILE.py
(why) -->``, naming the test that runs or checks it; that test must read the page. The tests
below that check blocks of particular pages follow."""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import threading
import tomllib
from dataclasses import dataclass
from pathlib import Path

import httpx
import pytest

from hosts.cli import build_parser
from interactions import DECLINED_TEXT
from interactions.store import MemoryStore
from interactions.testing.dialogs import ScriptedDialogUI
from recipes import create_agent_session, load_recipe
from recipes.messages import AssistantMessage, ToolCall, text_of
from recipes.models import ScriptedModel
from recipes.runs import Runner

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
PAGES = sorted(
    [Path("README.md"), *(p.relative_to(ROOT) for p in (ROOT / "docs").rglob("*.md"))]
)
README = (ROOT / "README.md").read_text(encoding="utf-8")
MARKER = re.compile(r"<!-- docs-test: (tests/\S+\.py)\b.*-->")
FENCE = re.compile(r"^(?P<indent> *)```(?P<lang>\w*)(?P<info>.*)$")


@dataclass(frozen=True)
class Block:
    page: Path
    line: int
    lang: str
    title: str | None
    body: str
    marker: str | None  # the test file that runs a block this runner does not

    @property
    def runnable(self) -> bool:
        """A command or a program (a titled block is a file, an untitled one of another
        language is output, a workflow or a configuration)."""
        return self.lang == "sh" or (self.lang == "python" and self.title is None)

    def __str__(self) -> str:
        return f"{self.page}:{self.line}"


def blocks(page: Path) -> list[Block]:
    """The fenced blocks of a page, in order."""
    lines = (ROOT / page).read_text(encoding="utf-8").splitlines()
    found: list[Block] = []
    i = 0
    while i < len(lines):
        opening = FENCE.match(lines[i])
        if opening is None:
            i += 1
            continue
        indent = len(opening["indent"])
        end = next(j for j in range(i + 1, len(lines)) if lines[j].strip() == "```")
        body = "".join(line[indent:] + "\n" for line in lines[i + 1 : end])
        title = re.search(r'title="([^"]+)"', opening["info"])
        before = next((lines[j] for j in range(i - 1, -1, -1) if lines[j].strip()), "")
        marker = MARKER.search(before)
        found.append(
            Block(
                page, i + 1, opening["lang"], title and title[1], body, marker and marker[1]
            )
        )
        i = end + 1
    return found


ALL = [block for page in PAGES for block in blocks(page)]
FILES = {block.title: block for block in ALL if block.title}


def _page(name: str) -> str:
    return (ROOT / name).read_text(encoding="utf-8")


def _of(name: str, lang: str) -> list[str]:
    return [b.body for b in ALL if b.page == Path(name) and b.lang == lang]


# --- every command and program: run here, or by the test its marker names


def test_every_titled_block_is_one_file() -> None:
    """A file shown twice (the README's tour and Getting started) is the same file."""
    for block in ALL:
        if block.title:
            assert block.body == FILES[block.title].body, block


def test_a_block_run_elsewhere_names_a_test_that_reads_its_page() -> None:
    marked = [block for block in ALL if block.marker]
    for block in marked:
        assert block.runnable, f"{block}: only a command or a program needs a marker"
        test = (ROOT / block.marker).read_text(encoding="utf-8")  # type: ignore[arg-type]
        assert str(block.page) in test or block.page.name in test, f"{block}: {block.marker}"


RUN_HERE = sorted({block.page for block in ALL if block.runnable and not block.marker})


def _env(**exported: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    for name in ("PI_ASK_USER_AUTO_APPROVE", "PI_INTERRUPT_RESUME", "PI_RECIPES_ENGINE"):
        env.pop(name, None)
    env["PATH"] = f"{BIN}{os.pathsep}{env.get('PATH', '')}"
    return env | exported


def _workspace(tmp_path: Path) -> Path:
    shutil.copytree(ROOT / "examples", tmp_path / "examples")
    for title, block in FILES.items():
        (tmp_path / title).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / title).write_text(block.body, encoding="utf-8")
    return tmp_path


EXTRAS = set(tomllib.loads(_page("pyproject.toml"))["project"]["optional-dependencies"])


def _commands(body: str) -> list[tuple[list[str], str]]:
    """Each command line of a shell block: its words (install prefixes dropped) and comment."""
    out = []
    for line in body.replace("\\\n", " ").splitlines():
        words = shlex.split(line, comments=True)
        if not words:
            continue
        comment = line.split("  #", 1)[1].strip() if "  #" in line else ""
        while "&&" in words:  # `python3 -m venv .venv && .venv/bin/pip install … && COMMAND`
            head, words = words[: words.index("&&")], words[words.index("&&") + 1 :]
            _check_setup(head)
        if Path(words[0]).name == "pip" or words[:3] == ["python3", "-m", "venv"]:
            _check_setup(words)
            continue
        out.append((words, comment))
    return out


def _check_setup(words: list[str]) -> None:
    """An install step names extras pyproject declares (this test's install has them all)."""
    if words[:3] == ["python3", "-m", "venv"]:
        return
    assert Path(words[0]).name == "pip" and words[1] == "install", words
    for word in words[2:]:
        extras = re.fullmatch(r"\.(?:\[([\w,]+)\])?", word)
        if extras and extras[1]:
            assert set(extras[1].split(",")) <= EXTRAS, word


def _run_id(cwd: Path, env: dict[str, str]) -> str:
    done = subprocess.run(
        [str(BIN / "pi-recipes"), "runs", "list", "--json"],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    return str(json.loads(done.stdout)[0]["id"])


def _argv(words: list[str], cwd: Path, env: dict[str, str] | None = None) -> list[str]:
    first = Path(words[0])
    if words[0] == "pi-recipes" or str(first.parent) == ".venv/bin":
        words = [str(BIN / first.name), *words[1:]]
    if any(w == "RUN" or w.startswith("RUN_") for w in words):
        run = _run_id(cwd, env or _env())
        words = [run + w[3:] if w == "RUN" or w.startswith("RUN_") else w for w in words]
    return words


def _serve(argv: list[str], cwd: Path, env: dict[str, str] | None = None) -> None:
    """Start the web host on a free port, fetch its page, stop it with SIGTERM."""
    with subprocess.Popen(
        [*argv, "--port", "0"], cwd=cwd, env=env or _env(), stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    ) as server:  # fmt: skip
        watchdog = threading.Timer(90, server.kill)  # every wait has a bound
        watchdog.start()
        try:
            assert server.stdout is not None
            lines = []
            for line in server.stdout:
                lines.append(line)
                if line.startswith("ready: "):
                    break
            assert any("#token=" in line for line in lines), lines
            assert httpx.get(lines[-1].split()[1], timeout=30).status_code == 200
            server.send_signal(signal.SIGTERM)
            assert server.wait(timeout=60) in (0, 143, -signal.SIGTERM)
        finally:
            watchdog.cancel()
            if server.poll() is None:
                server.kill()


def _run_block(block: Block, cwd: Path) -> None:
    if block.lang == "python":
        program = cwd / "program.py"
        program.write_text(block.body, encoding="utf-8")
        done = subprocess.run(
            [sys.executable, str(program)], cwd=cwd, env=_env(), stdin=subprocess.DEVNULL,
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        assert done.returncode == 0, f"{block}: {done.stderr}"
        return
    for words, comment in _commands(block.body):
        if Path(words[0]).name == "pytest":
            # the test command: CI runs it verbatim (test_the_two_setup_commands_come_first)
            continue
        argv = _argv(words, cwd)
        if argv[1:2] == ["serve"]:
            _serve(argv, cwd)
            continue
        done = subprocess.run(
            argv, cwd=cwd, env=_env(), stdin=subprocess.DEVNULL,
            capture_output=True, text=True, timeout=120,
        )  # fmt: skip
        said = f"{block}: {shlex.join(words)}\n{done.stdout}\n{done.stderr}"
        assert done.returncode == 0, said
        assert "Traceback" not in done.stderr, said
        if comment.startswith("prints: "):
            assert comment.removeprefix("prints: ") in done.stdout, said


@pytest.mark.parametrize("page", RUN_HERE, ids=str)
def test_the_page_s_commands_and_programs_run_as_printed(page: Path, tmp_path: Path) -> None:
    cwd = _workspace(tmp_path)
    for block in blocks(page):
        if block.runnable and not block.marker:
            _run_block(block, cwd)


def test_how_many_blocks_run() -> None:
    """Every command or program is run here or by a named test: none is left out."""
    runnable = [block for block in ALL if block.runnable]
    here = [block for block in runnable if not block.marker]
    assert len(here) >= 15 and len(runnable) - len(here) <= 12, [str(b) for b in runnable]


# --- the README


def test_the_two_setup_commands_come_first() -> None:
    (setup, *_) = re.findall(r"```sh\n(.*?)```", README, flags=re.S)
    commands = [line for line in setup.splitlines() if line and not line.startswith("#")]
    assert commands[0].endswith('pi-recipes run examples/release.py "Release v1.4.0"')
    assert commands[1].endswith(".venv/bin/pytest -n auto --dist loadfile")  # every core
    ci = _page(".ci/run")
    assert commands[1] in ci, ".ci/run calls the README's test command verbatim"
    assert setup in _page("docs/getting-started.md"), "the docs start with the same two"


def test_the_readme_links_into_the_docs() -> None:
    links = re.findall(r"\]\((docs/[^)#]+)(?:#[^)]*)?\)", README)
    assert len(links) >= 10
    for link in links:
        assert (ROOT / link).is_file(), link
    assert len(README.splitlines()) <= 200  # a README, not a manual: the rest is in docs/


# --- docs/asking.md: the recipe


def _painter(tmp_path: Path) -> str:
    path = tmp_path / "painter.py"
    path.write_text(FILES["painter.py"].body, encoding="utf-8")
    return str(path)


def test_the_asking_recipe_loads(tmp_path: Path) -> None:
    recipe = load_recipe(_painter(tmp_path))
    assert recipe.agent("painter").model == "openai:gpt-4.1-mini"
    assert [t.name for t in recipe.tools_for(recipe.agent(None))] == ["repaint"]


def _model() -> ScriptedModel:
    return ScriptedModel(
        [
            AssistantMessage(
                tool_calls=[ToolCall(id="c1", name="repaint", arguments={"element": "door"})]
            ),
            lambda request: AssistantMessage(text=text_of(request.messages[-1].content)),  # type: ignore[union-attr]
        ]
    )


DONE = "Repainted the door #33d."


@pytest.mark.anyio
async def test_the_asking_recipe_on_a_terminal_and_under_auto_approve(tmp_path: Path) -> None:
    recipe = load_recipe(_painter(tmp_path))
    ui = ScriptedDialogUI(["Blue", "Approve"])
    session = create_agent_session(recipe, model=_model(), mode="tui", ui=ui, env={})
    await session.prompt("paint the door blue")
    assert session.messages[-1].text == DONE  # type: ignore[union-attr]
    assert ui.calls[0].descriptions == (None, "the house blue", None)
    auto = create_agent_session(recipe, model=_model(), env={"PI_ASK_USER_AUTO_APPROVE": "1"})
    await auto.prompt("paint the door")  # a question auto-declines: the tool says so
    assert auto.messages[-1].text == DECLINED_TEXT  # type: ignore[union-attr]


@pytest.mark.anyio
async def test_the_asking_recipe_in_a_durable_run_asks_both_and_does_the_work(
    tmp_path: Path,
) -> None:
    async with MemoryStore() as store:
        runner = Runner(store, env={}, model=_model())
        paused = await runner.start(_painter(tmp_path), "paint the door")
        assert [i.message for i in paused.interrupts] == ["Which colour for the door?"]
        asked = await runner.answer(paused.run_id, "int-c1", {"answer": "Blue"}, resume=True)
        assert asked.run is not None
        [approval] = asked.run.interrupts  # the approval is asked too, after the answer
        assert approval.id == "int-c1.2" and approval.display is not None
        assert approval.display.title == "Repaint the door?"
        done = await runner.answer(paused.run_id, "int-c1.2", {"approved": True}, resume=True)
        assert done.run is not None and done.run.text == DONE


# --- docs/hosts/cli.md: the command table


def test_every_command_in_the_table_parses() -> None:
    table = _page("docs/hosts/cli.md")
    parser = build_parser()
    for argv in (
        ["run", "r.py", "p", "--no-interactive", "--auto-approve", "--model", "openai:x"],
        ["rpc", "r.py"],
        ["rpc", "r.py", "--append-system-prompt", "x", "--tools", "a,b", "--async-questions"],
        ["graph", "validate", "flow.iter"],
        ["graph", "draw", "flow.iter", "-o", "flow.svg", "--format", "mermaid"],
        ["graph", "run", "flow.iter", "--var", "a=1", "--var", "b=2", "--no-interactive"],
        ["graph", "run", "flow.iter", "--auto-resume", "3"],
        ["slack", "r.py", "--http", "127.0.0.1:3000"],
        ["runs", "list", "--json"],
        ["runs", "show", "RUN"],
        ["runs", "pending"],
        ["runs", "questions", "RUN", "--json"],
        ["runs", "answer", "RUN", "INT", "{}", "--resume", "--store", "x.db"],
        ["runs", "resume", "RUN", "--entries", "f.json"],
        ["runs", "cancel", "RUN"],
        ["runs", "retry", "RUN"],
        ["runs", "recover", "--older-than", "600"],
        ["runs", "expire"],
        ["worker", "r.py", "--temporal", "127.0.0.1:7233", "--namespace", "n", "--task-queue", "q"],
        ["runs", "list", "--engine", "temporal://127.0.0.1:7233/default"],
        ["run", "r.py", "p", "--engine", "temporal://127.0.0.1:7233/default"],
    ):
        parser.parse_args(argv)
        assert f"`pi-recipes {argv[0]}" in table, argv


# --- docs/hosts/mcp.md: the MCP server, on stdio and over HTTP


def test_the_mcp_commands_run_as_printed(tmp_path: Path) -> None:
    """On stdio the server ends with its input (a client that goes away); over HTTP it serves
    at the URL printed (on a free port here) until Ctrl-C."""
    (block,) = [b for b in ALL if b.page == Path("docs/hosts/mcp.md") and b.lang == "sh"]
    stdio, http = [words for words, _ in _commands(block.body)]
    cwd = _workspace(tmp_path)
    done = subprocess.run(
        _argv(stdio, cwd), cwd=cwd, env=_env(), stdin=subprocess.DEVNULL,
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert (done.returncode, done.stdout) == (0, ""), done.stderr
    assert http[-2:] == ["--http", "127.0.0.1:8765"]
    with subprocess.Popen(
        [*_argv(http[:-1], cwd), "127.0.0.1:0"], cwd=cwd, env=_env(), stdin=subprocess.DEVNULL,
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    ) as server:  # fmt: skip
        watchdog = threading.Timer(90, server.kill)  # every wait has a bound
        watchdog.start()
        try:
            assert server.stderr is not None
            said = server.stderr.readline()
            assert said.startswith("pi-recipes mcp: serving release (choose_channel, "), said
            assert re.search(r" at http://127\.0\.0\.1:\d+/mcp$", said.strip()), said
            server.send_signal(signal.SIGINT)
            assert server.wait(timeout=60) == 130
        finally:
            watchdog.cancel()
            if server.poll() is None:
                server.kill()


# --- docs/engines.md: the Temporal commands


def test_the_temporal_commands_run_as_printed(temporal_server: str, tmp_path: Path) -> None:
    """The session's dev server stands in for the one the page starts (it listens on free
    ports: the printed address is replaced by its own); the rest runs as printed: a worker in
    the background, a run on the engine, answered from another process, the web host on it."""
    from tests.recipes.temporal.workers import WorkerProcess

    (block,) = [b for b in ALL if b.page == Path("docs/engines.md") and b.lang == "sh"]
    server, worker, export, run, answer, serve = [words for words, _ in _commands(block.body)]
    assert server == [".venv/bin/temporal", "server", "start-dev", "--headless", "&"]
    assert worker[-1] == "&" and export[0] == "export"

    def here(words: list[str]) -> list[str]:
        return [word.replace("127.0.0.1:7233", temporal_server) for word in words]

    name, url = here(export[1:])[0].split("=", 1)
    env = _env(**{name: url})
    cwd = _workspace(tmp_path)
    with subprocess.Popen(
        _argv(here(worker[:-1]), cwd), cwd=cwd, env=env, stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
    ) as process:  # fmt: skip
        try:
            WorkerProcess(process).wait_ready()
            for words in (run, answer):
                done = subprocess.run(
                    _argv(here(words), cwd, env), cwd=cwd, env=env, stdin=subprocess.DEVNULL,
                    capture_output=True, text=True, timeout=120,
                )  # fmt: skip
                assert done.returncode == 0, done.stderr
            assert "int-call_publish: Publish v1.4.0 to beta?" in done.stdout
            assert not (cwd / ".pi-recipes" / "state.db").exists(), "the runs are Temporal's"
            _serve(_argv(here(serve), cwd), cwd, env)
        finally:
            process.terminate()
            process.wait(timeout=30)


# --- docs/engines.md: the Temporal commands parse as printed


def test_the_engine_commands_parse_as_printed() -> None:
    (block,) = [b for b in _of("docs/engines.md", "sh") if "pi-recipes worker" in b]
    parser = build_parser()
    commands = [line.split("#")[0].strip().rstrip("&").strip() for line in block.splitlines()]
    ours = [shlex.split(c)[1:] for c in commands if c.startswith(".venv/bin/pi-recipes ")]
    assert [argv[0] for argv in ours] == ["worker", "run", "runs", "serve"]
    for argv in ours:
        if argv[0] != "serve":  # serve's own parser is the web host's
            parser.parse_args(argv)


# --- docs/workflows.md and docs/async-questions.md: the workflows shown


def test_the_workflow_shown_validates_beside_the_example_recipe() -> None:
    from recipes.graph.compiler import compile_graph

    (workflow,) = [b for b in _of("docs/workflows.md", "text") if "workflow release:" in b]
    compiled = compile_graph(workflow, file="docs.iter", base=ROOT / "examples")
    assert [d for d in compiled.diagnostics if d.is_error] == []
    assert compiled.graph.workflow.entry == "draft"


def test_the_async_questions_example_validates_and_matches_the_page() -> None:
    from recipes.graph.compiler import load_graph

    example = ROOT / "examples" / "async_questions.iter"
    compiled = load_graph(example)
    assert compiled.diagnostics == ()
    text = "async-questions.md"
    (shown,) = [b for b in _of(f"docs/{text}", "text") if "workflow async_questions:" in b]
    for line in shown.strip().splitlines():
        assert line in example.read_text(encoding="utf-8"), line


def test_the_async_questions_commands_run_as_printed(tmp_path: Path) -> None:
    """The run waits at its gate in one terminal while another answers: the answers wake it
    and it prints the finished README."""
    (block,) = [b for b in ALL if b.page == Path("docs/async-questions.md") and b.lang == "sh"]
    cwd = _workspace(tmp_path)
    validate, run, *meanwhile = _commands(block.body)
    _run_block(Block(block.page, block.line, "sh", None, shlex.join(validate[0]), None), cwd)
    with subprocess.Popen(
        _argv(run[0], cwd), cwd=cwd, env=_env(), stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    ) as waiting:  # fmt: skip
        watchdog = threading.Timer(180, waiting.kill)  # every wait has a bound
        watchdog.start()
        try:
            assert waiting.stdout is not None
            for line in waiting.stdout:  # it prints each question, then waits at the gate
                if "_draft_async_2" in line:
                    break
            for words, _ in meanwhile:
                done = subprocess.run(
                    _argv(words, cwd), cwd=cwd, env=_env(), capture_output=True, text=True,
                    timeout=60,
                )  # fmt: skip
                assert done.returncode == 0, done.stderr
            rest, errors = waiting.communicate(timeout=120)
        finally:
            watchdog.cancel()
            if waiting.poll() is None:
                waiting.kill()
    assert waiting.returncode == 0, errors
    assert "# Pipette" in rest and "friendly" in rest


# --- docs/benchmarks.md: run on demand (minutes long); each script is there and answers --help


def test_the_benchmark_commands_name_scripts_that_run() -> None:
    (block,) = [b for b in ALL if b.page == Path("docs/benchmarks.md") and b.lang == "sh"]
    scripts = [words for words, _ in _commands(block.body)]
    assert len(scripts) == 7
    for words in scripts:
        assert words[0] in (".venv/bin/python", ".venv-bench/bin/python"), words
        done = subprocess.run(
            [sys.executable, *words[1:], "--help"], cwd=ROOT, capture_output=True, text=True,
            timeout=60,
        )  # fmt: skip
        assert done.returncode == 0 and "usage:" in done.stdout, done.stderr
