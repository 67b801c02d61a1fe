"""What the bench scripts read back: `perf stat -x,` counts by event, the system calls
they sum per round trip, and the fields of a load generator's first RESULT line."""

SENDS = ("syscalls:sys_enter_sendto", "syscalls:sys_enter_write", "syscalls:sys_enter_writev")
RECEIVES = ("syscalls:sys_enter_recvfrom", "syscalls:sys_enter_read")


def counts(path):
    """Event name -> count, from `perf stat -x, -o path` (unsupported events count 0)."""
    out = {}
    for line in open(path):
        parts = line.strip().split(",")
        if len(parts) < 3 or not parts[0] or parts[0].startswith("#"):
            continue
        try:
            out[parts[2]] = float(parts[0])
        except ValueError:
            out[parts[2]] = 0.0
    return out


def sends(c):
    """Writes of every kind in counts `c`."""
    return sum(c.get(k, 0.0) for k in SENDS)


def receives(c):
    """Reads of every kind in counts `c`."""
    return sum(c.get(k, 0.0) for k in RECEIVES)


def result_fields(path):
    """The key=value fields of the first `RESULT ` line in `path`, or None."""
    for line in open(path):
        if line.startswith("RESULT "):
            return dict(kv.split("=", 1) for kv in line.split()[1:] if "=" in kv)
    return None
