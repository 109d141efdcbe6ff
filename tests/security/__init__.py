"""One test per attack on the control plane, its workers and its trainer (issue: isolation and
hardening). Each asserts the refusal (status and message) and that nothing stored changed."""
