"""One evaluation example's outcome at one step of a run."""
from django.db import models


class EvalOutcome(models.Model):
    """One evaluation example's answers at one evaluation of a run: what "one example, followed"
    reads across steps (and, by `key`, across runs evaluated on the same examples)."""
    run = models.ForeignKey("runs.Run", on_delete=models.CASCADE, related_name="eval_outcomes")
    step = models.PositiveIntegerField()
    model_version = models.PositiveIntegerField(default=0)
    index = models.PositiveIntegerField(help_text="The example's place in the run's evaluation set.")
    key = models.CharField(max_length=16, help_text="A hash of the prompt: the same example in another run.")
    prompt = models.TextField()
    answers = models.JSONField(default=list)  # [{text, rewards, total_reward, passed, num_tokens, finish_reason}]
    passed = models.PositiveIntegerField(default=0, help_text="Answers that passed.")
    samples = models.PositiveIntegerField(default=1, help_text="Answers given.")
    score = models.FloatField(null=True, help_text="The answers' mean evaluation reward.")

    class Meta:
        ordering = ["step", "index"]
        constraints = [models.UniqueConstraint(fields=["run", "step", "index"], name="eval_outcome_once")]
        indexes = [models.Index(fields=["run", "key", "step"], name="eval_outcome_run_key_step")]

    @property
    def pass_rate(self) -> float:
        return self.passed / self.samples if self.samples else 0.0
