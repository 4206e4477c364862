"""The terminal host: dialogs on the controlling terminal (questionary / prompt_toolkit)."""

from hosts.terminal._ui import TerminalDialogUI

__all__ = ["TerminalDialogUI"]
