"""A resumable data order: epochs of seeded permutations, addressed by a single position.

The position is all a checkpoint needs to store: the same seed and position give
the same next prompts, so a resumed run neither repeats nor skips any.
"""
import random


class PromptOrder:
    def __init__(self, size: int, seed: int, position: int = 0):
        if size <= 0:
            raise ValueError("cannot order an empty dataset")
        self.size, self.seed, self.position = size, seed, position
        self._epoch = -1
        self._permutation: list[int] = []

    def _permutation_of(self, epoch: int) -> list[int]:
        if epoch != self._epoch:
            indices = list(range(self.size))
            random.Random(self.seed * 1_000_003 + epoch).shuffle(indices)
            self._epoch, self._permutation = epoch, indices
        return self._permutation

    def next(self) -> int:
        epoch, offset = divmod(self.position, self.size)
        self.position += 1
        return self._permutation_of(epoch)[offset]

    @property
    def epoch(self) -> int:
        return self.position // self.size


class ConsumedFrontier:
    """The first order position not yet trained on, with prompts finishing out of order.

    Rollouts fetch prompts ahead of training and finish in any order; a checkpoint
    stores this frontier so a resumed run regenerates exactly the prompts it had
    not trained on.
    """

    def __init__(self, start: int = 0):
        self.frontier = start
        self._done: set[int] = set()

    def consume(self, position: int) -> None:
        self._done.add(position)
        while self.frontier in self._done:
            self._done.remove(self.frontier)
            self.frontier += 1
