"""Comparing 2 to 8 runs: aligned metric series, config diff and summary; samples and evaluation
examples side by side."""
from client.resources.runs import present
from client.session import Json, Session


def ids(runs: list[int]) -> str:
    return ",".join(map(str, runs))


class CompareCalls(Session):
    def compare(self, runs: list[int], metrics: list[str] | None = None, x: str = "step",
                points: int | None = None) -> Json:
        """`x`: step, time or samples; `metrics`: names (default: the usual GRPO ones the runs reported)."""
        params = {"runs": ids(runs), "metrics": ",".join(metrics) if metrics else None, "x": x, "points": points}
        return self._call("GET", "compare/", params=present(params))

    def compare_samples(self, runs: list[int], step: int | None = None) -> Json:
        """Completions of shared prompts side by side, at `step` (default: the last all runs logged)."""
        return self._call("GET", "compare/samples/", params=present({"runs": ids(runs), "step": step}))

    def compare_eval_examples(self, runs: list[int]) -> Json:
        """Per run, how many examples were learned, forgotten...; then the examples shared by two or more."""
        return self._call("GET", "compare/eval-examples/", params={"runs": ids(runs)})

    def compare_eval_example(self, runs: list[int], key: str) -> Json:
        """One example (by its 16-hex-digit key) followed in each run side by side."""
        return self._call("GET", "compare/eval-example/", params={"runs": ids(runs), "key": key})
