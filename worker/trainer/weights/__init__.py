"""A model's weights whole, for a file or a push, whatever the processes hold of them.

- `state_dict`: the tensors without tied duplicates, in the same order on every process;
- `gathered`: a sharded model's tensors gathered one at a time, the leader writing them whole;
- `streamed_safetensors`: a safetensors file written tensor by tensor and rewritten in place.

Below weight_sync/, training/ and checkpoints/, which write weights; above distributed/, whose
sharding it reads.
"""
