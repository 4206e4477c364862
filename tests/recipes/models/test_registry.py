"""model_from_name: provider:model names to models."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from interactions.errors import UsageError
from recipes.models._base import Model
from recipes.models._registry import model_from_name
from recipes.models.anthropic import AnthropicModel
from recipes.models.openai import OpenAIChatModel

ENV = {"OPENAI_API_KEY": "sk-test-openai-0123456789", "ANTHROPIC_API_KEY": "sk-ant-test-0123456789"}


@pytest.mark.parametrize(
    ("name", "kind"),
    [
        ("openai:gpt-4.1-mini", OpenAIChatModel),
        ("openai:llama3.1:8b", OpenAIChatModel),
        ("anthropic:claude-sonnet-4-5", AnthropicModel),
    ],
)
def test_http_providers(name: str, kind: type) -> None:
    model = model_from_name(name, env=ENV)
    assert isinstance(model, kind)
    assert isinstance(model, Model)
    assert model.name == name
    for key in ENV.values():
        assert key not in model.name
        assert key not in repr(model)


def test_credentials_come_from_env_at_construction(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", "http://localhost:11434/v1")
    assert "localhost:11434" in repr(model_from_name("openai:llama3"))
    assert "api.openai.com" in repr(model_from_name("openai:llama3", env={}))


@pytest.mark.parametrize(
    ("name", "fragment"),
    [
        ("gpt-4.1-mini", "expected '<provider>:<model>'"),
        ("", "expected '<provider>:<model>'"),
        ("openai:", "empty"),
        ("anthropic:  ", "empty"),
        ("OpenAI:gpt-4", "unknown provider 'OpenAI'"),
        ("gemini:pro", "unknown provider 'gemini'"),
        (":gpt", "unknown provider ''"),
    ],
)
def test_refused_names(name: str, fragment: str) -> None:
    with pytest.raises(UsageError) as info:
        model_from_name(name, env=ENV)
    assert fragment in str(info.value)
    assert "openai:<model>" in str(info.value)
    assert "scripted:" in str(info.value)


def test_scripted(tmp_path: Path) -> None:
    scripted = pytest.importorskip("recipes.models.scripted")
    path = tmp_path / "script.json"
    path.write_text(json.dumps({"turns": [{"text": "Hello."}]}), encoding="utf-8")
    model = model_from_name(f"scripted:{path}", env={})
    assert isinstance(model, scripted.ScriptedModel)


@pytest.mark.parametrize(
    ("env", "families"),
    [({}, []), ({"OPENAI_API_KEY": "sk-x-000000001"}, ["openai"]),
     ({"ANTHROPIC_API_KEY": "sk-ant-0001", "OPENAI_API_KEY": "sk-x-0001"},
      ["anthropic", "openai"]),
     ({"ANTHROPIC_API_KEY": "   ", "OPENAI_API_KEY": ""}, []),
     ({"ANTHROPIC_API_KEY": "sk-ant\n0001"}, []),
     ({"OPENAI_BASE_URL": "http://127.0.0.1:1/v1", "GROQ_API_KEY": "gsk-0001"}, [])],
)  # fmt: skip
def test_credentialed_families_names_families_never_keys(
    env: dict[str, str], families: list[str]
) -> None:
    from recipes.models import FAMILY_KEYS, credentialed_families

    assert credentialed_families(env) == families
    assert set(FAMILY_KEYS) == {"anthropic", "openai"}
