"""Free TCP ports on the loopback interface, for servers a test starts."""

from __future__ import annotations

import socket


def free_port() -> int:
    """A port nothing listens on right now (the OS's pick; another process may take it later)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
