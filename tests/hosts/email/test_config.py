"""The email host's settings: the SMTP login from the environment, hidden from ``repr``; the
ports each TLS mode defaults to; bad settings refused."""

from __future__ import annotations

import pytest

from hosts.email import SmtpSettings
from interactions import UsageError


def test_the_smtp_settings_hide_the_password_and_know_the_ports() -> None:
    login = {"PI_RECIPES_SMTP_USERNAME": "mailer", "PI_RECIPES_SMTP_PASSWORD": "pw-1234"}
    settings = SmtpSettings.of("smtp.example", None, "starttls", "pi@example.com", login)
    assert (settings.port, settings.username) == (587, "mailer") and "pw-1234" not in repr(settings)
    assert SmtpSettings.of("h", None, "tls", "pi@example.com", {}).port == 465
    assert SmtpSettings.of("h", 2525, "none", "pi@example.com", {}).port == 2525
    bad: list[tuple[str, str, dict[str, str]]] = [
        ("ssl", "pi@example.com", {}),
        ("none", "pi@example.com\r\nBcc: x@y", {}),
        ("none", "pi@example.com", {"PI_RECIPES_SMTP_USERNAME": "mailer"}),
    ]
    for tls, sender, env in bad:
        with pytest.raises(UsageError):
            SmtpSettings.of("h", None, tls, sender, env)
