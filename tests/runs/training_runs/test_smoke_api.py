def test_run_start_moves_to_queued_and_enqueues_spec(owner_api, run, django_capture_on_commit_callbacks):
    from unittest import mock

    with mock.patch("controlplane.celery.app.send_task") as send:
        with django_capture_on_commit_callbacks(execute=True):
            response = owner_api.post(f"/api/runs/{run.pk}/start/")
    assert response.status_code == 200, response.json()
    assert response.json()["status"] == "queued"
    name, = send.call_args.args
    assert name == "worker.tasks.execute_run"
    run_id, spec = send.call_args.kwargs["args"]
    assert run_id == run.pk and spec["ingest"]["token"] != "***"
    assert send.call_args.kwargs["queue"] == "default"
