"""A run placed on a Ray cluster (WORKER_RAY_ADDRESS): the whole run supervisor in one actor,
gang-placed through a placement group. Ray is only ever started in child processes of the
Celery task (driver.py, cluster_probe.py), never in the Celery parent: Ray does not survive fork.
"""
