"""A model's tensors once each, in an order every process agrees on: what a weight push and a
whole-model checkpoint write, and what the processes of a sharded model gather in turn."""


def unique_state_dict(model) -> dict:
    """The state dict without tied duplicates (the first name wins, as checkpoints store them).
    A sharded model's tensors stay sharded: writers gather each in turn (distributed/), so every
    process must get the same names in the same order. Ties are read from the module's own
    parameters, the same on every process, and from storage for plain tensors; a shard's
    storage would not do (an empty shard has none, and which shard is empty differs by rank)."""
    tied = _tied_parameter_names(model)
    seen, tensors = set(), {}
    for name, tensor in model.state_dict().items():
        if name in tied:
            continue
        if not hasattr(tensor, "full_tensor"):
            key = (tensor.data_ptr(), tuple(tensor.shape))
            if key in seen:
                continue
            seen.add(key)
        tensors[name] = tensor.detach().contiguous()
    return tensors


def _tied_parameter_names(model) -> set[str]:
    """Names of parameters that are another name's parameter object (a tied head), past the first."""
    if not hasattr(model, "named_parameters"):
        return set()  # a state dict's view (lora.ServedLora's merged weights): ties by storage alone
    seen, tied = set(), set()
    for name, parameter in model.named_parameters(remove_duplicate=False):
        if id(parameter) in seen:
            tied.add(name)
        seen.add(id(parameter))
    return tied
