"""Transfers: multi-frame messages, id types, errors as AMQP conditions."""
import hashlib
import os
import uuid

import pytest
from proton import Delivery, Message, symbol, ulong
from proton.utils import LinkDetached

from proton import Data
from proton import Handler

from conftest import addr, connect, drain_queue, run_until


class RawFetcher(Handler):
    """Keeps each delivery's encoded message, to check the AMQP types on the wire."""

    def __init__(self):
        super().__init__()
        self.raw = []

    def on_delivery(self, event):
        d = event.delivery
        if d.readable and not d.partial:
            self.raw.append(event.link.recv(d.pending))
            event.link.advance()
            d.update(Delivery.ACCEPTED)
            d.settle()


def properties_ids(raw):
    """(message-id, correlation-id) of an encoded message as (Data type code, python value)."""
    data = Data()
    while raw:
        data.clear()
        n = data.decode(raw)
        raw = raw[n:]
        data.rewind()
        data.next()
        data.enter()
        data.next()
        descriptor = data.get_object()
        if descriptor in (0x73, symbol("amqp:properties:list")):
            data.next()
            data.enter()
            out = []
            for _ in range(6):  # message-id, user-id, to, subject, reply-to, correlation-id
                t = data.next()
                v = data.get_object() if t is not None else None
                out.append((t, bytes(v) if isinstance(v, memoryview) else v))  # copy out of data
            return out[0], out[5]
    raise AssertionError("message has no properties section")

Q_MULTI = "INTEROP.PROTON.MULTIFRAME"
Q_IDS = "INTEROP.PROTON.IDS"
Q_FULL = "INTEROP.PROTON.FULL"


def test_3mb_message_over_16k_frames_arrives_intact():
    body = os.urandom(3 * 1024 * 1024 + 11)
    c = connect(max_frame_size=16384)
    try:
        assert c.conn.transport.remote_max_frame_size >= 512
        drain_queue(c, Q_MULTI)
        s = c.create_sender(addr(Q_MULTI))
        s.send(Message(body=body, durable=True, properties={"sha": hashlib.sha256(body).hexdigest()},
                       subject="big"))
        s.send(Message(body="small after big"))
        r = c.create_receiver(addr(Q_MULTI), credit=2)
        m = r.receive(timeout=30)
        r.accept()
        assert len(m.body) == len(body)
        assert hashlib.sha256(m.body).hexdigest() == m.properties["sha"] == hashlib.sha256(body).hexdigest()
        assert m.subject == "big" and m.durable
        m2 = r.receive(timeout=10)
        r.accept()
        assert m2.body == "small after big"
        r.close()
        assert drain_queue(c, Q_MULTI) == 0
    finally:
        c.close()


ID_CASES = [
    ("string", "order-4711", Data.STRING),
    ("binary", b"\x00\x01\xfe\xff" + b"\x42" * 20, Data.BINARY),  # e.g. an MQ 24-byte MsgId
    ("uuid", uuid.UUID("6ba7b810-9dad-11d1-80b4-00c04fd430c8"), Data.UUID),
    ("ulong", ulong(18446744073709551615), Data.ULONG),
    ("ulong-small", ulong(7), Data.ULONG),
]


@pytest.mark.parametrize("kind,value,wire_type", ID_CASES, ids=[c[0] for c in ID_CASES])
def test_message_id_and_correlation_id_round_trip_with_their_amqp_type(conn, send, kind, value, wire_type):
    drain_queue(conn, Q_IDS)
    send(Q_IDS, Message(id=value, correlation_id=value, body=kind))
    fetcher = RawFetcher()
    r = conn.create_receiver(addr(Q_IDS), credit=1, handler=fetcher)
    assert run_until(conn, lambda: fetcher.raw, 10), "message not received"
    r.close()
    m = Message()
    m.decode(fetcher.raw[0])
    assert m.body == kind
    names = {Data.STRING: "string", Data.BINARY: "binary", Data.UUID: "uuid", Data.ULONG: "ulong"}
    for what, (t, got) in zip(("message-id", "correlation-id"), properties_ids(fetcher.raw[0])):
        assert t == wire_type, f"{what} sent as {names[wire_type]} came back as type code {t}"
        assert got == value, f"{what}: {got!r} != {value!r}"


def test_unknown_queue_is_refused_with_amqp_not_found(conn):
    name = addr(f"INTEROP.NO.SUCH.QUEUE.{uuid.uuid4().hex[:8]}")
    with pytest.raises(LinkDetached) as e:
        conn.create_sender(name)
    assert e.value.condition == "amqp:not-found", str(e.value)
    with pytest.raises(LinkDetached) as e:
        conn.create_receiver(name, credit=1)
    assert e.value.condition == "amqp:not-found", str(e.value)
    # the connection is still usable
    drain_queue(conn, Q_IDS)


def test_send_to_full_queue_is_rejected_with_amqp_resource_limit_exceeded(conn, send):
    drain_queue(conn, Q_FULL)
    # one sender for all six: a broker may withhold credit from a new link while the queue is full
    s = conn.create_sender(addr(Q_FULL))
    for i in range(5):
        s.send(Message(body=f"fill {i}", durable=True))
    d = s.link.send(Message(body="one too many", durable=True))
    assert run_until(conn, lambda: d.remote_state, 10), "no outcome for the 6th message"
    assert d.remote_state == Delivery.REJECTED, f"outcome {d.remote_state}"
    assert d.remote.condition is not None and d.remote.condition.name == "amqp:resource-limit-exceeded", \
        f"condition {d.remote.condition}"
    d.settle()
    s.close()
    assert drain_queue(conn, Q_FULL) == 5
