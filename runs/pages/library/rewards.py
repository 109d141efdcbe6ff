"""Reward function pages."""
urlpatterns = []
