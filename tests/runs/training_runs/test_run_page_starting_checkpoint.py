"""The run page says which checkpoint a run starts from, beside its model."""


def test_the_run_page_names_the_checkpoint_the_run_starts_from(logged_in, run):
    assert 'id="run-init-checkpoint"' not in logged_in.get(f"/runs/{run.pk}/").content.decode()
    run.config["init_checkpoint"] = 42
    run.save()
    html = logged_in.get(f"/runs/{run.pk}/").content.decode()
    assert '<dd id="run-init-checkpoint">checkpoint 42 (its weights)</dd>' in html
