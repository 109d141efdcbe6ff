"""The runs API: CRUD and the lifecycle verbs, and the run's own endpoints for its worker."""
