"""The GRPO mathematics as pure tensor functions: no model, no server, testable on tiny tensors."""
