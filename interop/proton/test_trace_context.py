"""W3C trace context in AMQP application-properties (OpenTelemetry's messaging conventions):
a `traceparent` a proton producer sends is a message property the broker evaluates (a JMS
selector on it picks the message) and reaches the consumer unchanged, with its `tracestate`."""
from proton import Delivery, Message
from proton.reactor import Selector

from conftest import addr, drain_queue, run_until

Q_TRACE = "INTEROP.PROTON.TRACE"
PARENT_A = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
PARENT_B = "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00"
STATE = "congo=t61rcWkgMzE"


def test_traceparent_is_a_property_the_broker_selects_on_and_the_consumer_gets(conn, send):
    drain_queue(conn, Q_TRACE)
    send(Q_TRACE,
         Message(body="a", properties={"traceparent": PARENT_A, "tracestate": STATE}),
         Message(body="b", properties={"traceparent": PARENT_B}))
    r = conn.create_receiver(addr(Q_TRACE), credit=10,
                             options=Selector(f"traceparent = '{PARENT_A}'"))
    assert run_until(conn, lambda: r.fetcher.has_message >= 1, 10), "the selected message"
    (m, d), = list(r.fetcher.incoming)
    assert m.body == "a"
    assert m.properties["traceparent"] == PARENT_A
    assert m.properties["tracestate"] == STATE
    d.update(Delivery.ACCEPTED)
    d.settle()
    r.close()
    # The other message is still there, its context intact.
    r = conn.create_receiver(addr(Q_TRACE), credit=10)
    assert run_until(conn, lambda: r.fetcher.has_message >= 1, 10), "the other message"
    (m, d), = list(r.fetcher.incoming)
    assert m.body == "b"
    assert m.properties["traceparent"] == PARENT_B
    d.update(Delivery.ACCEPTED)
    d.settle()
    r.close()
    assert drain_queue(conn, Q_TRACE) == 0
