"""Whether a Ray cluster lets in whoever reaches its address, asked before a run is sent there.

A run placed on the cluster reaches its machine as a Ray actor's argument: its launch spec, with
the run's ingest token and its secrets' values. Whoever can join the cluster as a driver can run
code on its nodes and read what they hold, and Ray asks callers for a token only where the
cluster was started with RAY_AUTH_MODE=token (Ray 2.52 on; not the default in the pinned 2.60).
So the cluster's GCS is asked for its id with no token, over Ray's own gRPC protocol (a second
or so; a ray.init without the token takes 20 s to give up): answered, the door is open. Only a
refusal for want of the token shows it shut; anything else (no answer, another error, an answer
that is not a cluster id) says nothing, and nothing is placed on it (fails closed).
"""
import logging
from enum import Enum

import grpc

log = logging.getLogger(__name__)
ASK_TIMEOUT_S = 5.0


class Door(Enum):
    OPEN = "open"                 # answers a caller without a token
    TOKEN = "token"               # refuses a caller without the cluster's token
    UNREADABLE = "unreadable"     # no answer, or one that is neither: not known to be shut


def door_of(gcs_address: str, timeout_s: float = ASK_TIMEOUT_S) -> Door:
    """The door of the cluster whose GCS listens at `gcs_address` (host:port)."""
    try:
        return _ask_without_token(gcs_address, timeout_s)
    except grpc.RpcError as exc:
        if exc.code() == grpc.StatusCode.UNAUTHENTICATED:
            return Door.TOKEN
        log.warning("the Ray cluster at %s answered the token check with %s", gcs_address, exc.code())
    except Exception as exc:  # noqa: BLE001 -- whatever went wrong, the door is not known to be shut
        log.warning("the Ray cluster at %s could not be asked for its door: %s: %s", gcs_address,
                    type(exc).__name__, exc)
    return Door.UNREADABLE


def _ask_without_token(gcs_address: str, timeout_s: float) -> Door:
    """OPEN when the GCS gives its cluster id to a caller without the token; raises otherwise."""
    from ray.core.generated import gcs_service_pb2, gcs_service_pb2_grpc

    with grpc.insecure_channel(gcs_address) as channel:
        ask = gcs_service_pb2_grpc.NodeInfoGcsServiceStub(channel).GetClusterId
        answer = ask(gcs_service_pb2.GetClusterIdRequest(), timeout=timeout_s)  # type: ignore[attr-defined]
    if not answer.cluster_id:
        raise ValueError("the answer holds no cluster id")
    return Door.OPEN


def placement_refusal(door: Door, address: str, allow_open_cluster: bool) -> str | None:
    """Why no run is placed on the cluster behind `door`, or None where one may be. Only a cluster
    known to ask the token takes runs, unless WORKER_RAY_ALLOW_OPEN_CLUSTER says any may."""
    if allow_open_cluster or door is Door.TOKEN:
        return None
    if door is Door.OPEN:
        return open_cluster_message(address)
    return unreadable_cluster_message(address)


def open_cluster_message(address: str) -> str:
    """Why a run is not placed on a cluster whose door is open, and the two ways on."""
    return (f"the Ray cluster at {address} lets in anyone who reaches it (its nodes were started without "
            f"RAY_AUTH_MODE=token): a run placed there would hand its ingest token and secrets to all of them, "
            f"so none is placed. Start every node with RAY_AUTH_MODE=token and RAY_AUTH_TOKEN, give this "
            f"worker the same two (docs/deploying/cluster.md), or set WORKER_RAY_ALLOW_OPEN_CLUSTER=1 where "
            f"only you can reach the cluster.")


def unreadable_cluster_message(address: str) -> str:
    """Why a run is not placed on a cluster whose answer to the token check could not be read."""
    return (f"the Ray cluster at {address} was asked whether it lets in callers without its token, and its "
            f"answer could not be read (no answer in time, or an error other than a refusal for want of the "
            f"token; the worker's log says which): a cluster not known to ask RAY_AUTH_TOKEN gets no run, "
            f"whose ingest token and secrets it could hand to anyone. Check that the cluster is up and started "
            f"with RAY_AUTH_MODE=token (docs/deploying/cluster.md), or set WORKER_RAY_ALLOW_OPEN_CLUSTER=1 "
            f"where only you can reach the cluster.")
