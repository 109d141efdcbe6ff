"""Reading and checking dataset sources before anything is stored."""
