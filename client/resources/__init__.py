"""The API's calls by resource, each a mixin of client.api.ControlPlane over one Session."""
