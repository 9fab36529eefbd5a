"""The front end: the strict loader, schema validation, variant overlays, the packaged schemas."""
