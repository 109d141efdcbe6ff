from runs.pages.compare import page

urlpatterns = [*page.urlpatterns]
