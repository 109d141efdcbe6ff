"""Each hostile or broken reward gives its own error, and the caller (and the pool) carry on."""
import os

import pytest

from tests.support.sandbox import call, reward_source
from worker.trainer.rewards.sandbox import SandboxError

WORKS = reward_source("return [float(len(c)) for c in completions]")


def failure(pool, source: str, **columns) -> SandboxError:
    with pytest.raises(SandboxError) as raised:
        call(pool, source, **columns)
    # Whatever just happened, the next call of good code works.
    assert call(pool, WORKS).values == [1.0, 2.0]
    return raised.value


def test_good_code_scores_and_its_output_comes_back(pool):
    result = call(pool, reward_source("print('looking at', len(completions))\n"
                                      "return [1.0 if a in c else 0.0\n"
                                      "        for c, a in zip(completions, columns['answer'])]"),
                  completions=["the answer is 4", "5"], answer=["4", "4"])
    assert result.values == [1.0, 0.0]
    assert result.output == "looking at 2\n"


def test_a_syntax_error_names_its_line(pool):
    error = failure(pool, "def reward(prompts, completions, **columns)\n    return []\n")
    assert error.kind == "syntax" and error.line == 1
    assert "line 1" in error.message


def test_code_without_a_reward_function_says_so(pool):
    error = failure(pool, "def score(prompts, completions, **columns):\n    return []\n")
    assert error.kind == "definition" and "'reward'" in error.message


def test_an_exception_has_a_traceback_of_the_users_code_only(pool):
    source = reward_source("return [helper(c) for c in completions]",
                           imports="import json\n\ndef helper(text):\n    return json.loads(text)\n")
    error = failure(pool, source)
    assert error.kind == "exception" and "JSONDecodeError: Expecting value" in error.message
    assert 'File "reward.py", line 4, in helper' in error.traceback
    assert 'File "reward.py", line 7, in reward' in error.traceback
    assert error.line == 4
    # Neither the json library's frames nor the sandbox's own appear.
    assert "json/decoder.py" not in error.traceback and "child.py" not in error.traceback


def test_an_exception_at_import_time_is_reported_with_its_line(pool):
    error = failure(pool, "x = {}['missing']\n" + WORKS)
    assert error.kind == "exception" and error.line == 1 and "KeyError" in error.message


def test_calling_exit_is_an_error_not_the_end_of_the_worker(pool):
    error = failure(pool, reward_source("raise SystemExit(3)"))
    assert error.kind == "exception" and "SystemExit" in error.message


def test_an_infinite_loop_times_out_and_its_process_is_replaced(pool):
    before = pool.processes_started
    error = failure(pool, reward_source("while True:\n    pass"))
    assert error.kind == "timeout" and "longer than 3 s" in error.message
    assert pool.processes_started == before + 1


def test_an_infinite_loop_at_import_time_times_out_too(pool):
    error = failure(pool, "while True:\n    pass\n" + WORKS)
    assert error.kind == "timeout"


def test_a_memory_bomb_hits_the_memory_limit(pool):
    error = failure(pool, reward_source("hoard = []\nwhile True:\n    hoard.append(bytearray(10 ** 7))"))
    assert error.kind == "memory" and "512 MiB" in error.message


def test_one_huge_allocation_hits_the_memory_limit(pool):
    error = failure(pool, reward_source("return [0.0] * (10 ** 10)"))
    assert error.kind == "memory"


def test_printing_megabytes_is_stopped_with_a_clear_error(pool):
    error = failure(pool, reward_source("while True:\n    print('x' * 1000)"))
    assert error.kind == "output" and "256 KiB" in error.message
    assert error.output.startswith("xxx") and len(error.output) <= pool.limits.output_keep_chars


def test_writing_megabytes_to_the_raw_file_descriptors_is_stopped_too(pool):
    error = failure(pool, reward_source("for _ in range(5000):\n    os.write(2, b'y' * 1000)\nreturn [0.0, 0.0]",
                                        imports="import os"))
    assert error.kind == "output"


def test_the_wrong_number_of_values_is_refused(pool):
    error = failure(pool, reward_source("return [1.0]"))
    assert error.kind == "result_length" and "1 values for 2 completions" in error.message


@pytest.mark.parametrize("value", ["float('nan')", "float('inf')", "-float('inf')"])
def test_nan_and_infinity_are_refused(pool, value):
    error = failure(pool, reward_source(f"return [1.0, {value}]"))
    assert error.kind == "result_value" and "value 1" in error.message


@pytest.mark.parametrize(("returned", "named"), [
    ("{'a': 1.0}", "returned dict"), ("'1.0'", "returned str"), ("[1.0, 'high']", "value 1 is 'high' (str)"),
    ("[True, 1.0]", "value 0 is True (bool)"), ("None", "returned NoneType"),
])
def test_the_wrong_type_is_refused_naming_it(pool, returned, named):
    error = failure(pool, reward_source(f"return {returned}"))
    assert error.kind == "result_type" and named in error.message


def test_none_and_integers_are_fine(pool):
    assert call(pool, reward_source("return [None, 3]")).values == [None, 3.0]


def test_an_environment_secret_does_not_reach_the_code(pool, monkeypatch):
    monkeypatch.setenv("GRPO_TEST_SECRET", "hunter2")
    monkeypatch.setenv("DATABASE_URL", "postgres://u:hunter2@db/grpo")
    source = reward_source("print(sorted(os.environ))\n"
                           "leaked = os.environ.get('GRPO_TEST_SECRET') or os.environ.get('DATABASE_URL')\n"
                           "return [1.0 if leaked else 0.0] * len(completions)", imports="import os")
    # A fresh pool: the test's variables exist before its process starts.
    from worker.trainer.rewards.sandbox import SandboxPool

    with SandboxPool(size=1, limits=pool.limits) as fresh:
        result = call(fresh, source)
    assert result.values == [0.0, 0.0]
    assert "GRPO_TEST_SECRET" not in result.output and "DATABASE_URL" not in result.output
    assert os.environ["GRPO_TEST_SECRET"] == "hunter2"  # and ours is untouched


def test_the_code_runs_in_a_working_directory_of_its_own(pool):
    source = reward_source("open('scratch.txt', 'w').write('x')\nprint(os.getcwd())\nreturn [0.0, 0.0]",
                           imports="import os")
    result = call(pool, source)
    assert "reward-sandbox-" in result.output and os.getcwd() not in result.output
