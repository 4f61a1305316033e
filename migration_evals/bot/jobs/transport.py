"""kombu's Redis transport with one repair: a failed acknowledgement frees its slot.

kombu's Redis QoS forgets a delivered message only once its acknowledgement has reached
Redis. When Redis goes away while a job runs, the acknowledgement fails, the message's
prefetch slot stays taken, and a worker fetching one message at a time never asks for
another, not even after Redis is back: the worker looks alive and consumes nothing (the
family of upstream reports "worker stops consuming after Redis reconnection"). Forgetting
the message locally lets the consumer fetch again, notice the broken connection and
reconnect. Nothing is lost by it: the message stays in Redis's unacknowledged set and is
restored after the visibility timeout, or it vanished with a Redis that kept nothing, and
then the job row, still in the database, is announced again.
"""

from __future__ import annotations

from typing import Any

from kombu.transport import redis, virtual

__all__ = ["Transport"]


class _QoS(redis.QoS):
    def ack(self, delivery_tag: Any) -> None:
        try:
            super().ack(delivery_tag)  # type: ignore[no-untyped-call]
        except self.channel.connection_errors:
            # Free the slot; Redis keeps the message.
            virtual.QoS.ack(self, delivery_tag)  # type: ignore[no-untyped-call]
            raise


class _Channel(redis.Channel):
    QoS = _QoS


class Transport(redis.Transport):
    """Use for ``redis://`` and ``rediss://`` brokers (Celery's ``broker_transport``)."""

    Channel = _Channel
