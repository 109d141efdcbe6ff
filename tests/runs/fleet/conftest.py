"""A broker that is not there. The fleet stubbed at Celery's broadcast is tests/support/fleet.py's."""
from unittest import mock

import pytest
from kombu import Connection

from runs.fleet import asking


@pytest.fixture
def broker_down():
    """The control plane's broker is a Redis that is not there (a closed port): a real refusal."""
    asking.forget()
    with mock.patch("controlplane.celery.app.connection_for_write",
                    side_effect=lambda **_: Connection("redis://:secret@127.0.0.1:1/0")):
        yield
    asking.forget()
