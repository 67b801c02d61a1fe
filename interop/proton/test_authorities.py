"""Object authorities (SET AUTHREC) seen from python-qpid-proton: a user without CONNECT on
the queue manager has its connection closed with amqp:unauthorized-access, and a link to a
queue the user may not open for that purpose is refused (detached) with
amqp:unauthorized-access, as MQ's 2035.

interop/run.sh --ferry sets them up: users INTEROP_USER, INTEROP_LIMITED_USER ('limited') and
INTEROP_NOCONNECT_USER ('noconnect'), password INTEROP_PASSWORD, are in the user repository and
none is an administrator; INTEROP_USER may connect and use every queue, 'limited' may connect
and only browse, get and inquire on INTEROP.AUTH.Q, 'noconnect' has no authority at all. With
a peer broker (these unset) the tests are skipped.
"""
import os
from contextlib import closing

import pytest
from proton import ConnectionException, Message
from proton.utils import BlockingConnection, LinkDetached

from conftest import addr, drain_queue

URL = os.environ.get("AMQP_URL", "amqp://localhost:5672")
USER = os.environ.get("INTEROP_USER")
PASSWORD = os.environ.get("INTEROP_PASSWORD")
LIMITED = os.environ.get("INTEROP_LIMITED_USER")
NOCONNECT = os.environ.get("INTEROP_NOCONNECT_USER")

# 'limited' may browse, get and inquire on this queue, and nothing else.
Q_AUTH = "INTEROP.AUTH.Q"
# A queue that exists and 'limited' has no authority on.
Q_OTHER = "INTEROP.PROTON.DISP"

needs_authorities = pytest.mark.skipif(
    not (USER and LIMITED and NOCONNECT),
    reason="INTEROP_USER, INTEROP_LIMITED_USER or INTEROP_NOCONNECT_USER unset: the broker is not set up",
)


def as_user(user):
    return closing(BlockingConnection(URL, timeout=20, user=user, password=PASSWORD,
                                      allowed_mechs="PLAIN", allow_insecure_mechs=True))


@needs_authorities
def test_a_user_without_connect_authority_is_refused():
    with pytest.raises(ConnectionException) as e:
        with as_user(NOCONNECT):
            pass
    assert "unauthorized-access" in str(e.value)


@needs_authorities
def test_a_user_with_get_authority_receives_but_cannot_send():
    with as_user(USER) as conn:
        drain_queue(conn, Q_AUTH)
        conn.create_sender(addr(Q_AUTH)).send(Message(body="for limited"))
    with as_user(LIMITED) as conn:
        r = conn.create_receiver(addr(Q_AUTH), credit=1)
        assert r.receive(timeout=10).body == "for limited"
        r.accept()
        with pytest.raises(LinkDetached) as e:
            conn.create_sender(addr(Q_AUTH))
        assert e.value.condition == "amqp:unauthorized-access", str(e.value)


@needs_authorities
def test_a_user_cannot_receive_from_a_queue_it_has_no_authority_on():
    with as_user(LIMITED) as conn:
        with pytest.raises(LinkDetached) as e:
            conn.create_receiver(addr(Q_OTHER), credit=1)
        assert e.value.condition == "amqp:unauthorized-access", str(e.value)
