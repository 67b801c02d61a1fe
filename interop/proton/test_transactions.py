"""Local transactions through the coordinator (proton's TransactionHandler): a rollback
drops the sends and redelivers the receives with delivery-count + 1; a commit keeps
the sends and makes the receives final."""
from proton import Message
from proton.handlers import MessagingHandler, TransactionHandler
from proton.reactor import Container

from conftest import AMQP_URL, PASSWORD, USER, addr, drain_queue

Q_IN = "INTEROP.PROTON.TX.IN"
Q_OUT = "INTEROP.PROTON.TX.OUT"


class RollbackThenCommit(MessagingHandler, TransactionHandler):
    """Receives the request and sends a reply in a transaction it rolls back, then again
    in one it commits."""

    def __init__(self):
        super().__init__(prefetch=0, auto_accept=False, auto_settle=False)
        self.round = 0
        self.txn = None
        self.delivery_counts = []
        self.outcomes = []
        self.error = None

    def on_start(self, event):
        options = {"user": USER, "password": PASSWORD, "allow_insecure_mechs": True} if USER else {}
        self.conn = event.container.connect(AMQP_URL, **options)
        self.sender = event.container.create_sender(self.conn, addr(Q_OUT))
        self.receiver = event.container.create_receiver(self.conn, addr(Q_IN))
        event.container.declare_transaction(self.conn, handler=self)
        self.container = event.container

    def on_transaction_declared(self, event):
        self.txn = event.transaction
        self.receiver.flow(1)

    def on_message(self, event):
        self.delivery_counts.append(event.message.delivery_count)
        self.txn.accept(event.delivery)
        body = "dropped" if self.round == 0 else "kept"
        self.txn.send(self.sender, Message(body=body, durable=True))
        if self.round == 0:
            self.txn.abort()
        else:
            self.txn.commit()

    def on_transaction_aborted(self, event):
        self.outcomes.append("aborted")
        self.round += 1
        self.container.declare_transaction(self.conn, handler=self)

    def on_transaction_committed(self, event):
        self.outcomes.append("committed")
        self.conn.close()

    def on_transaction_declare_failed(self, event):
        self.error = "declare failed"
        self.conn.close()

    def on_transaction_commit_failed(self, event):
        self.error = "commit failed"
        self.conn.close()


def test_rollback_redelivers_and_drops_sends_then_commit_keeps_them(conn, send):
    drain_queue(conn, Q_IN)
    drain_queue(conn, Q_OUT)
    send(Q_IN, Message(body="request", durable=True))

    client = RollbackThenCommit()
    container = Container(client)
    container.timeout = 20
    container.run()

    assert client.error is None, client.error
    assert client.outcomes == ["aborted", "committed"]
    assert client.delivery_counts == [0, 1], "redelivered after the rollback with delivery-count + 1"
    r = conn.create_receiver(addr(Q_OUT), credit=10, name="tx-check")
    m = r.receive(timeout=10)
    r.accept()
    r.close()
    assert m.body == "kept", "the committed send is there"
    assert drain_queue(conn, Q_OUT) == 0, "the rolled-back send was dropped"
    assert drain_queue(conn, Q_IN) == 0, "the committed receive is final"
