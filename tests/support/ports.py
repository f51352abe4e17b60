"""Free TCP ports on the loopback interface, for servers a test starts."""

from __future__ import annotations

import socket


def free_port() -> int:
    """A port nothing listens on right now (the OS's pick; another process may take it later)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def lasting_free_port() -> int:
    """A free port below the OS's range for outgoing connections (read from
    /proc/sys/net/ipv4/ip_local_port_range), for a server the test stops and starts again on the
    same port: no client's connection takes it meanwhile, as one may take an ephemeral port."""
    import random

    try:
        low = int(open("/proc/sys/net/ipv4/ip_local_port_range").read().split()[0])
    except (OSError, ValueError, IndexError):
        low = 32768
    candidates = random.sample(range(20000, low), 200)
    for port in candidates:
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free port from 20000 to {low}")
