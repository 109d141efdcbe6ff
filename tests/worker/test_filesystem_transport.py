"""The embedded broker writes each message whole before a consumer can see it: kombu's own
transport opened the final name first, and a consumer that listed the folder in between took an
empty file and stopped on it."""
import os

from celery import Celery

from worker.broker import celery_config
from worker.filesystem_transport import WRITING_SUFFIX, Transport


def test_the_embedded_broker_uses_the_transport_that_writes_whole(tmp_path):
    app = Celery("t", set_as_current=False)
    app.conf.update(celery_config("", tmp_path))
    with app.connection_for_write() as connection:
        assert connection.transport_cls is Transport or isinstance(connection.transport, Transport)


def test_a_message_is_readable_whole_under_its_queue_name_and_nothing_half_written_is_left(tmp_path, monkeypatch):
    app = Celery("t", set_as_current=False)
    app.conf.update(celery_config("", tmp_path))
    seen_while_writing = []
    real_replace = os.replace

    def replace_and_look(source, target):
        seen_while_writing.extend(os.listdir(os.path.dirname(target)))
        real_replace(source, target)

    monkeypatch.setattr(os, "replace", replace_and_look)
    with app.connection_for_write() as connection:
        queue = connection.SimpleQueue("work")
        queue.put({"n": 1})
        assert seen_while_writing and all(name.endswith(WRITING_SUFFIX) for name in seen_while_writing)
        assert queue.get(timeout=5).payload == {"n": 1}
        queue.close()
    assert not [name for name in os.listdir(tmp_path / "broker" / "out") if name.endswith(WRITING_SUFFIX)]
