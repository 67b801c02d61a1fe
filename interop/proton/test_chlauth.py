"""Channel authentication records (SET CHLAUTH) seen from python-qpid-proton: a
connection a record refuses is closed with amqp:unauthorized-access.

interop/run.sh --ferry sets AMQP_BLOCKED_URL (a channel whose ADDRESSMAP record says
USERSRC(NOACCESS)) and puts SASL user 'blockme' in the BLOCKUSER list of every channel;
with a peer broker these tests are skipped.
"""
import os
from contextlib import closing

import pytest
from proton import ConnectionException
from proton.utils import BlockingConnection

BLOCKED_URL = os.environ.get("AMQP_BLOCKED_URL")
URL = os.environ.get("AMQP_URL", "amqp://localhost:5672")

needs_chlauth = pytest.mark.skipif(
    not BLOCKED_URL, reason="AMQP_BLOCKED_URL unset: the broker has no CHLAUTH records"
)


def refused(url, **kwargs):
    with pytest.raises(ConnectionException) as e:
        with closing(BlockingConnection(url, timeout=20, **kwargs)):
            pass
    return str(e.value)


@needs_chlauth
def test_a_noaccess_record_refuses_the_connection():
    assert "unauthorized-access" in refused(BLOCKED_URL)


@needs_chlauth
def test_a_blocked_sasl_user_is_refused_and_others_are_let_in():
    with closing(
        BlockingConnection(URL, timeout=20, user="someone", password="secret", allowed_mechs="PLAIN", allow_insecure_mechs=True)
    ):
        pass
    why = refused(URL, user="blockme", password="secret", allowed_mechs="PLAIN", allow_insecure_mechs=True)
    assert "unauthorized-access" in why
