"""The command modules of ``tooldisc``: one per command or command group, listed in :data:`tooldisc.cli.app.COMMANDS`."""
