"""A run's samples indexed in the order they are browsed (run, step, group, id): a step's page and
the run's pages read a range of it, and the steps' list seeks through it. It replaces the
(run, step) index, a prefix of it."""
from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('runs', '0013_checkpoint_upload'),
    ]

    operations = [
        migrations.AddIndex(
            model_name='sample',
            index=models.Index(fields=['run', 'step', 'group', 'id'], name='sample_run_step_group'),
        ),
        migrations.RemoveIndex(
            model_name='sample',
            name='sample_run_step',
        ),
    ]
