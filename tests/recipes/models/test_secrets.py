"""The registry of secrets: which credentials it knows, and what its scrub removes and keeps."""

from __future__ import annotations

import json
import time
from urllib.parse import quote, quote_plus

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from recipes.models._secrets import MIN_SECRET_CHARS, Secrets, header_value_problem

KEY = "sk-proj-Xk3LEAK7f0c9a2b4d6e8Zq9W"
TOKEN = "tok.LEAKENV.0123456789/+=<&>Wx7R"  # no known key shape: only the registry knows it


@pytest.mark.parametrize(
    "name",
    [
        "OPENAI_API_KEY",
        "ANTHROPIC_API_KEY",
        "GITHUB_TOKEN",
        "SLACK_BOT_TOKEN",
        "SLACK_SIGNING_SECRET",
        "AWS_SECRET_ACCESS_KEY",
        "DB_PASSWORD",
        "SMTP_PASSWD",
        "GPG_PASSPHRASE",
        "GOOGLE_CREDENTIALS",
        "MISTRAL_APIKEY",
        "openai_api_key",
        "TOKEN",
        "SECRET",
        "PGPASSWORD",  # libpq's
        "MYSQL_PWD",  # MySQL's
        "OPENAI_API_KEY_2",  # a second account's key
        "GITHUB_TOKEN2",
        "DB_PASSWORD_1",
        "aws_secret_access_key_02",
    ],
)
def test_credential_variables_are_secrets(name: str) -> None:
    secrets = Secrets.from_env({name: TOKEN})
    assert TOKEN in secrets
    assert secrets.scrub(f"echo {TOKEN}") == "echo ***"


@pytest.mark.parametrize(
    "name",
    [
        "PATH",
        "HOME",
        "PWD",  # the working directory
        "OLDPWD",  # the one before
        "OPENAI_BASE_URL",
        "MONKEY2",
        "PASSWORD_PROMPT_TEXT",
        "TOKENIZERS_PARALLELISM",
        "KEYBOARD_LAYOUT",
        "MONKEY",
        "PI_INTERRUPT_TTL_SECONDS",
    ],
)
def test_other_variables_are_not(name: str) -> None:
    secrets = Secrets.from_env({name: TOKEN})
    assert TOKEN not in secrets
    assert len(secrets) == 0


@pytest.mark.parametrize("value", ["", "1", "true", "ollama", "x" * (MIN_SECRET_CHARS - 1)])
def test_short_values_are_not_secrets(value: str) -> None:
    secrets = Secrets.from_env({"OPENAI_API_KEY": value}, value)
    assert len(secrets) == 0
    assert secrets.scrub(f"model {value} here") == f"model {value} here"


def test_the_models_own_key_and_url_passwords_are_secrets() -> None:
    env = {"DATABASE_URL": "postgresql://app:pa%40ss-word-42@db.test:5432/runs", "PATH": "/bin"}
    secrets = Secrets.from_env(env, KEY, None)
    assert (KEY in secrets, "pa%40ss-word-42" in secrets, "pa@ss-word-42" in secrets) == (
        True,
        True,
        True,
    )
    assert secrets.scrub("login pa@ss-word-42 failed") == "login *** failed"


def test_values_never_show() -> None:
    secrets = Secrets.from_env({"GITHUB_TOKEN": TOKEN}, KEY)
    assert repr(secrets) == str(secrets) == "Secrets(<2 hidden>)"


SECRETS = Secrets([KEY, TOKEN])


@pytest.mark.parametrize(
    "spelling",
    [
        TOKEN,
        json.dumps(TOKEN)[1:-1],
        json.dumps(TOKEN)[1:-1].replace("/", "\\/"),
        json.dumps(TOKEN)[1:-1]
        .replace("<", "\\u003c")
        .replace(">", "\\u003e")
        .replace("&", "\\u0026"),
        repr(TOKEN)[1:-1],
        repr(TOKEN.encode())[2:-1],
        quote(TOKEN, safe=""),
        quote_plus(TOKEN),
    ],
    ids=["as is", "JSON", "JSON \\/", "JSON html-safe", "repr", "bytes repr", "URL", "URL plus"],
)
def test_every_spelling_of_a_secret_is_scrubbed(spelling: str) -> None:
    assert SECRETS.scrub(f"said [{spelling}] twice: {spelling}") == "said [***] twice: ***"


def json_u(char: str, upper: bool = False) -> str:
    code = f"{ord(char):04x}"
    return "\\u" + (code.upper() if upper else code)


def percent(char: str, upper: bool = True) -> str:
    return "".join(f"%{b:02X}" if upper else f"%{b:02x}" for b in char.encode())


def each(secret: str, spell: object) -> str:
    return "".join(spell(c) for c in secret)  # type: ignore[operator]


def alternate(secret: str, spell: object) -> str:
    return "".join(spell(c) if i % 2 else c for i, c in enumerate(secret))  # type: ignore[operator]


MIXED_SPELLINGS = [json_u, percent, lambda c: f"&#{ord(c)};", lambda c: f"&#x{ord(c):X};"]


@pytest.mark.parametrize(
    "spelling",
    [
        each(TOKEN, json_u),
        each(TOKEN, lambda c: json_u(c, upper=True)),
        alternate(TOKEN, json_u),
        alternate(KEY, lambda c: json_u(c, upper=True)),
        "\\\\u0074" + TOKEN[1:],  # the escape of a JSON string inside a JSON string
        each(TOKEN, percent),
        each(TOKEN, lambda c: percent(c, upper=False)),
        TOKEN.replace("/", "%2f").replace("+", "%2b"),
        TOKEN.replace("+", "%252B"),  # percent-encoded twice
        TOKEN.replace("+", "&#43;"),
        TOKEN.replace("+", "&#x2B;").replace("/", "&#X2f;"),
        TOKEN.replace("+", "&#0043;"),
        TOKEN.replace("/", "&sol;").replace("+", "&plus;").replace("=", "&equals;"),
        TOKEN.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&GT;"),
        TOKEN.replace("&", "&amp;amp;"),  # HTML-escaped twice
        "".join(MIXED_SPELLINGS[i % 4](c) for i, c in enumerate(TOKEN)),  # type: ignore[operator]
    ],
    ids=[
        "JSON \\u, each char",
        "JSON \\U hex in upper case",
        "JSON \\u, every other char",
        "the key, every other char \\u",
        "JSON in JSON",
        "percent, each char",
        "percent, lower-case hex",
        "percent, only the reserved chars, lower case",
        "percent twice",
        "HTML decimal",
        "HTML hex",
        "HTML leading zeros",
        "HTML named",
        "HTML named, any case",
        "HTML twice",
        "mixed per char",
    ],
)
def test_a_secret_is_found_however_it_was_escaped(spelling: str) -> None:
    assert SECRETS.scrub(f"said [{spelling}] twice: {spelling}") == "said [***] twice: ***"


@pytest.mark.parametrize(
    ("secret", "spelling"),
    [
        ("pass word 0123", "pass+word+0123"),  # a form-encoded space
        ("pässwörd-0123", each("pässwörd-0123", percent)),  # UTF-8 bytes, percent-encoded
        ("pässwörd-0123", "p\\xc3\\xa4ssw\\xc3\\xb6rd-0123"),  # bytes repr
        ("pässwörd-0123", each("pässwörd-0123", json_u)),
        ("key-😀-0123", "key-\\ud83d\\uDE00-0123"),  # a JSON surrogate pair
        ("key-😀-0123", "key-&#128512;-0123"),
        ('q"uo\\te-0123', 'q\\"uo\\\\te-0123'),
        ("tab\tline\n0123", "tab\\u0009line\\n0123"),
    ],
)
def test_any_character_is_found_however_it_was_escaped(secret: str, spelling: str) -> None:
    assert Secrets([secret]).scrub(f"[{spelling}]") == "[***]"


def _spelled(char: str, how: int, upper: bool) -> str:
    """``char`` in one of the escapes a remote may use (JSON, percent, HTML decimal or hex)."""
    code = ord(char)
    if how == 1:
        pairs = [code] if code <= 0xFFFF else [0xD800 + ((code - 0x10000) >> 10),
                                               0xDC00 + ((code - 0x10000) & 0x3FF)]  # fmt: skip
        text = "".join(f"\\u{unit:04x}" for unit in pairs)
    elif how == 2:
        text = "".join(f"%{b:02x}" for b in char.encode("utf-8", "surrogatepass"))
    elif how == 3:
        return f"&#{code};"
    elif how == 4:
        text = f"&#x{code:x};"
    else:
        return char
    return text.upper().replace("\\U", "\\u").replace("&#X", "&#x") if upper else text


@example(secret="00000000&", hows=[0] * 8 + [3] + [0] * 21, upper=False)  # &#38; ends it
@given(
    secret=st.text(min_size=MIN_SECRET_CHARS, max_size=30),
    hows=st.lists(st.integers(0, 4), min_size=30, max_size=30),
    upper=st.booleans(),
)
def test_a_secret_escaped_any_way_per_character_never_survives(
    secret: str, hows: list[int], upper: bool
) -> None:
    spelled = "".join(_spelled(c, how, upper) for c, how in zip(secret, hows, strict=False))
    assert Secrets([secret]).scrub(f"<{spelled}>") == "<***>"


def test_a_secret_with_a_line_break_as_a_refused_header_quotes_it() -> None:
    key = "sk-abc\nLEAK-0123456789"
    message = f"Illegal header value {('Bearer ' + key).encode()!r}"
    assert Secrets([key]).scrub(message) == "Illegal header value b'Bearer ***'"


@pytest.mark.parametrize(
    "echo",
    [
        "sk-proj-****************************Zq9W",  # OpenAI's "Incorrect API key provided"
        "sk-...Zq9W",
        "sk-proj-Xk3L…Zq9W",
        "sk-proj-Xk3***Zq9W",
        "sk-proj-Xk3L...",
        "...Zq9W",
        "…Zq9W",
        "**********Zq9W",
        "tok***",
        "***Wx7R",
    ],
)
def test_partial_echoes_of_a_known_secret_are_scrubbed(echo: str) -> None:
    assert SECRETS.scrub(f"Incorrect API key provided: {echo}.") == (
        "Incorrect API key provided: ***."
    )


@pytest.mark.parametrize(
    ("text", "scrubbed"),
    [
        ("key sk-test-0123456789abcdef", "key ***"),
        (f"key sk-ant-api03-{'x1' * 20}", "key ***"),
        ("key sk-...wxyz for a key we never held", "key *** for a key we never held"),
        ("slack xoxb-1234-5678-abcdefgh", "slack ***"),
        ("gh ghp_" + "a1" * 18, "gh ***"),
        ("pat github_pat_" + "b2" * 15, "pat ***"),
        ("hf hf_" + "c3" * 15, "hf ***"),
        ("aws AKIAIOSFODNN7EXAMPLE", "aws ***"),
        ("google AIza" + "d4" * 17 + "e", "google ***"),
        ("Authorization: Bearer abc.def-123_ghi", "Authorization: Bearer ***"),
        ("authorization: bearer 0123456789", "authorization: bearer ***"),
    ],
)
def test_credential_shapes_are_scrubbed_without_knowing_them(text: str, scrubbed: str) -> None:
    assert Secrets().scrub(text) == scrubbed


@pytest.mark.parametrize(
    "text",
    [
        "Hmm... let me think.",
        "Use sk-learn for that, e.g. with **bold** text.",
        "Bearer authentication sends a token.",
        "Your key ends in Zq9W.",  # the last four with no mask identify nothing
        "Wait…then go",
        '{"id": "chatcmpl-9abc123", "choices": [{"delta": {"content": "Hello"}}]}',
        "ask-0123456789 and task-0123456789 are not keys",
        "The version is 1.2.3, see ...",
    ],
)
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert SECRETS.scrub(text) == text


def test_a_json_chunk_stays_json() -> None:
    chunk = json.dumps({"choices": [{"delta": {"content": f"key {TOKEN} and {KEY}"}}]})
    assert json.loads(SECRETS.scrub(chunk)) == {
        "choices": [{"delta": {"content": "key *** and ***"}}]
    }


@pytest.mark.parametrize(
    "text",
    [
        "a" * 40_000 + " end",
        "sk-" * 25_000 + " end",
        "Bearer " + "b" * 40_000,
        "\\" * 40_000 + " end",
        "\\u0074" * 10_000 + " end",
        "%" * 40_000 + " end",
        "&amp;" * 10_000 + " end",
        "tok.LEAKENV." * 4_000 + " end",
    ],
    ids=[
        "a long token",
        "many key prefixes",
        "a long bearer token",
        "backslashes",
        "escapes of a secret's first char",
        "percent signs",
        "entities",
        "a secret's start, again and again",
    ],
)
def test_scrubbing_takes_linear_time(text: str) -> None:
    # A pattern retried at every character of a token takes minutes here; a linear one, ms.
    many = Secrets([KEY, TOKEN, *(f"{TOKEN[:-4]}{n:04d}" for n in range(30))])
    started = time.perf_counter()
    many.scrub(text)
    assert time.perf_counter() - started < 2.0


_secret = st.text(min_size=MIN_SECRET_CHARS, max_size=40)


@given(secret=_secret, before=st.text(max_size=30), after=st.text(max_size=30))
def test_a_secret_never_survives(secret: str, before: str, after: str) -> None:
    secrets = Secrets([secret])
    scrubbed = secrets.scrub(before + secret + after)
    assert secret not in scrubbed
    assert secrets.scrub(scrubbed) == scrubbed


@given(
    secret=_secret,
    payload=st.recursive(st.text(max_size=10), lambda inner: st.lists(inner, max_size=3)),
)
def test_a_secret_inside_any_json_never_survives(secret: str, payload: object) -> None:
    for text in (json.dumps([payload, secret]), json.dumps({"e": [secret]}, ensure_ascii=False)):
        assert secret not in Secrets([secret]).scrub(text)
        assert json.dumps(secret)[1:-1] not in Secrets([secret]).scrub(text)


@pytest.mark.parametrize(
    ("value", "problem"),
    [
        (KEY, None),
        (KEY + "\n", f"a line break at position {len(KEY) + 1}"),
        (" " + KEY, "a space at position 1"),
        ("sk-\x00abc", "a control character at position 4"),
        ("sk-abcé", "a non-ASCII character at position 7"),
    ],
)
def test_header_value_problem(value: str, problem: str | None) -> None:
    assert header_value_problem(value) == problem
