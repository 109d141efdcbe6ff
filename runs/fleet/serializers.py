"""The fleet as the API shows it (runs/fleet/records.py): read-only, built from the workers' answers."""
from typing import cast

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from runs.fleet.seen_by import busy_runs, cluster_nodes


class GpuSerializer(serializers.Serializer):
    index = serializers.IntegerField(help_text="The GPU's index as the worker's processes see it.")
    name = serializers.CharField()
    memory_mib = serializers.IntegerField()


class DevicesSerializer(serializers.Serializer):
    kind = serializers.ChoiceField(choices=["gpu", "cpu"], help_text="gpu when the worker has GPUs, else cpu.")
    gpus = GpuSerializer(many=True)
    cpu_cores = serializers.IntegerField(help_text="The cores the worker's process may use.")
    memory_mib = serializers.IntegerField(help_text="The machine's RAM.")
    # The stubs see Field.source (str | None) here; DRF takes declared fields off the class, so none clash.
    source = serializers.ChoiceField(choices=["torch", "nvidia-smi", "none"],  # type: ignore[assignment]
                                     help_text="How the GPUs were looked for: torch.cuda, nvidia-smi, or neither "
                                               "is on the worker.")


class BusyRunSerializer(serializers.Serializer):
    id = serializers.IntegerField(allow_null=True, help_text="Null for another account's run.")
    name = serializers.CharField(allow_null=True)
    since = serializers.DateTimeField(allow_null=True, help_text="When the worker started it (the worker's clock).")


class NodeRunSerializer(serializers.Serializer):
    id = serializers.IntegerField(allow_null=True, help_text="Null for another account's run.")
    name = serializers.CharField(allow_null=True)


class ClusterNodeSerializer(serializers.Serializer):
    name = serializers.CharField(help_text="The machine's name: its grpo-machine label (`ray start "
                                           "--labels=grpo-machine=<name>`), else its hostname.")
    node_id = serializers.CharField(help_text="Ray's node id (hex).")
    address = serializers.CharField(help_text="The node's IP address in the cluster.")
    alive = serializers.BooleanField(help_text="False for a machine the cluster has lost.")
    cpus = serializers.FloatField()
    cpus_free = serializers.FloatField(help_text="CPUs no run or other Ray work holds now.")
    gpus = serializers.FloatField()
    gpus_free = serializers.FloatField(help_text="GPUs no run or other Ray work holds now.")
    memory_gib = serializers.FloatField(help_text="The memory Ray may use on the node.")
    runs = NodeRunSerializer(many=True, help_text="The runs placed on this machine (by their placement groups).")


class ClusterSerializer(serializers.Serializer):
    address = serializers.CharField(help_text="The Ray address the worker places its runs through "
                                              "(WORKER_RAY_ADDRESS).")
    error = serializers.CharField(allow_null=True, help_text="Why the cluster could not be read (then `nodes` is "
                                                             "empty); null when it was.")
    nodes = ClusterNodeSerializer(many=True, help_text="The cluster's machines, as the worker last read them "
                                                       "(at most some seconds ago).")
    open_to_anyone = serializers.BooleanField(
        allow_null=True, help_text="True when the cluster answers a caller without a token (its nodes started "
                                   "without RAY_AUTH_MODE=token): the worker then places no run on it unless "
                                   "WORKER_RAY_ALLOW_OPEN_CLUSTER=1. Null when that could not be asked.")


class LiveWorkerSerializer(serializers.Serializer):
    name = serializers.CharField(help_text="Celery's node name, celery@host.")
    queues = serializers.ListField(
        child=serializers.CharField(),
        help_text="The queues it consumes: the pools (config.worker_pool) it takes runs from.")
    devices = DevicesSerializer(allow_null=True, help_text="Null in the first seconds after it starts, while it "
                                                           "looks for its devices, or when `problem` says why.")
    runs = serializers.SerializerMethodField(help_text="The runs it is busy with.")
    heard_at = serializers.DateTimeField(help_text="When its answer to the inspection arrived: the last time it was "
                                                   "heard from.")
    problem = serializers.CharField(allow_null=True, help_text="Why it answered without announcing itself.")
    cluster = serializers.SerializerMethodField(help_text="The Ray cluster it places its pool's runs on, each run on "
                                                          "one of its machines; null for a worker that runs its runs "
                                                          "itself.")

    @extend_schema_field(BusyRunSerializer(many=True))
    def get_runs(self, worker) -> list[dict]:
        busy = BusyRunSerializer(busy_runs(worker, self.context.get("run_names", {})), many=True)
        return cast(list[dict], busy.data)  # many=True: a ListSerializer, its data a ReturnList

    @extend_schema_field(ClusterSerializer(allow_null=True))
    def get_cluster(self, worker) -> dict | None:
        if worker.cluster is None:
            return None
        nodes = cluster_nodes(worker, self.context.get("run_names", {}))
        return ClusterSerializer({"address": worker.cluster.address, "error": worker.cluster.error,
                                  "nodes": nodes, "open_to_anyone": worker.cluster.open_to_anyone}).data


class FleetSerializer(serializers.Serializer):
    asked_at = serializers.DateTimeField(help_text="When the broker was asked; answers are reused for a few seconds.")
    workers = LiveWorkerSerializer(many=True, help_text="Every worker that answered, by name.")
