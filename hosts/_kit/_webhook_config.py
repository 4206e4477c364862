"""The webhooks a host's command line configures: ``--webhook URL`` (repeatable) and the
signing secret, from ``--webhook-secret-file FILE`` or ``$PI_RECIPES_WEBHOOK_SECRET``, read once
at the boundary. ``pi-recipes serve`` and ``pi-recipes slack`` take the same arguments
(:func:`hosts._command.webhook_arguments`, which imports nothing but argparse)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from hosts._command import WEBHOOK_SECRET_ENV
from hosts._kit._access import secret_text
from hosts._kit._deliver import Webhook
from hosts._kit._webhooks import WebhookSecret, consumer_name

__all__ = ["WEBHOOK_SECRET_ENV", "webhooks_from"]


def webhooks_from(
    urls: Sequence[str], secret_file: str | None, env: Mapping[str, str]
) -> list[Webhook]:
    """The webhooks ``--webhook`` names (each URL once), signed with the secret of
    ``secret_file`` or ``env``'s ``PI_RECIPES_WEBHOOK_SECRET``. Raises ``UsageError`` (exit 2)
    for a webhook without a secret, a secret that is not ``whsec_`` and base64 (never quoting
    it), a file that does not read, a URL that is not http(s)."""
    if not urls:
        return []
    text = secret_text(
        "--webhook-secret-file", secret_file, env, WEBHOOK_SECRET_ENV,
        f"--webhook needs the secret its posts are signed with: --webhook-secret-file "
        f"FILE or ${WEBHOOK_SECRET_ENV} (whsec_ and base64 of 24 to 64 random bytes)",
    )  # fmt: skip
    secret = WebhookSecret(text)
    for url in urls:
        consumer_name(url)  # an URL that is not http(s): refused here
    return [Webhook(url, secret) for url in dict.fromkeys(urls)]
