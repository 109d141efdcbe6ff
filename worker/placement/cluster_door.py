"""Whether a Ray cluster lets in whoever reaches its address, asked before a run is sent there.

A run placed on the cluster reaches its machine as a Ray actor's argument: its launch spec, with
the run's ingest token and its secrets' values. Whoever can join the cluster as a driver can run
code on its nodes and read what they hold, and Ray asks callers for a token only where the
cluster was started with RAY_AUTH_MODE=token (Ray 2.52 on; not the default in the pinned 2.60).
So the cluster's GCS is asked for its id with no token, over Ray's own gRPC protocol (a second
or so; a ray.init without the token takes 20 s to give up): answered, the door is open.
"""
from enum import Enum

import grpc

ASK_TIMEOUT_S = 5.0


class Door(Enum):
    OPEN = "open"                 # answers a caller without a token
    TOKEN = "token"               # refuses a caller without the cluster's token
    UNREACHABLE = "unreachable"   # did not answer at all: nothing is said of its door


def door_of(gcs_address: str, timeout_s: float = ASK_TIMEOUT_S) -> Door:
    """The door of the cluster whose GCS listens at `gcs_address` (host:port)."""
    from ray.core.generated import gcs_service_pb2, gcs_service_pb2_grpc

    with grpc.insecure_channel(gcs_address) as channel:
        ask = gcs_service_pb2_grpc.NodeInfoGcsServiceStub(channel).GetClusterId
        try:
            ask(gcs_service_pb2.GetClusterIdRequest(), timeout=timeout_s)
        except grpc.RpcError as exc:
            return Door.TOKEN if exc.code() == grpc.StatusCode.UNAUTHENTICATED else Door.UNREACHABLE
    return Door.OPEN


def open_cluster_message(address: str) -> str:
    """Why a run is not placed on a cluster whose door is open, and the two ways on."""
    return (f"the Ray cluster at {address} lets in anyone who reaches it (its nodes were started without "
            f"RAY_AUTH_MODE=token): a run placed there would hand its ingest token and secrets to all of them, "
            f"so none is placed. Start every node with RAY_AUTH_MODE=token and RAY_AUTH_TOKEN, give this "
            f"worker the same two (docs/deploying/cluster.md), or set WORKER_RAY_ALLOW_OPEN_CLUSTER=1 where "
            f"only you can reach the cluster.")
