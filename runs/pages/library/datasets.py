"""Dataset pages."""
urlpatterns = []
