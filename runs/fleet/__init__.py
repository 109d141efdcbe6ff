"""The fleet, seen from the control plane: which Celery workers are live, the pools (queues) they
consume, their devices and the runs they are busy with, asked of the workers themselves through
Celery's broadcast inspection (worker/inspection.py). The control plane shows this and checks a new
run against it; it schedules nothing: Celery's queues decide which worker takes a run."""
