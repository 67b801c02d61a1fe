"""Link credit and drain as a receiver sees them."""
from proton import Message

from conftest import addr, drain_queue, pump, run_until

Q = "INTEROP.PROTON.CREDIT"


def manual_receiver(conn):
    """A receiver that grants no credit by itself (prefetch 0)."""
    return conn.create_receiver(addr(Q), credit=0)


def test_receiver_gets_exactly_its_credit_and_more_after_flow(conn, send):
    drain_queue(conn, Q)
    send(Q, *[Message(body=f"c{i}") for i in range(10)])
    r = manual_receiver(conn)
    f = r.fetcher
    pump(conn, 0.5)
    assert f.has_message == 0, "messages delivered without credit"
    r.link.flow(5)
    assert run_until(conn, lambda: f.has_message >= 5, 10), f"only {f.has_message} of 5"
    pump(conn, 1.0)
    assert f.has_message == 5, "more messages than credit"
    assert r.link.credit == 0
    r.link.flow(3)
    assert run_until(conn, lambda: f.has_message >= 8, 10)
    pump(conn, 0.5)
    assert f.has_message == 8
    bodies = []
    while f.has_message:
        bodies.append(r.receive(timeout=1).body)
        r.accept()
    assert bodies == [f"c{i}" for i in range(8)]
    r.close()
    assert drain_queue(conn, Q) == 2


def test_drain_delivers_what_is_there_and_returns_the_unused_credit(conn, send):
    drain_queue(conn, Q)
    send(Q, *[Message(body=f"d{i}") for i in range(3)])
    r = manual_receiver(conn)
    f = r.fetcher
    r.link.drain(10)
    # the broker answers a drain with a flow that uses up the credit: credit 0, no longer draining
    assert run_until(conn, lambda: f.has_message == 3 and r.link.credit == 0, 10), \
        f"drain not answered: {f.has_message} messages, credit {r.link.credit}"
    assert not r.link.draining()
    # no credit left: a new message stays on the queue
    send(Q, Message(body="after drain"))
    pump(conn, 1.0)
    assert f.has_message == 3
    r.link.flow(1)
    assert run_until(conn, lambda: f.has_message == 4, 10)
    got = []
    while f.has_message:
        got.append(r.receive(timeout=1).body)
        r.accept()
    assert got == ["d0", "d1", "d2", "after drain"]
    r.close()
    assert drain_queue(conn, Q) == 0


def test_drain_on_an_empty_queue_is_answered_promptly(conn):
    drain_queue(conn, Q)
    r = manual_receiver(conn)
    r.link.drain(5)
    assert run_until(conn, lambda: r.link.credit == 0, 5), "drain on an empty queue not answered"
    assert r.fetcher.has_message == 0
    r.close()
