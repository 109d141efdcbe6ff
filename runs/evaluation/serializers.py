"""The evaluation endpoints' query parameters (a bad one is a 400 naming what is allowed) and
the shape of their answers, for the OpenAPI schema."""
from rest_framework import serializers

from runs.compare.serializers import RunSelectionQuery
from runs.evaluation.history import OUTCOME_FILTERS
from runs.evaluation.passing import CLASSES

PASSES_HELP = "Whether the example passes this evaluation: at least half its answers passed."
CLASS_HELP = "; ".join(f"{name}: {meaning}" for name, meaning in CLASSES.items())


def _choices(names) -> serializers.ChoiceField:
    allowed = ", ".join(names)
    return serializers.ChoiceField(
        list(names), required=False,
        error_messages={"invalid_choice": f'"{{input}}" is not one of the allowed values: {allowed}'},
        help_text=" ".join(f"{name}: {meaning}." for name, meaning in names.items()))


class OutcomeQuery(serializers.Serializer):
    outcome = _choices(OUTCOME_FILTERS)


class ClassificationQuery(serializers.Serializer):
    classification = _choices(CLASSES)


class EvalExampleQuery(RunSelectionQuery):
    key = serializers.RegexField(r"^[0-9a-f]{16}$", help_text="The example's key: 16 hexadecimal digits, "
                                 "as GET /api/compare/eval-examples/ lists them.",
                                 error_messages={"invalid": "a key is 16 hexadecimal digits (0-9, a-f)"})


class AnswerSchema(serializers.Serializer):
    text = serializers.CharField()
    rewards = serializers.DictField(child=serializers.FloatField(allow_null=True),
                                    help_text="Per evaluation reward function (null: not applicable).")
    total_reward = serializers.FloatField(allow_null=True)
    passed = serializers.BooleanField(help_text="Its total reached config.eval_pass_threshold.")
    num_tokens = serializers.IntegerField()
    finish_reason = serializers.CharField(allow_blank=True)


class EvaluationRowSchema(serializers.Serializer):
    step = serializers.IntegerField()
    model_version = serializers.IntegerField()
    examples = serializers.IntegerField()
    passing = serializers.IntegerField(help_text="Examples that passed (at least half their answers).")
    pass_at_1 = serializers.FloatField(help_text="Mean share of passing answers per example (eval/pass@1).")
    mean_score = serializers.FloatField(allow_null=True, help_text="Mean of the examples' mean evaluation reward.")
    previous_step = serializers.IntegerField(allow_null=True, help_text="The evaluation before; null for the first.")
    flipped_to_pass = serializers.IntegerField(allow_null=True, help_text="Examples failing before, passing now.")
    flipped_to_fail = serializers.IntegerField(allow_null=True, help_text="Examples passing before, failing now.")
    metrics = serializers.DictField(child=serializers.FloatField(),
                                    help_text="The eval/ metrics reported at this step: pass@k, per-function means.")


class EvaluationsSchema(serializers.Serializer):
    configured = serializers.BooleanField(help_text="Whether the run evaluates (config.eval_steps above 0).")
    eval_steps = serializers.IntegerField()
    eval_samples = serializers.IntegerField(help_text="Answers per example: the k of pass@k.")
    evaluations = EvaluationRowSchema(many=True)


class OutcomeSchema(serializers.Serializer):
    step = serializers.IntegerField()
    model_version = serializers.IntegerField()
    index = serializers.IntegerField(help_text="The example's place in the run's evaluation set.")
    key = serializers.CharField(help_text="A hash of the prompt: the same example in another run.")
    prompt = serializers.CharField(allow_blank=True)
    passed = serializers.IntegerField(help_text="Answers that passed.")
    samples = serializers.IntegerField(help_text="Answers given.")
    pass_rate = serializers.FloatField()
    score = serializers.FloatField(allow_null=True, help_text="The answers' mean evaluation reward.")
    passes = serializers.BooleanField(help_text=PASSES_HELP)
    previously_passed = serializers.BooleanField(allow_null=True,
                                                 help_text="At the evaluation before; null if there is none.")
    flipped = serializers.BooleanField(help_text="Passes differently from the evaluation before.")
    answers = AnswerSchema(many=True)


class ExampleRowSchema(serializers.Serializer):
    index = serializers.IntegerField()
    key = serializers.CharField()
    prompt_preview = serializers.CharField(allow_blank=True, help_text="The question asked, in one line.")
    pass_rates = serializers.ListField(child=serializers.FloatField(allow_null=True),
                                       help_text="At each of `steps` (null: not evaluated then).")
    flips = serializers.IntegerField(help_text="Times it went from passing to failing or back.")
    classification = serializers.ChoiceField(list(CLASSES), help_text=CLASS_HELP)


class ClassCountsSchema(serializers.Serializer):
    always_passed = serializers.IntegerField()
    never_passed = serializers.IntegerField()
    learned = serializers.IntegerField()
    forgotten = serializers.IntegerField()
    unstable = serializers.IntegerField()


class ExamplesSchema(serializers.Serializer):
    steps = serializers.ListField(child=serializers.IntegerField(), help_text="The run's evaluation steps.")
    counts = ClassCountsSchema(help_text="Examples per class, of all of them (the filter aside).")
    examples = ExampleRowSchema(many=True)


class ExampleEvaluationSchema(serializers.Serializer):
    step = serializers.IntegerField()
    model_version = serializers.IntegerField()
    passed = serializers.IntegerField()
    samples = serializers.IntegerField()
    pass_rate = serializers.FloatField()
    passes = serializers.BooleanField(help_text=PASSES_HELP)
    score = serializers.FloatField(allow_null=True)
    answers = AnswerSchema(many=True)


class FollowedExampleSchema(serializers.Serializer):
    index = serializers.IntegerField()
    key = serializers.CharField()
    prompt = serializers.CharField(allow_blank=True)
    classification = serializers.ChoiceField(list(CLASSES), help_text=CLASS_HELP)
    flips = serializers.IntegerField()
    evaluations = ExampleEvaluationSchema(many=True, help_text="Oldest first.")


class RunClassesSchema(serializers.Serializer):
    run = serializers.IntegerField()
    name = serializers.CharField()
    evaluations = serializers.IntegerField()
    examples = serializers.IntegerField()
    counts = ClassCountsSchema()


class PlaceSchema(serializers.Serializer):
    index = serializers.IntegerField()
    classification = serializers.ChoiceField(list(CLASSES))
    flips = serializers.IntegerField()
    last_pass_rate = serializers.FloatField()


class SharedExampleSchema(serializers.Serializer):
    key = serializers.CharField()
    prompt_preview = serializers.CharField(allow_blank=True)
    shared_by = serializers.IntegerField(help_text="How many of the runs were evaluated on it.")
    runs = serializers.DictField(child=PlaceSchema(), help_text="Per run id that has it.")


class SharedExamplesSchema(serializers.Serializer):
    runs = RunClassesSchema(many=True, help_text="In the order asked.")
    examples = SharedExampleSchema(many=True, help_text="Keys at least two of the runs share, most shared first.")


class RunColumnSchema(serializers.Serializer):
    run = serializers.IntegerField()
    name = serializers.CharField()
    index = serializers.IntegerField(allow_null=True, help_text="Null: this run was not evaluated on it.")
    classification = serializers.ChoiceField(list(CLASSES), allow_null=True)
    flips = serializers.IntegerField(allow_null=True)
    evaluations = ExampleEvaluationSchema(many=True)


class ExampleAcrossRunsSchema(serializers.Serializer):
    key = serializers.CharField()
    prompt = serializers.CharField(allow_blank=True)
    runs = RunColumnSchema(many=True, help_text="In the order asked.")
