"""Attack: the Ray cluster a worker places runs on gives an answer to the token check that cannot be
read (an error other than a refusal for want of the token, a reply that is not a cluster id, no
answer in time), hoping the run is placed anyway with its ingest token and secrets. A cluster is
known to ask the token only when it refuses a caller without one: anything else places nothing,
and the run's message says the cluster's answer could not be read. A stand-in GCS answers here
over gRPC as Ray's would (no real cluster: tests/worker/placement/test_cluster_door.py has those)."""
from concurrent import futures

import pytest

grpc = pytest.importorskip("grpc")
pytest.importorskip("ray")

from worker.placement.cluster_door import Door, door_of, placement_refusal  # noqa: E402

METHOD = "/ray.rpc.NodeInfoGcsService/GetClusterId"


def stand_in_gcs(answer):
    """A gRPC server whose GetClusterId calls `answer(request_bytes, context)`; its address."""
    handler = grpc.method_handlers_generic_handler("ray.rpc.NodeInfoGcsService", {
        "GetClusterId": grpc.unary_unary_rpc_method_handler(answer)})
    server = grpc.server(futures.ThreadPoolExecutor(max_workers=2))
    server.add_generic_rpc_handlers((handler,))
    port = server.add_insecure_port("127.0.0.1:0")
    server.start()
    return server, f"127.0.0.1:{port}"


def aborting(code):
    def answer(request, context):
        context.abort(code, "no")
    return answer


def replying(raw: bytes):
    return lambda request, context: raw


UNREADABLE_ANSWERS = {
    "internal error": aborting(grpc.StatusCode.INTERNAL),
    "permission denied": aborting(grpc.StatusCode.PERMISSION_DENIED),
    "unimplemented": aborting(grpc.StatusCode.UNIMPLEMENTED),
    "unavailable": aborting(grpc.StatusCode.UNAVAILABLE),
    "bytes that are no reply": replying(b"\xff\xff\xff\xff garbage"),
    "a reply with no cluster id": replying(b""),
}


@pytest.fixture
def gcs():
    servers = []

    def start(answer):
        server, address = stand_in_gcs(answer)
        servers.append(server)
        return address
    yield start
    for server in servers:
        server.stop(None)


@pytest.mark.parametrize("answer", UNREADABLE_ANSWERS.values(), ids=UNREADABLE_ANSWERS.keys())
def test_an_answer_that_cannot_be_read_places_no_run(gcs, answer):
    address = gcs(answer)
    door = door_of(address, timeout_s=5)
    assert door is Door.UNREADABLE
    refusal = placement_refusal(door, "10.0.0.5:6379", allow_open_cluster=False)
    assert refusal is not None and "10.0.0.5:6379" in refusal
    assert "answer could not be read" in refusal and "WORKER_RAY_ALLOW_OPEN_CLUSTER=1" in refusal


def test_a_cluster_that_answers_nothing_in_time_places_no_run(gcs):
    import time

    address = gcs(lambda request, context: time.sleep(3) or b"")
    assert placement_refusal(door_of(address, timeout_s=0.5), address, allow_open_cluster=False) is not None


def test_only_a_refusal_for_want_of_the_token_places_the_run(gcs):
    address = gcs(aborting(grpc.StatusCode.UNAUTHENTICATED))
    assert door_of(address, timeout_s=5) is Door.TOKEN
    assert placement_refusal(Door.TOKEN, address, allow_open_cluster=False) is None


def test_an_open_door_is_refused_as_before_and_the_operator_may_allow_any():
    assert "lets in anyone" in placement_refusal(Door.OPEN, "10.0.0.5:6379", allow_open_cluster=False)
    for door in Door:
        assert placement_refusal(door, "10.0.0.5:6379", allow_open_cluster=True) is None
