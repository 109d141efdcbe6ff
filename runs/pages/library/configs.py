"""Training config pages."""
urlpatterns = []
