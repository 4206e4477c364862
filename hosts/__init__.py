"""pi-recipes hosts: the surfaces that run recipe agents and ask their humans (the command line,
the terminal dialogs, the RPC protocol). Each host is a subpackage; no host imports another."""

__all__: list[str] = []
