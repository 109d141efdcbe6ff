"""The trainer as processes: their groups and lifetime, the memory allocator they start with,
files only their owner reads, their output as log lines, and the child that runs built-ins for
the web server's dry runs."""
