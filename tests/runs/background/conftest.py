"""`live`: a server with a real consumer of its queues (tests/support/background_work.py), for the
tests of work that goes through them end to end (a large upload's check, a model-played dry run).
Scoped to this package so that the consumer, torch in it, is up only while these tests run."""
import pytest

from tests.support.background_work import SEED
from tests.support.asgi_server import AsgiServer
from tests.support.controlplane_consumer import running_consumer


@pytest.fixture(scope="package")
def live(tmp_path_factory):
    """A server and a consumer of its queue, with a tiny model prepared where dry runs may load it."""
    pytest.importorskip("transformers")
    from worker.trainer.models.tiny import build_tiny_model

    data_dir = tmp_path_factory.mktemp("live")
    build_tiny_model(data_dir / "models" / "tiny-llama")
    with AsgiServer(data_dir) as server:
        server.seed = server.shell_json(SEED)
        with running_consumer(server) as consumer:
            server.consumer = consumer
            yield server
