"""Rollouts spread over several vLLM servers (inference_machines): what the rollout worker and an
episode's turns ask of one client, answered by whichever server has the fewest requests in flight."""
from worker.trainer.inference.completions_client import CompletionsClient
from worker.trainer.rollout.groups import Completion


class SpreadClient:
    def __init__(self, clients: list[CompletionsClient]):
        if not clients:
            raise ValueError("SpreadClient needs at least one server's client")
        self.clients = clients
        self.in_flight = [0] * len(clients)
        self.answered = [0] * len(clients)  # requests each server answered: how even the spread is

    async def sample(self, prompt_ids: list[int], n: int, columns: dict | None = None,
                     overrides: dict | None = None) -> list[Completion]:
        index = min(range(len(self.clients)), key=self.in_flight.__getitem__)  # ties: the first
        self.in_flight[index] += 1
        try:
            completions = await self.clients[index].sample(prompt_ids, n, columns, overrides)
        finally:
            self.in_flight[index] -= 1
        self.answered[index] += 1
        return completions

    async def close(self) -> None:
        for client in self.clients:
            await client.close()
