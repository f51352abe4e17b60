"""`python -m alterflow.cli ...`: the `alterflow` command."""

from alterflow.cli.command import command

command()
