"""Publish/subscribe over AMQP with a topic:// address (and the topic capability):
every receiver attached to a topic gets each message sent to it afterwards, a selector
filter picks, and a receiver attached after a send does not see it."""
import uuid

import pytest
from proton import Message
from proton.reactor import Selector

from conftest import connect


def topic():
    return "topic://interop/proton/" + uuid.uuid4().hex[:8]


def test_each_receiver_gets_every_message_sent_after_it_attached():
    conn = connect()
    try:
        address = topic()
        sender = conn.create_sender(address)
        sender.send(Message(body="before anyone listened"))
        # Link names are unique per connection: BlockingConnection would name both after
        # the address.
        first = conn.create_receiver(address, credit=10, name="first")
        second = conn.create_receiver(address, credit=10, name="second")
        for i in range(5):
            sender.send(Message(body=f"m{i}", durable=i % 2 == 0))
        for r in (first, second):
            bodies = []
            for _ in range(5):
                bodies.append(r.receive(timeout=5).body)
                r.accept()
            assert bodies == [f"m{i}" for i in range(5)]
            with pytest.raises(Exception):
                r.receive(timeout=0.3)
    finally:
        conn.close()


def test_a_selector_filter_on_a_topic_receiver_picks_what_it_gets():
    conn = connect()
    try:
        address = topic()
        receiver = conn.create_receiver(address, credit=10, options=Selector("colour = 'red'"))
        sender = conn.create_sender(address)
        for colour in ("blue", "red", "green", "red"):
            sender.send(Message(body=colour, properties={"colour": colour}))
        got = []
        for _ in range(2):
            got.append(receiver.receive(timeout=5).body)
            receiver.accept()
        assert got == ["red", "red"]
        with pytest.raises(Exception):
            receiver.receive(timeout=0.3)
    finally:
        conn.close()
