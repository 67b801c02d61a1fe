"""Channel and connection authentication seen from python-qpid-proton: a connection a
CHLAUTH record refuses, or whose SASL PLAIN password is wrong, is closed with
amqp:unauthorized-access; the right password connects.

interop/run.sh --ferry sets AMQP_BLOCKED_URL (a channel whose ADDRESSMAP record says
USERSRC(NOACCESS)), users INTEROP_USER and 'blockme' with password INTEROP_PASSWORD in the
user repository, and 'blockme' in the BLOCKUSER list of every channel; with a peer broker
these tests are skipped.
"""
import os
from contextlib import closing

import pytest
from proton import ConnectionException, Message
from proton.utils import BlockingConnection

from conftest import addr

BLOCKED_URL = os.environ.get("AMQP_BLOCKED_URL")
URL = os.environ.get("AMQP_URL", "amqp://localhost:5672")
USER = os.environ.get("INTEROP_USER")
PASSWORD = os.environ.get("INTEROP_PASSWORD")

needs_security = pytest.mark.skipif(
    not (BLOCKED_URL and USER), reason="AMQP_BLOCKED_URL or INTEROP_USER unset: the broker is not set up"
)


def plain(user, password):
    return dict(user=user, password=password, allowed_mechs="PLAIN", allow_insecure_mechs=True)


def refused(url, **kwargs):
    with pytest.raises(ConnectionException) as e:
        with closing(BlockingConnection(url, timeout=20, **kwargs)):
            pass
    return str(e.value)


@needs_security
def test_a_noaccess_record_refuses_the_connection():
    assert "unauthorized-access" in refused(BLOCKED_URL)


@needs_security
def test_the_right_password_connects_and_wrong_ones_are_refused():
    with closing(BlockingConnection(URL, timeout=20, **plain(USER, PASSWORD))) as conn:
        q = addr("INTEROP.PROTON.TLS")
        conn.create_sender(q).send(Message(body="authenticated"))
        r = conn.create_receiver(q, credit=1)
        assert r.receive(timeout=10).body == "authenticated"
        r.accept()
    assert "unauthorized-access" in refused(URL, **plain(USER, PASSWORD + "-wrong"))
    assert "unauthorized-access" in refused(URL, **plain("nobody-" + USER, PASSWORD))


@needs_security
def test_a_blocked_user_is_refused_even_with_its_password():
    assert "unauthorized-access" in refused(URL, **plain("blockme", PASSWORD))
