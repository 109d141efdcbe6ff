"""User code runs only where Landlock confines its files, unless the operator accepted the risk
(SANDBOX_ALLOW_UNCONFINED_FILES=1); where it applies, another sandbox's folder is out of reach too."""
import pytest

from tests.support.sandbox import TEST_LIMITS, call, reward_source
from worker.trainer.rewards.sandbox import SandboxError, SandboxPool
from worker.trainer.rewards.sandbox.isolation import Isolation, files_refusal, files_risk_accepted

NO_LANDLOCK_FILES = Isolation(landlock_files=False, allow_unconfined_files=False)
SCORES = reward_source("return [1.0] * len(completions)")


def test_without_landlock_user_code_is_refused_naming_the_setting():
    pool = SandboxPool(size=1, limits=TEST_LIMITS, isolation=NO_LANDLOCK_FILES)
    with pytest.raises(SandboxError) as raised:
        call(pool, SCORES)
    pool.close()
    assert raised.value.kind == "refused"
    assert raised.value.message.startswith("user code was not run: this machine cannot keep it away from the "
                                           "machine's files")
    assert "SANDBOX_ALLOW_UNCONFINED_FILES=1" in raised.value.message
    assert pool.processes_started == 0


def test_an_operator_who_accepts_the_risk_gets_user_code_run_and_told_so():
    isolation = Isolation(landlock_files=False, allow_unconfined_files=True)
    with SandboxPool(size=1, limits=TEST_LIMITS, isolation=isolation) as pool:
        assert call(pool, SCORES).values == [1.0, 1.0]
        assert pool.confinement.endswith("files not confined (SANDBOX_ALLOW_UNCONFINED_FILES=1)")


def test_the_network_stays_refused_by_landlock_without_its_file_rules():
    with SandboxPool(size=1, limits=TEST_LIMITS, isolation=Isolation(
            landlock_files=False, namespaces=False, socket_filter=False, allow_network=False,
            allow_unconfined_files=True)) as pool:
        try:
            confinement = pool.confinement
        except SandboxError as exc:
            pytest.skip(f"this kernel's Landlock does not cover TCP: {exc.message}")
        assert "tcp refused" in confinement and "files not confined" in confinement


@pytest.mark.parametrize(("value", "accepted"), [("1", True), ("on", True), ("", False), ("0", False),
                                                 ("maybe", False)])
def test_only_a_clear_yes_accepts_the_risk(value, accepted):
    assert files_risk_accepted({"SANDBOX_ALLOW_UNCONFINED_FILES": value}) is accepted


def test_an_unclear_setting_is_named_in_the_refusal():
    unclear = files_refusal("none (Landlock unavailable)", {"SANDBOX_ALLOW_UNCONFINED_FILES": "maybe"})
    assert "(SANDBOX_ALLOW_UNCONFINED_FILES='maybe' is not a yes)" in unclear


def test_another_sandboxs_folder_cannot_be_read(pool):
    if not pool.confinement.startswith("landlock"):
        pytest.skip(f"no Landlock on this kernel ({pool.confinement})")
    leaves = reward_source("open('kept.txt', 'w').write('secret')\nprint(os.getcwd())\nreturn [0.0, 0.0]",
                           imports="import os")
    with SandboxPool(size=1, limits=TEST_LIMITS) as other:
        kept = call(other, leaves).output.strip() + "/kept.txt"
        with open(kept) as written:
            assert written.read() == "secret"
        with pytest.raises(SandboxError) as raised:
            call(pool, reward_source(f"return [len(open({kept!r}).read())] * 2"))
    assert "PermissionError" in raised.value.message
