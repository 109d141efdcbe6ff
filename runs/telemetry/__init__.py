"""What runs report and how it is read back: metric series, samples, log lines, liveness."""
