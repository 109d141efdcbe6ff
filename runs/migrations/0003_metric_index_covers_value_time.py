"""The (run, name, step) index also carries value and time on PostgreSQL (other databases
ignore INCLUDE): a comparison's picked points become index-only lookups."""

from django.db import migrations, models


class Migration(migrations.Migration):

    dependencies = [
        ('runs', '0002_author_reward_code'),
    ]

    operations = [
        migrations.RemoveIndex(
            model_name='metricpoint',
            name='metric_run_name_step',
        ),
        migrations.AddIndex(
            model_name='metricpoint',
            index=models.Index(fields=['run', 'name', 'step'], include=('value', 'time'), name='metric_run_name_step'),
        ),
    ]
