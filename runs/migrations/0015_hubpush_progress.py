from django.db import migrations, models


class Migration(migrations.Migration):
    """A Hub push's progress in files and bytes, written by the consumer doing it."""

    dependencies = [
        ('runs', '0014_sample_browse_index'),
    ]

    operations = [
        migrations.AddField(model_name='hubpush', name='files_total', field=models.PositiveIntegerField(default=0)),
        migrations.AddField(model_name='hubpush', name='files_done', field=models.PositiveIntegerField(default=0)),
        migrations.AddField(model_name='hubpush', name='bytes_total',
                            field=models.PositiveBigIntegerField(default=0)),
        migrations.AddField(model_name='hubpush', name='bytes_done', field=models.PositiveBigIntegerField(default=0)),
    ]
