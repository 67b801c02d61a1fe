"""Shared fixtures for the python-qpid-proton wire-level interop tests.

Environment (same as the Qpid JMS suite):
  AMQP_URL             broker (default amqp://localhost:5672)
  AMQP_USER/PASSWORD   optional SASL PLAIN credentials (else ANONYMOUS)
  INTEROP_QUEUE_PREFIX prepended to queue names (RabbitMQ: /amq/queue/)
Queues are predefined from interop/queues.txt (INTEROP.PROTON.*).
"""
import os
import time
from urllib.parse import urlparse

import pytest
from proton import Message
from proton.utils import BlockingConnection

AMQP_URL = os.environ.get("AMQP_URL") or "amqp://localhost:5672"
USER = os.environ.get("AMQP_USER") or None
PASSWORD = os.environ.get("AMQP_PASSWORD") or None
PREFIX = os.environ.get("INTEROP_QUEUE_PREFIX", "")


def addr(name):
    return PREFIX + name


def connect(**kwargs):
    """A BlockingConnection to the broker; kwargs go to Container.connect (max_frame_size, ...)."""
    if USER:
        kwargs.setdefault("user", USER)
        kwargs.setdefault("password", PASSWORD)
        kwargs.setdefault("allow_insecure_mechs", True)
    kwargs.setdefault("timeout", 20)
    return BlockingConnection(AMQP_URL, **kwargs)


def drain_queue(conn, name, wait=0.5):
    """Accepts every message on the queue; returns how many there were."""
    r = conn.create_receiver(addr(name), credit=100)
    n = 0
    try:
        while True:
            try:
                r.receive(timeout=wait)
            except Exception:  # proton.Timeout
                break
            r.accept()
            n += 1
    finally:
        r.close()
    return n


def run_until(conn, predicate, timeout, msg="condition"):
    """Runs the connection's event loop until predicate() is true; False on timeout."""
    deadline = time.monotonic() + timeout
    while not predicate():
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            return False
        conn.container.do_work(min(remaining, 0.1))
    return True


def pump(conn, seconds):
    """Runs the event loop for the given time (keeps heartbeats and flow going)."""
    run_until(conn, lambda: False, seconds)


@pytest.fixture
def url():
    return AMQP_URL


@pytest.fixture
def host_port():
    u = urlparse(AMQP_URL)
    return u.hostname or "localhost", u.port or 5672


@pytest.fixture
def conn():
    c = connect()
    yield c
    c.close()


@pytest.fixture
def send(conn):
    """send(queue, *messages): settled and accepted, or raises."""
    def _send(name, *messages):
        s = conn.create_sender(addr(name))
        for m in messages:
            s.send(m if isinstance(m, Message) else Message(body=m))
        s.close()
    return _send
