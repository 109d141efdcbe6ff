"""The permission to author reward code, and a "Reward authors" group that holds it.

Permissions are normally created after all migrations run; the group needs the row now,
so it is created here (the later automatic pass finds it and leaves it alone).
"""
from django.db import migrations

CODENAME = "author_reward_code"
NAME = "Can write and change reward functions made of Python code"
GROUP = "Reward authors"


def create_group(apps, schema_editor):
    ContentType = apps.get_model("contenttypes", "ContentType")
    Permission = apps.get_model("auth", "Permission")
    Group = apps.get_model("auth", "Group")
    content_type, _ = ContentType.objects.get_or_create(app_label="runs", model="rewardfunction")
    permission, _ = Permission.objects.get_or_create(content_type=content_type, codename=CODENAME,
                                                     defaults={"name": NAME})
    group, _ = Group.objects.get_or_create(name=GROUP)
    group.permissions.add(permission)


def remove_group(apps, schema_editor):
    apps.get_model("auth", "Group").objects.filter(name=GROUP).delete()


class Migration(migrations.Migration):
    dependencies = [
        ("runs", "0001_initial"),
        ("auth", "0012_alter_user_first_name_max_length"),
        ("contenttypes", "0002_remove_content_type_name"),
    ]

    operations = [
        migrations.AlterModelOptions(
            name="rewardfunction",
            options={"ordering": ["-created_at"], "permissions": [(CODENAME, NAME)]},
        ),
        migrations.RunPython(create_group, remove_group),
    ]
