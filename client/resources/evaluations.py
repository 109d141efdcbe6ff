"""A run's evaluations: one row each, one evaluation's outcomes, its examples across evaluations."""
from client.resources.runs import present
from client.session import Json, Session


class EvaluationCalls(Session):
    def evaluations(self, run_id: int) -> Json:
        """Whether the run evaluates, and one row per evaluation: pass@1, mean score, flips."""
        return self._call("GET", f"runs/{run_id}/evaluations/")

    def evaluation_outcomes(self, run_id: int, step: int, outcome: str | None = None, page: int = 1) -> Json:
        """The examples of the evaluation at `step` (a page), each with its answers; `outcome` filters them."""
        return self._call("GET", f"runs/{run_id}/evaluations/{step}/",
                          params=present({"outcome": outcome, "page": page}))

    def eval_examples(self, run_id: int, classification: str | None = None) -> Json:
        """Every example of the evaluation set with its pass rate at each evaluation and its class."""
        return self._call("GET", f"runs/{run_id}/eval-examples/",
                          params=present({"classification": classification}))

    def eval_example(self, run_id: int, index: int) -> Json:
        """One example followed: its prompt and its answers at every evaluation."""
        return self._call("GET", f"runs/{run_id}/eval-examples/{index}/")
