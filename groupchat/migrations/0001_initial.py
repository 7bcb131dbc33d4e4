"""Group chat's three models move here from recall in state only: their tables, created by recall's
migrations 0002 and 0003, keep their names (``db_table``), so an existing database changes nothing."""

import django.db.models.deletion
from django.db import migrations, models


class Migration(migrations.Migration):

    initial = True

    dependencies = [
        ("characters", "0009_character_release"),
        # The tables exist in their final shape once recall's 0003 ran.
        ("recall", "0003_scoped_write_key_trust"),
    ]

    operations = [
        migrations.SeparateDatabaseAndState(
            database_operations=[],
            state_operations=[
                migrations.CreateModel(
                    name='ScopedWriteKey',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('key', models.CharField(max_length=128)),
                        ('fingerprint', models.CharField(max_length=64)),
                        ('subject_keys', models.TextField(blank=True, default='', help_text="The request's subject keys, one per line with a newline on each side.")),
                        ('status', models.CharField(choices=[('pending', 'Pending'), ('done', 'Done')], default='pending', max_length=8)),
                        ('generated', models.JSONField(blank=True, help_text='Per segment: the extracted facts.', null=True)),
                        ('trust', models.JSONField(blank=True, help_text='Per segment: the trust write journalled with the facts; replayed while pending.', null=True)),
                        ('answer', models.JSONField(blank=True, null=True)),
                        ('created_at', models.DateTimeField()),
                        ('character', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='scoped_write_keys', to='characters.character')),
                    ],
                    options={
                        'db_table': 'recall_scopedwritekey',
                        'constraints': [models.UniqueConstraint(fields=('character', 'key'), name='scoped_write_key_unique')],
                    },
                ),
                migrations.CreateModel(
                    name='SubjectForgetEpoch',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('subject_key', models.CharField(max_length=600)),
                        ('epoch', models.PositiveBigIntegerField(blank=True, null=True)),
                        ('generation', models.PositiveIntegerField(default=0)),
                        ('forgotten_at', models.DateTimeField()),
                        ('character', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='subject_forget_epochs', to='characters.character')),
                    ],
                    options={
                        'db_table': 'recall_subjectforgetepoch',
                        'constraints': [models.UniqueConstraint(fields=('character', 'subject_key'), name='subject_forget_epoch_unique')],
                    },
                ),
                migrations.CreateModel(
                    name='SubjectRecord',
                    fields=[
                        ('id', models.BigAutoField(auto_created=True, primary_key=True, serialize=False, verbose_name='ID')),
                        ('subject_key', models.CharField(max_length=600)),
                        ('subject_kind', models.CharField(max_length=32)),
                        ('subject_id', models.CharField(max_length=256)),
                        ('scope', models.CharField(max_length=256)),
                        ('display_name', models.CharField(blank=True, default='', max_length=64)),
                        ('prompt_locale', models.CharField(blank=True, default='', max_length=16)),
                        ('last_write_at', models.DateTimeField()),
                        ('character', models.ForeignKey(on_delete=django.db.models.deletion.CASCADE, related_name='subject_records', to='characters.character')),
                    ],
                    options={
                        'db_table': 'recall_subjectrecord',
                        'constraints': [models.UniqueConstraint(fields=('character', 'subject_key', 'scope'), name='subject_record_unique')],
                    },
                ),
            ],
        ),
    ]
