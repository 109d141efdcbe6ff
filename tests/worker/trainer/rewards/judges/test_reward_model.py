"""A reward model scores (prompt, completion) pairs with its one output, in batches that change
nothing, and a model that cannot give one score is refused before it scores anything."""
import math
import threading

import pytest

from tests.support.trainer_stack import allow_model_dir
from worker.trainer.models.paths import ModelRefused
from worker.trainer.rewards.judges.catalog import RewardModelParams
from worker.trainer.rewards.judges.reward_model import RewardModel, RewardModelRefused, head_shape, refusal_of_head

PROMPTS = ["What is 2 + 2?", "Name a colour.", "Say hello in French, please, and nothing else at all.", "Hi", "?"]
COMPLETIONS = ["4", "Blue, the colour of a clear sky at noon in summer.", "Bonjour", "Hello there!", ""]


def save_classifier(folder, tokenizer, num_labels: int, seed: int = 0):
    """A random Llama with a `num_labels` score head, 2 layers of width 32, with `tokenizer`."""
    import torch
    from transformers import AutoModelForSequenceClassification

    from worker.trainer.models.tiny import tiny_family_config

    config = tiny_family_config("llama", len(tokenizer), num_labels=num_labels)
    config.pad_token_id = tokenizer.pad_token_id
    torch.manual_seed(seed)
    AutoModelForSequenceClassification.from_config(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return folder


@pytest.fixture(scope="module")
def models(tiny_model_dir, tmp_path_factory):
    """Reward models in a folder the operator allows: one score; two labels; a tokenizer without a pad token."""
    from transformers import AutoTokenizer

    folder = tmp_path_factory.mktemp("reward-models")
    allow_model_dir(folder)
    tokenizer = AutoTokenizer.from_pretrained(tiny_model_dir)
    paths = {"one": save_classifier(folder / "one", tokenizer, 1),
             "two": save_classifier(folder / "two", tokenizer, 2)}
    tokenizer.pad_token = None
    paths["no-pad"] = save_classifier(folder / "no-pad", tokenizer, 1, seed=1)
    return paths


def reward_model(path, **params) -> RewardModel:
    return RewardModel("rm", RewardModelParams(model=str(path), **params))


def test_batched_scores_equal_one_at_a_time_scores(models):
    batched = reward_model(models["one"], batch_size=3)(PROMPTS, COMPLETIONS)
    alone = reward_model(models["one"], batch_size=1)(PROMPTS, COMPLETIONS)
    assert len(batched) == len(PROMPTS) and all(isinstance(score, float) for score in batched)
    assert batched == pytest.approx(alone, abs=1e-4)
    assert len(set(round(score, 4) for score in batched)) > 1  # the scores depend on the text


def test_a_tokenizer_without_a_pad_token_pads_with_its_end_of_sequence(models):
    scorer = reward_model(models["no-pad"], batch_size=5)
    assert scorer.tokenizer.pad_token == scorer.tokenizer.eos_token
    assert scorer(PROMPTS, COMPLETIONS) == pytest.approx(reward_model(models["no-pad"], batch_size=1)(
        PROMPTS, COMPLETIONS), abs=1e-4)


def test_a_two_label_head_is_refused_naming_its_shape(models):
    with pytest.raises(RewardModelRefused, match=r"gives 2 scores per input \(num_labels=2\).*exactly one"):
        reward_model(models["two"])


def test_a_causal_language_model_is_refused(tiny_model_dir):
    with pytest.raises(RewardModelRefused, match="num_labels=2"):
        reward_model(tiny_model_dir)


def test_the_score_layer_is_checked_as_loaded(models):
    from transformers import AutoModelForSequenceClassification

    two = AutoModelForSequenceClassification.from_pretrained(models["two"])
    assert head_shape(two) == (32, 2)
    assert "shape 32→2" in refusal_of_head("rm", two)


def test_a_path_outside_model_dirs_is_refused(models, tmp_path):
    import shutil

    elsewhere = shutil.copytree(models["one"], tmp_path / "copied")
    with pytest.raises(ModelRefused, match="outside the directories the operator allows"):
        reward_model(elsewhere)


def test_offset_is_subtracted_then_sigmoid_maps_to_0_1(models):
    raw = reward_model(models["one"])(PROMPTS, COMPLETIONS)
    shifted = reward_model(models["one"], offset=0.5)(PROMPTS, COMPLETIONS)
    squashed = reward_model(models["one"], offset=0.5, sigmoid=True)(PROMPTS, COMPLETIONS)
    assert shifted == pytest.approx([score - 0.5 for score in raw], abs=1e-5)
    assert squashed == pytest.approx([1 / (1 + math.exp(-score)) for score in shifted], abs=1e-5)
    assert all(0 < score < 1 for score in squashed)


def test_the_chat_template_writes_the_conversation_and_task_prompts_replace_rendered_ones(models):
    chat = reward_model(models["one"])
    text = chat.text("What is 2 + 2?", "4")
    assert "<|im_start|>user\nWhat is 2 + 2?<|im_end|>" in text and "<|im_start|>assistant\n4<|im_end|>" in text
    assert reward_model(models["one"], chat_template=False).text("Q: ", "A") == "Q: A"
    rendered = [chat.text(prompt, "") for prompt in PROMPTS]  # what a scorer may pass as `prompts`
    assert chat(rendered, COMPLETIONS, task_prompts=PROMPTS) == pytest.approx(chat(PROMPTS, COMPLETIONS), abs=1e-5)


def test_long_inputs_are_cut_from_the_left_keeping_the_completion(models):
    scorer = reward_model(models["one"], max_length=16, chat_template=False)
    tail = " the end of the answer"
    differing_starts = ["Alpha beta. " + "word " * 200, "Gamma. " + "word " * 300]  # the same last 16 tokens
    first, second = scorer(differing_starts, [tail, tail])
    assert first == pytest.approx(second, abs=1e-5)
    assert scorer(["word " * 200], [" another answer"])[0] != pytest.approx(first, abs=1e-5)


def test_two_threads_share_one_model(models):
    scorer = reward_model(models["one"], batch_size=2)
    expected = scorer(PROMPTS, COMPLETIONS)
    results = []
    threads = [threading.Thread(target=lambda: results.append(scorer(PROMPTS, COMPLETIONS))) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(results) == 4 and all(result == pytest.approx(expected, abs=1e-5) for result in results)


def test_metrics_count_calls_and_completions_since_last_taken(models):
    scorer = reward_model(models["one"])
    scorer(PROMPTS, COMPLETIONS)
    scorer(PROMPTS[:2], COMPLETIONS[:2])
    metrics = scorer.take_metrics()
    assert (metrics["calls"], metrics["completions"]) == (2, 7)
    assert metrics["seconds"] > 0 and metrics["completions_per_s"] == pytest.approx(7 / metrics["seconds"])
    assert scorer.take_metrics()["calls"] == 0


def test_a_closed_model_refuses_to_score(models):
    scorer = reward_model(models["one"])
    scorer.close()
    with pytest.raises(RuntimeError, match="closed"):
        scorer(PROMPTS, COMPLETIONS)


def test_mismatched_lengths_are_refused(models):
    with pytest.raises(ValueError, match="2 prompts for 1 completions"):
        reward_model(models["one"])(PROMPTS[:2], COMPLETIONS[:1])
