"""The credentials a process holds, and the one function that scrubs them out of any text.

A provider may echo a credential anywhere in what it sends back: an error's message, type or code,
a nested field, a body that is not JSON, an SSE line, a transport error quoting a URL or a header.
:class:`Secrets` knows the credentials a model holds — the key it was built with and every
credential-looking variable of the environment it was given — and :meth:`Secrets.scrub` replaces
them with ``***``. The providers apply it at their one wire boundary (``_http.post_sse``) to every
piece of provider text before anything parses, prints, logs or stores it; every output of the
process applies it again (``interactions.secrets`` lists the seams).

What counts as a secret:

- the model's own key, and the value of every environment variable whose name ends in ``KEY``,
  ``TOKEN``, ``SECRET`` or ``CREDENTIAL(S)`` (the whole name or after ``_``), in ``PASSWORD``,
  ``PASSWD`` or ``PASSPHRASE`` (``PGPASSWORD`` too) or in ``_PWD`` (``MYSQL_PWD``; not ``PWD``
  nor ``OLDPWD``, which are folders), any case, maybe numbered (``OPENAI_API_KEY``,
  ``GITHUB_TOKEN``, ``AWS_SECRET_ACCESS_KEY``, ``OPENAI_API_KEY_2``, ``GITHUB_TOKEN2``);
- the password of any ``scheme://user:password@host`` URL in the environment (``DATABASE_URL``);
- only values of at least :data:`MIN_SECRET_CHARS` characters: shorter values (``1``, ``true``,
  Ollama's ``ollama``) are not credentials, and replacing them everywhere would garble the text.

What :meth:`Secrets.scrub` replaces:

1. every known secret, as is and however a server, a library or a log escaped it, each of its
   characters on its own (``\\u0073k-`` and ``s%6B-`` are both ``sk-``): JSON and Python escapes
   (``\\u0073``, ``\\u006B`` in either case, surrogate pairs, ``\\/``, ``\\n``, ``\\x73``, a
   ``bytes`` repr's ``\\xc3\\xa9``, a JSON string within a JSON string's ``\\\\u0073``),
   percent-encoding of its UTF-8 bytes (``%2B``, ``%2b``, ``%252B`` encoded twice, ``+`` for a
   space) and HTML references (``&#43;``, ``&#x2B;``, ``&plus;``, ``&amp;#43;`` escaped twice);
2. partial echoes of a known secret: a token with a mask (``**``, ``...``, ``…``) whose visible
   head is 3 or more leading characters of a secret or a known key prefix (``sk-``), or whose
   visible tail is 4 or more trailing characters of a secret: ``sk-proj-****Zq9W``,
   ``sk-...Zq9W``, ``...Zq9W``. The whole token goes, prefix and last four included;
3. anything shaped like a well-known credential even when this process never held it: ``sk-``
   keys (OpenAI, Anthropic), Slack ``xox?-``/``xapp-``, GitHub ``ghp_``/``github_pat_``, Hugging
   Face ``hf_``, AWS ``AKIA``, Google ``AIza``, and the token after ``Bearer``.

:meth:`Secrets.scrub_known` replaces only 1.: for text that is not a provider's (a tool's
result), where a token shaped like a key may be meant.

Not recognised (by design): the last four characters of a key with no mask next to them (they
identify nothing and would hit ordinary words), a secret in another encoding (base64, or
escapes nested deeper than above). A secret split across streamed text deltas is whole again
in :class:`TextScrubber`, which holds back a delta's tail while it could begin a secret.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from typing import Any, Final
from urllib.parse import unquote

__all__ = [
    "MIN_SECRET_CHARS",
    "REDACTED",
    "Secrets",
    "TextScrubber",
    "credential_names",
]

REDACTED: Final = "***"
MIN_SECRET_CHARS: Final = 8

_CREDENTIAL_NAME: Final = re.compile(
    r"(?:(?:^|_)(?:APIKEY|KEY|TOKEN|SECRET|CREDENTIALS?)|_PWD|PASSWORD|PASSWD|PASSPHRASE)"
    r"(?:_?[0-9]+)?$",
    re.IGNORECASE,
)
_URL_PASSWORD: Final = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*://[^\s/@:]*:([^\s/@]+)@")

_KEY_PREFIX: Final = r"(?:sk|rk|pk)-|xox[a-z]-|xapp-|gh[pousr]_|github_pat_|hf_|AKIA|ASIA|AIza"
_HAS_DIGIT: Final = r"(?=[A-Za-z0-9_\-]*[0-9])"
_TOKEN_START: Final = r"(?<![A-Za-z0-9_\-])"  # so that each token is scanned once, not per char
_KEY_SHAPES: Final = re.compile(
    rf"{_TOKEN_START}(?:(?:sk|rk|pk)-{_HAS_DIGIT}[A-Za-z0-9_\-]{{8,}}"
    rf"|xox[a-z]-[A-Za-z0-9\-]{{8,}}|xapp-[A-Za-z0-9\-]{{8,}}"
    rf"|gh[pousr]_[A-Za-z0-9]{{20,}}|github_pat_[A-Za-z0-9_]{{20,}}|hf_[A-Za-z0-9]{{20,}}"
    rf"|(?:AKIA|ASIA)[0-9A-Z]{{16}}|AIza[0-9A-Za-z_\-]{{35}})"
)
_TOKEN_CHARS: Final = r"[A-Za-z0-9._~+/=\-]"
_BEARER: Final = re.compile(
    rf"\b(Bearer\s+)(?={_TOKEN_CHARS}*[0-9]){_TOKEN_CHARS}{{8,}}", re.IGNORECASE
)
_MASKED: Final = re.compile(
    rf"{_TOKEN_START}([A-Za-z0-9_\-]*)(?:\*{{2,}}|\.{{2,3}}|…)+([A-Za-z0-9_\-]*)"
)
_STARTS_LIKE_A_KEY: Final = re.compile(_KEY_PREFIX)


_BACKSLASHES: Final = r"\\{1,8}"  # one escape, or one inside a JSON (or repr) of JSON, ...
_PERCENT: Final = "%(?:25){0,3}"  # %2B, and %252B when a URL was encoded again
_AMPERSAND: Final = "&(?:amp;){0,3}"  # &#43;, and &amp;#43; when HTML was escaped again
_SHORT_ESCAPES: Final = {
    '"': '"', "\\": "\\", "/": "/", "'": "'",
    "\b": "b", "\f": "f", "\n": "n", "\r": "r", "\t": "t",
}  # fmt: skip


def _hex(number: int, width: int = 0) -> str:
    """``number`` in hexadecimal, a pattern that takes its digits in either case."""
    return "".join(f"[{d}{d.upper()}]" if d.isalpha() else d for d in f"{number:0{width}x}")


@functools.cache
def _entity_names() -> dict[str, tuple[str, ...]]:
    """Each character's HTML named references (``&plus;``, ``&amp``), longest first."""
    from html.entities import html5  # only built when a secret is first seen

    names: dict[str, list[str]] = {}
    for name, value in html5.items():
        if len(value) == 1:
            names.setdefault(value, []).append(name)
    return {char: tuple(sorted(found, key=len, reverse=True)) for char, found in names.items()}


@functools.cache
def _char_pattern(char: str) -> str:
    """A pattern for ``char`` as is or in any escape a server, a library or a log writes it in:
    JSON and Python ``\\u``/``\\x``/``\\U`` escapes (any case of hex, a surrogate pair beyond
    the BMP, the short ``\\n``/``\\"`` forms), percent-encoding of its UTF-8 bytes (``+`` for a
    space), Python's ``bytes`` repr, HTML numeric and named references."""
    code = ord(char)
    data = char.encode("utf-8", "surrogatepass")
    if 0xDC80 <= code <= 0xDCFF:  # os.environ's escape of an undecodable byte: that byte
        data = bytes([code - 0xDC00])
    options = []  # the escapes first, the character as is last: an escape of ``&`` or ``\\``
    if code > 0xFFFF:  # starts with that character, and the longer spelling must win
        high, low = 0xD800 + ((code - 0x10000) >> 10), 0xDC00 + ((code - 0x10000) & 0x3FF)
        pair = f"u{_hex(high)}{_BACKSLASHES}u{_hex(low)}"
        options.append(f"{_BACKSLASHES}(?:{pair}|U{_hex(code, 8)})")
    elif code > 0xFF:
        options.append(f"{_BACKSLASHES}u{_hex(code, 4)}")
    else:
        options.append(f"{_BACKSLASHES}(?:u{_hex(code, 4)}|x{_hex(code, 2)})")
    if char in _SHORT_ESCAPES:
        options.append(_BACKSLASHES + re.escape(_SHORT_ESCAPES[char]))
    if len(data) > 1 or code > 0xFF:  # bytes repr of its UTF-8 (ASCII's \x is above)
        options.append("".join(f"{_BACKSLASHES}x{_hex(b, 2)}" for b in data))
    options.append("".join(f"{_PERCENT}{_hex(b, 2)}" for b in data))
    if char == " ":
        options.append(r"\+")
    names = "".join(f"|{re.escape(name)}" for name in _entity_names().get(char, ()))
    options.append(f"{_AMPERSAND}(?:#(?:0*{code}|[xX]0*{_hex(code)});?{names})")
    options.append(re.escape(char))
    return "(?:" + "|".join(options) + ")"


def _pattern(secrets: Iterable[str]) -> str:
    """A pattern for each of ``secrets`` with each of its characters spelled in any way (mixed),
    the longest first. Secrets are grouped by their first character, so that a search tries
    each text position against a few groups, not against every secret."""
    groups: dict[str, list[str]] = {}
    for secret in sorted(secrets, key=lambda s: (-len(s), s)):
        groups.setdefault(secret[0], []).append(secret[1:])
    return "|".join(
        _char_pattern(first) + "(?:" + "|".join(map(_rest, rests)) + ")"
        for first, rests in groups.items()
    )


def _rest(text: str) -> str:
    return "".join(_char_pattern(char) for char in text)


class Secrets:
    """The credentials to keep out of every text that comes from a provider.

    Build it with :meth:`from_env`; it never shows the values (not in ``repr``, not in ``str``).
    :meth:`scrub` is pure and safe to call on any text, with or without secrets: the shapes of
    well-known credentials are always scrubbed.
    """

    def __init__(self, values: Iterable[str | None] = ()) -> None:
        self._values: frozenset[str] = frozenset(
            v for v in values if v is not None and len(v) >= MIN_SECRET_CHARS
        )

    @functools.cached_property
    def _known(self) -> re.Pattern[str] | None:
        """Every secret in every spelling: one large pattern, compiled on the first scrub (not
        when a model is made: 10 to 30 ms for a few keys, paid only by a process that reads
        provider text; Python's pattern cache shares it between equal :class:`Secrets`)."""
        return re.compile(_pattern(self._values)) if self._values else None

    @classmethod
    def from_env(cls, env: Mapping[str, str], *also: str | None) -> Secrets:
        """The secrets of ``env`` (see the module docstring for which variables count), plus
        ``also`` (the key a model was built with). ``None`` and short values are skipped."""
        values = [value for name, value in env.items() if _CREDENTIAL_NAME.search(name)]
        for value in env.values():
            for match in _URL_PASSWORD.finditer(value):
                values += [match.group(1), unquote(match.group(1))]
        return cls([*values, *also])

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return f"Secrets(<{len(self._values)} hidden>)"

    def __contains__(self, value: object) -> bool:
        return value in self._values

    def scrub(self, text: str) -> str:
        """``text`` with every secret, partial echo and key-shaped token replaced by ``***``.

        Repeats until nothing changes (each replacement shortens the text, so this ends), so no
        secret can be re-formed by the replacements around it.
        """
        while True:
            scrubbed = self._scrub_once(text)
            if scrubbed == text:
                return text
            text = scrubbed

    def scrub_known(self, text: str) -> str:
        """``text`` with every known secret, in any of the spellings of 1. above, replaced by
        ``***``; unlike :meth:`scrub`, nothing that only looks like a key is touched. For text
        that is not a provider's, where a key-shaped token may be meant: a tool's result."""
        if self._known is None or not self._could_hold(text):
            return text
        while (scrubbed := self._known.sub(REDACTED, text)) != text:
            text = scrubbed
        return text

    def _could_hold(self, text: str) -> bool:
        """Whether ``text`` may hold a known secret: as written, or escaped (every escape
        spelling has a ``\\``, ``%`` or ``&``, or ``+`` for a space). A quick look, so that
        the large pattern runs only on text that can match it."""
        if "\\" in text or "%" in text or "&" in text:
            return True
        if "+" in text and any(" " in value for value in self._values):
            return True
        return any(value in text for value in self._values)

    def scrub_value(self, value: Any) -> Any:
        """``value`` (JSON-like: dicts, lists, tuples, strings, numbers) with :meth:`scrub_known`
        applied to every string in it, keys included; ``value`` itself when nothing changes
        (and at once when there is no secret)."""
        if self._known is None:
            return value
        return _scrubbed_value(value, self.scrub_known)

    def matches(self, text: str) -> list[re.Match[str]]:
        """Where ``text`` holds a known secret, in any spelling of :meth:`scrub_known`."""
        return [] if self._known is None else list(self._known.finditer(text))

    def held(self, text: str) -> int:
        """How many trailing characters of ``text`` begin a known secret (as written): what a
        stream holds back until the next piece tells whether the secret follows."""
        most = 0
        for secret in self._values:
            for size in range(min(len(secret) - 1, len(text)), most, -1):
                if text.endswith(secret[:size]):
                    most = size
                    break
        return most

    def _scrub_once(self, text: str) -> str:
        if self._known is not None:
            text = self._known.sub(REDACTED, text)
        text = _MASKED.sub(self._masked, text)
        text = _KEY_SHAPES.sub(REDACTED, text)
        return _BEARER.sub(lambda m: m.group(1) + REDACTED, text)

    def _masked(self, match: re.Match[str]) -> str:
        head, tail = match.group(1), match.group(2)
        echoes = (
            (len(head) >= 3 and any(v.startswith(head) for v in self._values))
            or _STARTS_LIKE_A_KEY.match(head) is not None
            or (len(tail) >= 4 and any(v.endswith(tail) for v in self._values))
        )
        return REDACTED if echoes else match.group(0)


def credential_names(env: Mapping[str, str]) -> set[str]:
    """The names of ``env``'s variables that hold a credential, as :meth:`Secrets.from_env`
    counts them (a credential's name, or a URL with a password), whatever their length: what
    a process keeps out of the environment of a command it runs for someone else."""
    return {
        name for name, value in env.items()
        if _CREDENTIAL_NAME.search(name) or _URL_PASSWORD.search(value)
    }  # fmt: skip


def _scrubbed_value(value: Any, scrub: Any) -> Any:
    if isinstance(value, str):
        return scrub(value)
    if isinstance(value, dict):
        items = [(scrub(k) if isinstance(k, str) else k, _scrubbed_value(v, scrub))
                 for k, v in value.items()]  # fmt: skip
        if all(k is k0 and v is v0 for (k, v), (k0, v0) in zip(items, value.items(), strict=True)):
            return value
        return dict(items)
    if isinstance(value, list | tuple):
        out = [_scrubbed_value(item, scrub) for item in value]
        if all(a is b for a, b in zip(out, value, strict=True)):
            return value
        return type(value)(out) if isinstance(value, list) else tuple(out)
    return value


class TextScrubber:
    """One streamed text, scrubbed as it grows: :meth:`feed` takes each delta and returns what
    may be shown of it, :meth:`finish` the rest. What is shown is the text with every known
    secret replaced, even a secret split across deltas: a tail that could begin a secret is
    held back until the next delta says whether it does (text that cannot is never delayed).
    The concatenation of what it returns equals ``secrets.scrub_known`` of the whole text."""

    def __init__(self, secrets: Secrets) -> None:
        self._secrets = secrets
        self._pending = ""

    def feed(self, delta: str) -> str:
        """The part of the text so far that can be shown now, scrubbed (maybe ``""``)."""
        if not self._secrets:
            return delta
        text = self._pending + delta
        ready = len(text) - self._secrets.held(text)
        for whole in self._secrets.matches(text):  # a secret whose end looks like its start
            if whole.start() < ready < whole.end():
                ready = whole.end()
        self._pending = text[ready:]
        return self._secrets.scrub_known(text[:ready])

    def finish(self) -> str:
        """What was held back, scrubbed: the stream is over."""
        rest, self._pending = self._pending, ""
        return self._secrets.scrub_known(rest)
