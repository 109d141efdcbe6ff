"""A run that ends while a judge's call is in flight: closing the loader's judges ends that call,
so the scoring thread waiting on it gets None rewards and the trainer's process can exit."""
import socket
import threading

from worker.trainer.rewards.loader import RewardLoader
from worker.trainer.rollout.groups import Completion, Group
from worker.trainer.rollout.scoring import Scorer
from worker.trainer.spec import RewardSpec


def test_closing_the_loader_ends_a_judges_call_in_flight_with_none_rewards():
    silent = socket.socket()  # accepts connections and never answers
    silent.bind(("127.0.0.1", 0))
    silent.listen(8)
    params = {"template": "{prompt} {completion}", "mode": "choice", "labels": {"yes": 1, "no": 0},
              "endpoint": "url", "base_url": f"http://127.0.0.1:{silent.getsockname()[1]}/v1", "model": "m"}
    loader = RewardLoader()
    errors = []
    spec = RewardSpec(name="judge", kind="judge", params=params, internal_host_allowed=True)  # 127.0.0.1, listed
    scorer = Scorer(loader.load([spec]),
                    on_error=lambda name, message: errors.append(name))
    group = Group(prompt_index=0, prompt_text="p", prompt_ids=[1], columns={}, model_version=0,
                  completions=[Completion([1], [-1.0], "yes", "stop")])
    scoring = threading.Thread(target=scorer.score, args=(group,), daemon=True)
    scoring.start()
    scoring.join(0.5)
    assert scoring.is_alive()  # waiting on the silent endpoint
    loader.close()
    scoring.join(30)
    silent.close()
    assert not scoring.is_alive()
    assert group.rewards == {"judge": [None]} and errors == ["judge"]
