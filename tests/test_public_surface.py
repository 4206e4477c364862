"""The public surface, pinned: every public module's names, in tiers; nothing leaks or vanishes
by accident, and no package reaches into another's private modules."""

from __future__ import annotations

import ast
import importlib
import pkgutil
from pathlib import Path

import pytest

import interactions
import interactions.store
from interactions import errors

ROOT = Path(__file__).resolve().parents[1]

PUBLIC: dict[str, set[str]] = {
    # what a tool author needs
    "interactions": {
        "AUTO_APPROVE_ENV", "AWAITING_TEXT", "Answered", "AnsweredMultiple", "Approved",
        "AskUserDisplay", "AskUserInterrupt", "AskUserOption", "AskUserOutcome", "AskUserResult",
        "AskUserSection", "AwaitingUser", "ConflictError", "ContractError", "DECLINED_TEXT",
        "DEFAULT_INTERRUPT_TTL", "Declined", "ExpiredError", "INTERRUPT_RESUME_ENV",
        "INTERRUPT_TTL_ENV", "IllegalTransitionError", "InteractionAborted",
        "InvalidPayloadError", "NotAllowedError", "PiRecipesError", "Remember",
        "RevisionRequested", "RunError",
        "UNAVAILABLE_TEXT", "Unavailable", "UnknownDecisionError", "UnknownInteractionError",
        "UnknownRunError", "UnreadableInteractionError", "UsageError", "ask_user",
        "ask_user_approval", "ask_user_question",
        "auto_resolve_interactions", "format_interaction_outcome", "is_awaiting",
    },
    "recipes": {
        "AbortSignal", "Agent", "AgentSession", "Answer", "Answers", "AwaitingCall",
        "ENTRY_POINT_GROUP", "ExecutionMode", "NoParameters", "OnUpdate", "PausedBatch", "Recipe",
        "RecipeAPI", "RecipeDefinitionError", "RecipeFunction", "RecipeLoadError", "ResumeMode",
        "Tool", "ToolContext", "ToolExecute", "ToolResult", "build_recipe",
        "create_agent_session", "load_recipe", "resolve_model", "to_tool_result",
    },
    # what a host author needs
    "interactions.asks": {
        "ARGS_SCHEMA", "ROOT_SCOPE", "ApprovalRequest", "AskLedger", "AskScope", "AskUserDetails",
        "AskUserRequest", "Mode", "OptionLike",
        "QuestionRequest", "Selection", "TextContent", "ToolContextLike", "ask_position",
        "call_key", "interrupt_id_for", "interrupt_ttl", "normalize_options",
    },
    "interactions.async_questions": {
        "ALL_ANSWERED_HEADER", "ASYNC_KIND", "ASYNC_PROMPT_SECTION", "AWAIT_KIND",
        "AWAIT_REASON", "MESSAGE_CANCELLED", "MESSAGE_DELIVERED", "MESSAGE_QUEUED",
        "answer_line", "answer_message", "answer_text", "answered_at_once", "async_interaction",
        "async_interaction_id", "await_interrupt", "awaited_ids", "collected_text",
        "open_for_pause", "pending_async", "posted_text", "question_of", "settle_awaits",
        "waited_for",
    },
    "interactions.audit": {
        "AUDITED_EVENTS", "AUDIT_COLUMNS", "PAGE_SIZE", "RUNS_KEPT", "TOOL_CALL_DECIDED",
        "AuditRow", "audit_rows", "audit_time",
    },
    "interactions.channels": {
        "AUTO_APPROVE_ENV", "AskCall", "AutoApproveChannel", "AutoResolveChannel", "Channel",
        "ChannelFacts", "DEFAULT_CHANNELS", "DialogChannel", "INTERRUPT_RESUME_ENV",
        "InterruptChannel", "UnavailableChannel", "auto_resolve_interactions", "flag_on",
        "gather_facts", "select_channel",
    },
    "interactions.dialogs": {
        "APPROVE", "DECLINE", "DONE", "EDIT", "DialogGuard", "DialogStep", "DialogUI",
        "EditorStep", "InputStep", "MultiSelectStep", "MultiSelectUI", "REQUEST_CHANGES",
        "SelectStep", "around",
        "dialog_title", "dialog_walk", "run_dialog",
    },
    "interactions.errors": {
        "ConflictError", "ContractError", "ERROR_CODES", "ErrorCode", "ExpiredError",
        "IllegalTransitionError", "InteractionAborted", "InvalidPayloadError", "NotAllowedError",
        "PiRecipesError", "RunError", "StoreUnavailableError", "UnknownDecisionError",
        "UnknownInteractionError", "UnknownRunError", "UnreadableInteractionError",
        "UsageError", "error_code",
    },
    "interactions.people": {
        "APPROVERS", "GROUP_PREFIX", "REQUIRED_APPROVALS", "Identity", "approvers_of",
        "check_approvers", "check_not_allowed", "may_answer", "people_metadata",
        "required_approvals_of", "who",
    },
    "interactions.reminders": {
        "ESCALATE_AFTER", "ESCALATE_TO", "INTERACTION_ESCALATED", "INTERACTION_REMINDED",
        "REMIND_AFTER", "Due", "Reach", "Reached", "approvers_now", "check_reach_window",
        "current_approvers", "due_notices", "escalated_ids", "next_due", "reach_metadata",
        "reach_of", "reached_of", "remind_due",
    },
    "interactions.resume": {
        "MAX_PAYLOAD_BYTES", "RUN_ENDED", "AnswerPayload", "AnswerPlan", "AnswersPayload",
        "ApprovalPayload", "ResumePlan", "plan_answer",
        "ResumeStatus", "answer_outcome", "check_payload_against_schema", "check_text",
        "new_answer",
        "format_interaction_resume", "normalize_answer", "outcome_from_resume", "parse_json",
        "parse_resume_entries", "plan_resume",
        "resolve_answer", "response_schema_for", "same_as_stored", "validate_answer",
    },
    "interactions.plugins": {"installed_plugins", "load_plugin"},
    "interactions.secrets": {
        "MIN_SECRET_CHARS", "REDACTED", "Secrets", "TextScrubber", "credential_names", "scrub_logs",
    },
    "interactions.store": {
        "AuditStore", "DEFAULT_STORE_PATH", "DecisionAction", "DecisionRecord", "DecisionScope",
        "DecisionStore", "NewDecision",
        "EventInput", "EventRecord", "InteractionAnswer", "InteractionKind",
        "MAX_JSON_DEPTH",
        "InteractionRecord", "MemoryStore", "NewInteraction", "NewRun", "PostgresStore",
        "NewVote", "VoteOutcome", "VoteRecord", "VoteStore", "ConsumerStore", "ReminderStore",
        "RunRecord", "RunStatus", "SCHEMA_VERSION", "SQLiteStore", "Store", "StoreEventType",
        "StoreSchemaError", "TERMINAL_STATUSES", "TRANSITIONS", "canonical_json",
        "check_transition", "is_terminal", "names_postgres", "open_postgres_store",
        "open_sqlite_store", "utc_now",
        "ENGINE_ENTRY_POINTS", "STORE_ENTRY_POINTS", "SchemeKind", "StoreOpener", "names_engine",
        "open_store", "register_store_scheme", "sqlite_path", "store_schemes",
    },
    "interactions.store.memory": {"MemoryStore"},
    "interactions.store.postgres": {"PostgresStore", "open_postgres_store", "redact_dsn"},
    "interactions.store.sqlite": {"DEFAULT_STORE_PATH", "SQLiteStore", "open_sqlite_store"},
    "interactions.testing": set(),
    "interactions.testing.counting": {"READS", "WRITES", "CountingStore"},
    "interactions.testing.dialogs": {
        "ABORT", "DialogCall", "HANG", "ScriptedDialogUI", "StaticToolContext",
    },
    "interactions.testing.store_conformance": {
        "AuditConformance", "ConsumersConformance", "DecisionsConformance", "StoreConformance",
        "StoreSnapshot", "RemindersConformance",
        "VotesConformance",
        "answer", "new_decision", "new_vote",
        "new_interaction", "new_run",
        "store_snapshot",
    },
    "recipes.async_questions": {
        "ASK_TOOL", "AWAIT_TOOL", "AskUserAsync", "AsyncQuestions", "AwaitAnswers",
        "async_question_tools", "with_async_questions",
    },
    "recipes.decisions": {
        "AUDIT_KEPT", "TOOL_CALL_DECIDED", "Action", "DecisionBook", "SessionBook", "Standing",
        "StoreBook",
    },
    "recipes.demo": {"recipe"},
    "recipes.expressions": {
        "ARITY", "MISSING", "OUTSIDE_SUBSET", "Expr", "ExpressionError", "Ref", "as_text",
        "compile_expr", "duration_seconds", "references", "render", "same", "truthy",
    },
    "recipes.policy": {
        "ACTIONS", "POLICY_ENV", "Decision", "Policy", "PolicyError", "Rule", "kept_policy",
        "load_policy", "parse_policy", "policy_of",
    },
    "recipes.events": {
        "AgentEnd", "AgentEvent", "AgentEventAdapter", "AgentStart", "EventListener",
        "MessageEnd", "MessageStart", "MessageUpdate", "SessionStatus", "ToolExecutionEnd",
        "ToolExecutionStart", "ToolExecutionUpdate", "TurnEnd", "TurnStart",
    },
    "recipes.messages": {
        "AssistantMessage", "ContentPart", "ImagePart", "Message", "TextPart", "Thinking",
        "ToolCall", "ToolResultMessage", "TranscriptAdapter", "Usage", "UserMessage",
        "stop_warning", "text_of",
    },
    "recipes.models": {
        "AnthropicModel", "Completed", "ErrorClass", "Model", "ModelError", "ModelEvent",
        "ModelRequest", "OpenAIChatModel", "RetryPolicy", "ScriptExhausted", "ScriptFileError",
        "ScriptTurn", "ScriptedModel", "TextDelta", "ToolCallDelta", "ToolSpec", "model_from_name",
        "FAMILY_KEYS", "credentialed_families", "Secrets", "ACCEPTED_FORMS", "PROVIDERS",
        "model_name_problem",
    },
    "recipes.models.anthropic": {
        "API_VERSION", "AnthropicModel", "DEFAULT_BASE_URL", "DEFAULT_MAX_TOKENS", "build_body",
    },
    "recipes.models.openai": {"DEFAULT_BASE_URL", "OpenAIChatModel", "build_body"},
    "recipes.models.scripted": {
        "ScriptExhausted", "ScriptFileError", "ScriptTurn", "ScriptedModel",
    },
    "recipes.runs": {
        "ENGINE_ENV", "AnswerResult", "Claim", "EventSink", "ExpiryPolicy", "RunResult",
        "RunView", "Runner", "Runs", "Surface", "answer", "new_run_id", "resume", "runner_for",
        "start_run",
    },
    "recipes.runs.agui": {
        "LEG_ENDED", "LegTranslator", "Outcome", "agui_events", "event_from_json", "event_json",
        "leg_agui_events", "run_closed", "run_started",
    },
    "recipes.runs.drivers": {
        "AUTO_RESUME_KEY", "BRANCH_AWAIT_ERROR", "DRIVER_ENTRY_POINTS", "KeptPolicy", "LEG_ENDED",
        "RETRY_SCHEDULED", "RETRY_SKIPPED", "AwaitingRef", "Checkpoint", "LegIds", "LegRecord",
        "LegWrites", "PausedCalls", "RecipeDriver", "RetrySchedule", "RunAsyncQuestions",
        "RunDriver", "RunEngine", "RunEnvelope", "RunWrites", "close_leg", "continuing_policy",
        "default_agui_run_id",
        "drive_leg", "driver_for", "durable_model", "durable_ref", "message_id", "moved_error",
        "record_failed_resumable", "record_interrupted", "register_driver", "retry_schedule_of",
        "watch_run",
    },
    "recipes.runs.planning": {
        "RESUMABLE_ERROR_CLASSES", "ExpiryPlan", "LegEnd", "ResumeResults", "answered_interrupt",
        "answered_result",
        "checkpoint_paused", "describe_error", "expiry_policy_of", "last_text", "leg_end",
        "new_interaction", "plan_expiry", "resumable", "resume_results", "session_resume",
        "plan_retry", "retry_delay",
    },
    "recipes.tracing": {
        "CAPTURE_CONTENT", "SCOPE", "Call", "Leg", "TraceRef", "carried", "carrying", "configure",
        "enabled", "event",
        "leg", "model_call", "model_done", "node", "tool_asks", "tool_call", "tracer_provider",
    },
    "recipes.session": {
        "DEFAULT_MAX_TURNS", "AgentSession", "EventListener", "create_agent_session",
    },
    # the Temporal engine (the temporal extra)
    "recipes.temporal": {
        "DEFAULT_NAMESPACE", "DEFAULT_TASK_QUEUE", "ENGINE_ENV", "EngineAddress", "FailurePolicy",
        "MODEL_FAILURES", "MODEL_RETRY", "SEARCH_ATTRIBUTES", "TOOL_RETRY", "TemporalRunner",
        "TemporalStore", "WORKFLOW", "connect", "open_temporal_engine",
        "register_search_attributes", "running_worker",
    },
    "hosts": set(),
    "hosts.cli": {"COMMAND_ENTRY_POINTS", "build_parser", "main"},
    # the graph engine
    "recipes.graph": {
        "Compiled", "Diagnostic", "GRAPH_DRIVER", "GraphBuilder", "GraphDriver", "GraphError",
        "compile_graph", "load_graph", "parse", "start_graph", "unparse", "validate",
    },
    "recipes.graph.backends": {
        "AgentBackend", "AsyncQuestionBackend", "BUILTIN", "DEFAULT_BACKEND",
        "ITERION_ONLY_BACKENDS", "backend_names", "get_backend", "register_backend",
        "supports_async_questions", "unregister_backend",
    },
    "recipes.graph.builder": {"GraphBuilder", "WorkflowBuilder"},
    "recipes.graph.compiler": {
        "Compiled", "FanOut", "GraphError", "MAX_SOURCE", "Plan", "RUN_MEMBERS", "STAMPS",
        "VAR_REF", "analyse", "compile_graph", "compile_stored", "diagnose",
        "human_field_problem", "load_graph",
        "output_fields", "read_source", "recipe_ref", "validate",
    },
    "recipes.graph.ir": {
        "DEFAULT_TRIGGERS", "FALLBACK_ACTIONS", "FALLBACK_TRIGGERS", "PRIMARY",
        "AwaitAnswersNode", "Budget", "ComputeNode", "Condition", "Edge", "Field", "Graph",
        "HumanNode", "LLMNode",
        "Loop", "Node", "Pos", "Prompt", "Route", "RouterNode", "Schema", "TERMINALS", "TYPES",
        "Text", "ToolNode", "Var", "Workflow",
    },
    "recipes.graph.language": {
        "ARITY", "CATALOG", "CatalogEntry", "Diagnostic", "Expr", "ExpressionError", "MISSING",
        "OUTSIDE_SUBSET", "Pos", "Ref", "Severity", "VALUE_DEPTH", "compile_expr", "diag",
        "did_you_mean", "duration_seconds", "nests_deeper", "parse", "read_json", "references",
        "render", "same", "truthy", "unparse", "Bound", "as_text", "bind_command",
        "unsafe_references",
    },
    "recipes.graph.picture": {
        "DRAW_EXTRA", "EDGE_KINDS", "FORMATS", "KIND_NAMES", "NODE_KINDS", "NODE_STATES",
        "STATE_NAMES", "EdgeKind", "NodeKind", "NodeState", "PathStep", "Picture", "PictureEdge",
        "PictureNode", "RunPicture", "back_edges", "draw_file", "edge_label", "layout",
        "node_states", "picture_of", "run_picture", "to_mermaid", "to_svg",
    },
    "recipes.graph.runtime": {
        "Cursor", "DEFAULT_TIMEOUTS", "GRAPH_DRIVER", "GRAPH_EVENTS", "GraphCheckpoint",
        "GraphDriver", "NodeRun", "SessionState", "launch_vars", "node_tools",
        "PLAN_REVIEW_BRAKE", "credential_vars",
        "parse_assignments", "path_lines", "start_graph",
    },
    "hosts.mcp": {
        "Elicit", "ElicitationChannel", "ElicitationForm", "ElicitationReply",
        "ElicitationTimeout", "INTERRUPT_META", "MODE", "PROGRESS_BUFFER", "build_parser",
        "build_server", "configure_parser", "elicitation_form", "elicitation_timeout", "main",
        "mcp_channels", "mcp_tool", "parse_address", "read_elicitation", "run_parsed",
        "serve_http", "serve_stdio", "served_tools",
    },
    "hosts.rpc": {
        "ABORT_GRACE", "DEFAULT_TIMEOUT", "DRAIN_GRACE", "EXIT_ON_SIGNAL", "OUTPUT_LOST",
        "RpcDialogUI", "RpcServer", "build_parser", "configure_parser", "main", "run_parsed",
        "serve",
    },
    "hosts.slack": {
        "AllowList", "SlackConfig", "SlackHost", "SlackOut", "SlackSecrets", "build_parser",
        "main", "serve", "slack_asgi_app", "slack_routes", "socket_mode",
        "web_client",
    },
    "hosts.email": {
        "EmailConfig", "EmailHost", "LinkSigner", "SmtpSettings", "UsersFile", "build_parser",
        "main", "serve",
    },
    "hosts.cli.terminal": {"TerminalDialogUI"},
    "hosts.web": {"build_parser", "configure_parser", "main", "run_parsed"},
    "hosts.web.app": {"WebConfig", "WebHost", "create_app"},
}  # fmt: skip


def _public_modules() -> list[str]:
    found = []
    for package in ("interactions", "recipes", "hosts"):
        root = importlib.import_module(package)
        found.append(package)
        for info in pkgutil.walk_packages(root.__path__, f"{package}."):
            if not any(part.startswith("_") for part in info.name.split(".")):
                found.append(info.name)
    return sorted(found)


def test_every_public_module_is_pinned() -> None:
    assert _public_modules() == sorted(PUBLIC)


@pytest.mark.parametrize("name", sorted(PUBLIC))
def test_public_names_are_pinned_and_documented(name: str) -> None:
    module = importlib.import_module(name)
    assert set(module.__all__) == PUBLIC[name]
    for attr in module.__all__:
        obj = getattr(module, attr)
        if callable(obj) and getattr(obj, "__module__", "").split(".")[0] in PUBLIC:
            assert obj.__doc__ and obj.__doc__.strip(), f"{name}.{attr} has no docstring"


def _imports(path: Path) -> list[str]:
    """The modules ``path`` imports: ``import`` statements, and the names given to
    ``importlib.import_module`` or ``__import__`` (a string built at run time reads as its
    literal start followed by ``*``: ``f"hosts.{name}"`` is ``hosts.*``)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            out.append(node.module)
        elif isinstance(node, ast.Import):
            out.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.Call) and _names_import(node.func) and node.args:
            out.append(_literal_start(node.args[0]))
    return out


def _names_import(func: ast.expr) -> bool:
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    return name in ("import_module", "__import__")


def _literal_start(arg: ast.expr) -> str:
    """The module a call imports, as far as the source says: a string, or the literal start
    of an f-string or a concatenation then ``*``."""
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return arg.value
    if isinstance(arg, ast.JoinedStr) and arg.values:
        first = arg.values[0]
        start = first.value if isinstance(first, ast.Constant) else ""
        return f"{start}*"
    if isinstance(arg, ast.BinOp) and isinstance(arg.op, ast.Add):
        return _literal_start(arg.left).removesuffix("*") + "*"
    return "*"


@pytest.mark.parametrize("package", ["interactions", "recipes", "hosts"])
def test_no_package_imports_another_packages_private_modules(package: str) -> None:
    offenders = []
    for path in (ROOT / package).rglob("*.py"):
        for module in _imports(path):
            top, *rest = module.split(".")
            if top in PUBLIC and top != package and any(p.startswith("_") for p in rest):
                offenders.append(f"{path.relative_to(ROOT)}: {module}")
    assert offenders == []


def _other_host(module: str, host: str) -> bool:
    """Whether importing ``module`` from the host ``host`` reaches another host (shared host
    code, ``hosts/_*.py`` or ``hosts/_*/``, is no host; a name built at run time under
    ``hosts.`` may be any host)."""
    parts = module.split(".")
    if parts[0] == "hosts*":  # "hosts" and a name built at run time
        return True
    if parts[0] != "hosts" or len(parts) == 1:
        return False
    return parts[1] != host and not parts[1].startswith("_")


def test_hosts_do_not_import_each_other() -> None:
    offenders = []
    for host in (ROOT / "hosts").iterdir():
        if not host.is_dir() or host.name.startswith("_"):
            continue
        for path in host.rglob("*.py"):
            offenders += [
                f"{path.relative_to(ROOT)}: {module}"
                for module in _imports(path)
                if _other_host(module, host.name)
            ]
    assert offenders == []


@pytest.mark.parametrize(
    ("source", "caught"),
    [
        ("from hosts.web import main", True),
        ("import hosts.slack._main", True),
        ("import importlib\nimportlib.import_module('hosts.mcp')", True),
        ("from importlib import import_module\nimport_module('hosts.rpc')", True),
        ("import importlib\nname = 'web'\nimportlib.import_module(f'hosts.{name}')", True),
        ("import importlib\nimportlib.import_module('hosts.' + 'web')", True),
        ("__import__('hosts.web')", True),
        ("from hosts.cli._store import where_of", False),  # its own modules
        ("from hosts._store import chosen_location", False),  # shared host code
        ("import importlib\nimportlib.import_module('recipes.temporal')", False),
    ],
)
def test_the_host_import_check_catches_imports_by_name(
    tmp_path: Path, source: str, caught: bool
) -> None:
    path = tmp_path / "module.py"
    path.write_text(source, encoding="utf-8")
    assert any(_other_host(m, "cli") for m in _imports(path)) is caught


def test_layers_only_point_down() -> None:
    for path in (ROOT / "interactions").rglob("*.py"):
        assert not [m for m in _imports(path) if m.split(".")[0] in ("recipes", "hosts")], path
    for path in (ROOT / "recipes").rglob("*.py"):
        assert not [m for m in _imports(path) if m.split(".")[0] == "hosts"], path


# Inside recipes: authoring and the agent loop, then the kernel of durable runs, then the
# engines that drive it (each knows nothing of the other).
RECIPES_LAYERS = {
    "authoring and the agent loop": ((), ("recipes.runs", "recipes.graph", "recipes.temporal")),
    "runs": (("runs",), ("recipes.graph", "recipes.temporal")),
    "graph": (("graph",), ("recipes.temporal",)),
    "temporal": (("temporal",), ("recipes.graph",)),
}


@pytest.mark.parametrize("layer", sorted(RECIPES_LAYERS))
def test_recipes_layers_only_point_down(layer: str) -> None:
    folders, below_us = RECIPES_LAYERS[layer]
    engines_and_runs = ("runs", "graph", "temporal")
    offenders = []
    for path in (ROOT / "recipes").rglob("*.py"):
        part = path.relative_to(ROOT / "recipes").parts[0]
        mine = part in folders if folders else part not in engines_and_runs
        if not mine:
            continue
        for module in _imports(path):
            if any(module == up or module.startswith(up + ".") for up in below_us):
                offenders.append(f"{path.relative_to(ROOT)}: {module}")
    assert offenders == []


def test_error_families() -> None:
    assert issubclass(interactions.UsageError, ValueError)
    assert issubclass(interactions.ContractError, interactions.UsageError)
    assert issubclass(interactions.InteractionAborted, Exception)
    assert not issubclass(interactions.InteractionAborted, interactions.RunError)
    for cls in (
        interactions.ConflictError,
        interactions.ExpiredError,
        interactions.UnknownRunError,
        interactions.UnknownInteractionError,
        interactions.UnknownDecisionError,
        interactions.InvalidPayloadError,
        interactions.IllegalTransitionError,
        interactions.UnreadableInteractionError,
    ):
        assert issubclass(cls, interactions.RunError)
    err = interactions.ConflictError("taken", run_id="r1", interaction_id="int-1", reason="x")
    assert (err.run_id, err.interaction_id, err.reason) == ("r1", "int-1", "x")


@pytest.mark.parametrize(
    ("error", "label", "exit_code", "http"),
    [
        (interactions.ConflictError("x"), "conflict", 3, 409),
        (interactions.UnreadableInteractionError("x"), "unreadable interaction", 3, 409),
        (interactions.UnknownRunError("x"), "unknown run", 4, 404),
        (interactions.UnknownInteractionError("x"), "unknown interaction", 4, 404),
        (interactions.UnknownDecisionError("x"), "unknown decision", 4, 404),
        (interactions.ExpiredError("x"), "expired", 5, 410),
        (interactions.InvalidPayloadError("x"), "invalid payload", 6, 422),
        (interactions.ContractError("x"), "usage", 2, 400),
        (interactions.RunError("x"), "error", 1, 500),
        (RuntimeError("x"), "error", 1, 500),
    ],
)
def test_one_table_says_how_every_error_is_reported(
    error: BaseException, label: str, exit_code: int, http: int
) -> None:
    assert errors.error_code(error) == errors.ErrorCode(label, exit_code, http)


def test_backends_satisfy_the_store_protocol() -> None:
    store_cls = interactions.store.Store
    assert isinstance(interactions.store.MemoryStore(), store_cls)
    assert isinstance(interactions.store.SQLiteStore("unused.db"), store_cls)
