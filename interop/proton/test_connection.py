"""Dynamic nodes, heartbeats, malformed frames."""
import socket
import struct
import time
import uuid

import pytest
from proton import Message
from proton.utils import LinkDetached

from conftest import AMQP_URL, PASSWORD, USER, addr, connect, drain_queue, pump, run_until

Q_IDLE = "INTEROP.PROTON.IDLE"
Q_RAW = "INTEROP.PROTON.RAW"


def test_dynamic_receiver_gets_a_generated_address_that_works_and_is_gone_after_close(conn):
    r = conn.create_receiver(None, dynamic=True, credit=5)
    temp = r.link.remote_source.address
    assert temp, "broker returned no address for the dynamic source"
    s = conn.create_sender(temp)
    s.send(Message(body="to temp", reply_to=temp))
    m = r.receive(timeout=10)
    r.accept()
    assert m.body == "to temp"
    s.close()
    r.close()
    pump(conn, 0.5)
    other = connect()
    try:
        with pytest.raises(LinkDetached) as e:
            other.create_sender(temp)
        assert e.value.condition == "amqp:not-found", str(e.value)
    finally:
        other.close()


def test_connection_with_2s_idle_timeout_stays_open_through_6s_of_silence():
    c = connect(heartbeat=2)
    try:
        drain_queue(c, Q_IDLE)
        t = c.conn.transport
        pump(c, 6.0)  # only heartbeats flow; proton closes the connection if none arrive for 2 s
        assert t.condition is None, f"transport failed while idle: {t.condition}"
        assert c.conn.remote_condition is None, f"broker closed: {c.conn.remote_condition}"
        s = c.create_sender(addr(Q_IDLE))
        s.send(Message(body="still alive"))
        r = c.create_receiver(addr(Q_IDLE), credit=1)
        assert r.receive(timeout=10).body == "still alive"
        r.accept()
        r.close()
    finally:
        c.close()


# ---- raw socket ----------------------------------------------------------------------------

def frame(body, ftype=0, channel=0):
    return struct.pack(">IBBH", 8 + len(body), 2, ftype, channel) + body


def sasl_init():
    if USER:
        mech, resp = b"PLAIN", b"\0" + USER.encode() + b"\0" + (PASSWORD or "").encode()
        fields = b"\xa3" + bytes([len(mech)]) + mech + b"\xa0" + bytes([len(resp)]) + resp
        count = 2
    else:
        mech = b"ANONYMOUS"
        fields = b"\xa3" + bytes([len(mech)]) + mech
        count = 1
    return frame(b"\x00\x53\x41\xc0" + bytes([len(fields) + 1, count]) + fields, ftype=1)


class Raw:
    def __init__(self, host, port):
        self.s = socket.create_connection((host, port), timeout=10)
        self.buf = b""

    def read(self, n):
        while len(self.buf) < n:
            chunk = self.s.recv(65536)
            if not chunk:
                raise EOFError
            self.buf += chunk
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def read_frame(self):
        size = struct.unpack(">I", self.read(4))[0]
        rest = self.read(size - 4)
        return rest[rest[0] * 4 - 4:]  # skip doff, type, channel (and any extended header)

    def handshake(self):
        self.s.sendall(b"AMQP\x03\x01\x00\x00")
        assert self.read(8) == b"AMQP\x03\x01\x00\x00", "no SASL header"
        mechs = self.read_frame()
        assert mechs[:3] == b"\x00\x53\x40", "expected sasl-mechanisms"
        self.s.sendall(sasl_init())
        outcome = self.read_frame()
        assert outcome[:3] == b"\x00\x53\x44", "expected sasl-outcome"
        first = {0xC0: 6, 0xD0: 12}.get(outcome[3])
        assert first is not None and outcome[first:first + 2] == b"\x50\x00", f"SASL failed: {outcome!r}"
        self.s.sendall(b"AMQP\x00\x01\x00\x00")
        assert self.read(8) == b"AMQP\x00\x01\x00\x00", "no AMQP header"

    def until_closed(self, timeout=10):
        """Everything the broker sends until it closes the socket; None if still open at timeout."""
        self.s.settimeout(0.5)
        deadline = time.monotonic() + timeout
        data = self.buf
        while time.monotonic() < deadline:
            try:
                chunk = self.s.recv(65536)
            except socket.timeout:
                continue
            except ConnectionResetError:
                return data
            if not chunk:
                return data
            data += chunk
        return None


GARBAGE = {
    # a frame whose size is below the 8-byte minimum
    "size-below-minimum": b"\x00\x00\x00\x04\x02\x00\x00\x00" + b"\xde\xad\xbe\xef" * 4,
    # a well-formed frame header around bytes that are no AMQP encoding
    "undecodable-performative": frame(b"\x00\x53\x10\xff\xfe\xfd\xfc\xfb\xfa\x99\x98\x97"),
    # a described list that claims more bytes than the frame holds
    "truncated-open": frame(b"\x00\x53\x10\xd0\x00\x00\x10\x00\x00\x00\x00\x0a\xa1\x05ab"),
    # plain text instead of frames
    "http-request": b"GET / HTTP/1.1\r\nHost: x\r\n\r\n" + b"\x00" * 16,
}


# Artemis 2.55 (proton-j) leaves a connection open when a list claims more bytes than its frame
# holds; Ferry must close it
FERRY_ONLY = {"truncated-open"}


@pytest.mark.parametrize("kind", [pytest.param(k, marks=pytest.mark.ferry_semantics) if k in FERRY_ONLY else k
                                  for k in GARBAGE])
def test_malformed_frames_close_that_connection_only(host_port, kind):
    good = connect()
    try:
        drain_queue(good, Q_RAW)
        raw = Raw(*host_port)
        raw.handshake()
        raw.s.sendall(GARBAGE[kind])
        data = raw.until_closed(timeout=10)
        raw.s.close()
        assert data is not None, "broker kept the connection open after garbage"
        if b"\x00\x53\x18" in data:  # a close frame was sent: check its error
            assert b"amqp:decode-error" in data or b"amqp:connection:framing-error" in data, \
                f"close frame without decode-error/framing-error: {data!r}"
        # the well-behaved connection opened before keeps working
        s = good.create_sender(addr(Q_RAW))
        s.send(Message(body=f"after {kind}"))
        r = good.create_receiver(addr(Q_RAW), credit=1)
        assert r.receive(timeout=10).body == f"after {kind}"
        r.accept()
        r.close()
        s.close()
    finally:
        good.close()
