"""Outcomes (accepted/released/modified/rejected), pre-settled and browsing receivers, selectors."""
from proton import Delivery, Message
from proton.reactor import AtMostOnce, Copy, Selector

from conftest import addr, drain_queue, pump, run_until

Q = "INTEROP.PROTON.DISP"
Q_PRE = "INTEROP.PROTON.PRESETTLED"
Q_BROWSE = "INTEROP.PROTON.BROWSE"
Q_SEL = "INTEROP.PROTON.SELECTOR"


def get_one(conn, name):
    """(message, delivery) of the next message, unsettled; the receiver has credit 1."""
    r = conn.create_receiver(addr(name), credit=0)
    r.link.flow(1)
    assert run_until(conn, lambda: r.fetcher.has_message, 10), f"no message on {name}"
    m = r.receive(timeout=1)
    d = r.fetcher.unsettled.popleft()
    return r, m, d


def settle(conn, r, d, state, failed=False):
    if failed:
        d.local.failed = True
    d.update(state)
    d.settle()
    pump(conn, 0.2)
    r.close()


def test_accept_removes_release_keeps_count_modified_failed_counts_reject_removes(conn, send):
    drain_queue(conn, Q)
    send(Q, Message(body="m0", durable=True), Message(body="m1", durable=True))

    r, m, d = get_one(conn, Q)
    assert (m.body, m.delivery_count) == ("m0", 0)
    settle(conn, r, d, Delivery.RELEASED)

    r, m, d = get_one(conn, Q)
    assert m.body == "m0", "released message returns to the head of the queue"
    assert m.delivery_count == 0, "released must not increment delivery-count"
    settle(conn, r, d, Delivery.MODIFIED, failed=True)

    r, m, d = get_one(conn, Q)
    assert m.body == "m0", "modified message returns to the head of the queue"
    assert m.delivery_count == 1, "modified(delivery-failed) increments delivery-count"
    settle(conn, r, d, Delivery.MODIFIED, failed=True)

    r, m, d = get_one(conn, Q)
    assert (m.body, m.delivery_count) == ("m0", 2)
    settle(conn, r, d, Delivery.REJECTED)

    r, m, d = get_one(conn, Q)
    assert m.body == "m1", "rejected message must be gone"
    assert m.delivery_count == 0
    settle(conn, r, d, Delivery.ACCEPTED)

    assert drain_queue(conn, Q) == 0, "accepted message came back"


def test_unsettled_delivery_returns_when_the_receiver_detaches(conn, send):
    drain_queue(conn, Q)
    send(Q, Message(body="held"))
    r, m, d = get_one(conn, Q)
    assert m.body == "held"
    r.close()  # detach with the delivery unsettled
    r, m, d = get_one(conn, Q)
    assert m.body == "held"
    settle(conn, r, d, Delivery.ACCEPTED)
    assert drain_queue(conn, Q) == 0


def test_presettled_receiver_gets_settled_deliveries_and_messages_are_gone(conn, send):
    drain_queue(conn, Q_PRE)
    send(Q_PRE, *[Message(body=f"p{i}") for i in range(5)])
    r = conn.create_receiver(addr(Q_PRE), credit=10, options=AtMostOnce())
    assert run_until(conn, lambda: r.fetcher.has_message == 5, 10), f"{r.fetcher.has_message} of 5"
    deliveries = list(r.fetcher.incoming)
    assert all(d.settled for _, d in deliveries), "AtMostOnce: the broker must send pre-settled transfers"
    assert [m.body for m, _ in deliveries] == [f"p{i}" for i in range(5)]
    r.close()
    assert drain_queue(conn, Q_PRE) == 0, "pre-settled deliveries came back"


def test_browsing_receiver_sees_all_messages_and_removes_none(conn, send):
    drain_queue(conn, Q_BROWSE)
    send(Q_BROWSE, *[Message(body=f"b{i}") for i in range(6)])
    for _ in range(2):
        r = conn.create_receiver(addr(Q_BROWSE), credit=20, options=Copy())
        assert run_until(conn, lambda: r.fetcher.has_message == 6, 10), f"browsed {r.fetcher.has_message} of 6"
        pump(conn, 0.3)
        assert [m.body for m, _ in r.fetcher.incoming] == [f"b{i}" for i in range(6)]
        for _, d in list(r.fetcher.incoming):
            if not d.settled:
                d.update(Delivery.ACCEPTED)
                d.settle()
        r.close()
    r = conn.create_receiver(addr(Q_BROWSE), credit=20)
    assert run_until(conn, lambda: r.fetcher.has_message == 6, 10)
    assert all(m.delivery_count == 0 for m, _ in r.fetcher.incoming), "browsing counted as delivery"
    for _, d in r.fetcher.incoming:
        d.update(Delivery.ACCEPTED)
        d.settle()
    pump(conn, 0.2)
    r.close()
    assert drain_queue(conn, Q_BROWSE) == 0


def test_selector_filter_delivers_only_matching_messages(conn, send):
    drain_queue(conn, Q_SEL)
    send(Q_SEL, *[Message(body=f"s{i}", properties={"color": ["red", "blue"][i % 2], "n": i})
                  for i in range(10)])
    r = conn.create_receiver(addr(Q_SEL), credit=20, options=Selector("color = 'red' AND n > 3"))
    # the broker must echo the filter it applies in the attach reply's source
    assert r.link.remote_source.filter is not None and r.link.remote_source.filter.next() is not None, \
        "selector filter not echoed in the attach reply"
    assert run_until(conn, lambda: r.fetcher.has_message >= 3, 10), f"{r.fetcher.has_message} of 3"
    pump(conn, 0.5)
    assert [m.body for m, _ in r.fetcher.incoming] == ["s4", "s6", "s8"]
    for _, d in r.fetcher.incoming:
        d.update(Delivery.ACCEPTED)
        d.settle()
    pump(conn, 0.2)
    r.close()
    assert drain_queue(conn, Q_SEL) == 7
