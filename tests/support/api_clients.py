"""REST clients for tests, authenticated as a given user (or anonymous)."""
from rest_framework.test import APIClient


def api_client_for(user=None) -> APIClient:
    client = APIClient()
    if user is not None:
        client.force_authenticate(user)
    return client
