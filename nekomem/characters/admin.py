from django.contrib import admin

from nekomem.characters.models import Character


@admin.register(Character)
class CharacterAdmin(admin.ModelAdmin):
    list_display = ("name", "master_name", "language", "last_activity_at", "review_clean", "created_at")
    search_fields = ("name", "master_name")
    list_filter = ("language", "review_clean")
    readonly_fields = ("created_at", "last_activity_at")
    fieldsets = (
        (None, {"fields": ("name", "language")}),
        ("Character card", {"fields": ("master_name", "master_nicknames", "card")}),
        ("State", {"fields": ("review_clean", "last_activity_at", "created_at")}),
    )
