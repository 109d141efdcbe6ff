# One URL list per page module, so that each grows on its own.
from runs.pages.library import configs, datasets, environments, rewards

urlpatterns = [*datasets.urlpatterns, *rewards.urlpatterns, *environments.urlpatterns, *configs.urlpatterns]
