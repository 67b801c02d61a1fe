"""AMQPS with python-qpid-proton: TLS to an AMQP channel with SSLCIPH, verifying the
queue manager's certificate against the test CA, SASL PLAIN inside TLS, and a client
certificate where the channel has SSLCAUTH(REQUIRED).

interop/run.sh --ferry makes the certificates with OpenSSL and sets AMQPS_URL,
AMQPS_AUTH_URL, INTEROP_CA_PEM, INTEROP_CLIENT_CERT and INTEROP_CLIENT_KEY; without them
(a peer broker) these tests are skipped.
"""
import os
from contextlib import closing

import pytest
from proton import ConnectionException, Message, SSLDomain
from proton.utils import BlockingConnection

from conftest import addr

AMQPS_URL = os.environ.get("AMQPS_URL")
AMQPS_AUTH_URL = os.environ.get("AMQPS_AUTH_URL")
CA = os.environ.get("INTEROP_CA_PEM")
CERT = os.environ.get("INTEROP_CLIENT_CERT")
KEY = os.environ.get("INTEROP_CLIENT_KEY")
Q_TLS = "INTEROP.PROTON.TLS"

needs_tls = pytest.mark.skipif(
    not (AMQPS_URL and CA), reason="AMQPS_URL and INTEROP_CA_PEM unset: the broker is not set up for TLS"
)


def domain(client_cert=False):
    d = SSLDomain(SSLDomain.MODE_CLIENT)
    d.set_trusted_ca_db(CA)
    d.set_peer_authentication(SSLDomain.VERIFY_PEER_NAME)
    if client_cert:
        d.set_credentials(CERT, KEY, None)
    return d


def tls_connection(url, client_cert=False, **kwargs):
    """A BlockingConnection over TLS, closed when the `with` ends."""
    kwargs.setdefault("timeout", 20)
    return closing(BlockingConnection(url, ssl_domain=domain(client_cert), **kwargs))


def round_trip(conn, body):
    s = conn.create_sender(addr(Q_TLS))
    s.send(Message(body=body))
    r = conn.create_receiver(addr(Q_TLS), credit=1)
    m = r.receive(timeout=10)
    r.accept()
    assert m.body == body


@needs_tls
def test_amqps_verifies_the_queue_managers_certificate_and_carries_messages():
    with tls_connection(AMQPS_URL) as conn:
        round_trip(conn, "over amqps")


@needs_tls
def test_sasl_plain_travels_inside_tls():
    # The queue manager checks the password (interop/run.sh puts INTEROP_USER in its user
    # repository); a peer broker takes any.
    user = os.environ.get("INTEROP_USER", "app")
    password = os.environ.get("INTEROP_PASSWORD", "passw0rd")
    with tls_connection(AMQPS_URL, user=user, password=password) as conn:
        round_trip(conn, "plain inside tls")


@needs_tls
@pytest.mark.skipif(not (AMQPS_AUTH_URL and CERT), reason="no SSLCAUTH(REQUIRED) channel set up")
def test_a_client_certificate_is_needed_where_sslcauth_is_required():
    with tls_connection(AMQPS_AUTH_URL, client_cert=True) as conn:
        round_trip(conn, "with a client certificate")
    with pytest.raises(ConnectionException):
        with tls_connection(AMQPS_AUTH_URL, timeout=10) as conn:
            round_trip(conn, "never")


@needs_tls
def test_plain_amqp_to_the_tls_port_is_refused():
    plain = AMQPS_URL.replace("amqps://", "amqp://", 1)
    with pytest.raises(ConnectionException) as e:
        with closing(BlockingConnection(plain, timeout=10)) as conn:
            round_trip(conn, "never")
    assert "unauthorized" in str(e.value) or "TLS" in str(e.value), str(e.value)
