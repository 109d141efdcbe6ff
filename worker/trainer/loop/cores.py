"""split_cores: the trainer's threads while vLLM generates on its own cores, and all of them
while it does not (inference/cpu_sharing.py)."""
import torch

from worker.trainer.inference.cpu_sharing import CoreHandover, allowed_cpus, generation_cpus
from worker.trainer.startup.ready import ReadyParts


def hand_over_cores(ready: ReadyParts) -> CoreHandover | None:
    """None: the cores are not split (a GPU run, one core, or a setting that says otherwise)."""
    if ready.cpu_sharing != "split_cores":
        return None
    cpus = allowed_cpus()
    kept = generation_cpus(ready.config, cpus, ready.training.on_gpu) or []
    threads = torch.get_num_threads()
    beside = max(1, min(threads, len(cpus) - len(kept)))
    ready.report.log(f"CPU cores split with vLLM: it generates on core(s) {','.join(map(str, kept))}; the trainer "
                     f"trains on {beside} thread(s) while vLLM has requests and on {threads} while it has none")
    return CoreHandover(lambda: server_has_work(ready), all_threads=threads, beside_server_threads=beside)


def server_has_work(ready: ReadyParts) -> bool:
    return ready.rollout.server_has_work() or (ready.evaluator is not None and ready.evaluator.running)
