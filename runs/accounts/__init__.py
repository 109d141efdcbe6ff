"""Who is asking and what they own: ownership, sessions, run tokens, code authors, quotas."""
