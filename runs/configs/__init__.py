"""Training configs in the library: stored values, the schema's form, the API and pages."""
