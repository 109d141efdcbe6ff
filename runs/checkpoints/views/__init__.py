"""The checkpoint endpoints: a worker's upload, and downloads by users and workers."""
