"""HTTP plumbing every domain's API and pages share: errors as JSON, bounded bodies, pages, downloads."""
