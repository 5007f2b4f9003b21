"""``python -m localmem`` runs the command line."""

from localmem.cli import entry

entry()
