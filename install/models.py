"""What the install's memory folder looked like when nekomem last wrote or took in each file.

The fingerprint of the file nekomem itself wrote is how its own writes are told from someone else's
edit: a file whose size, mtime or (when those moved) sha256 differ from the record was changed by
someone else and is taken in.
"""

from __future__ import annotations

from django.db import models


# Keyed by the folder's name (the character's name), not by a character: a folder whose every file was
# refused has no character, and its refusal is shown all the same.
class FolderFile(models.Model):
    """One file (or shard directory) of ``memory/<name>/`` as nekomem last wrote or took it in."""

    name = models.CharField(max_length=64)
    filename = models.CharField(max_length=128)
    size = models.BigIntegerField(default=0)
    mtime_ns = models.BigIntegerField(default=0)
    sha256 = models.CharField(max_length=64, blank=True, help_text="Empty: the file was not there.")
    exported_sha256 = models.CharField(
        max_length=64,
        blank=True,
        help_text="nekomem's export that the file on disk holds the same memory as (the migration takes "
        "the user's files as they are, so its own formatting does not rewrite them).",
    )
    stamp = models.TextField(blank=True, help_text="The layer's change stamp at the last write.")
    refused = models.TextField(blank=True, help_text="Why the file on disk was refused (empty: taken in).")
    refused_at = models.DateTimeField(null=True, blank=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [
            models.UniqueConstraint(fields=["name", "filename"], name="install_folder_file_unique")
        ]

    def __str__(self) -> str:
        return f"{self.name}/{self.filename}"


class FolderCharacter(models.Model):
    """Per character: the change stamp its files were last written at, and whether its folder vanished."""

    name = models.CharField(max_length=64, unique=True)
    stamp = models.TextField(blank=True)
    vanished_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return self.name


class FolderState(models.Model):
    """The install folder as a whole (one row, pk=1): its first-start migration and the last pass."""

    root = models.TextField(blank=True, help_text="The install folder the migration last completed for.")
    migration = models.CharField(max_length=16, blank=True, help_text="'' | running | done")
    migration_total = models.PositiveIntegerField(default=0)
    migration_done = models.PositiveIntegerField(default=0)
    migration_current = models.CharField(max_length=64, blank=True)
    migration_started_at = models.DateTimeField(null=True, blank=True)
    migration_finished_at = models.DateTimeField(null=True, blank=True)
    last_pass_at = models.DateTimeField(null=True, blank=True)

    def __str__(self) -> str:
        return f"{self.root} ({self.migration or 'not migrated'})"
