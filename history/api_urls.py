from django.urls import path

from history.api import ChangeListView, RollbackView, RowHistoryView, RowRestoreView, UndoView

_CHARACTER = "characters/<str:name>/"

_ROW_ROUTES = (
    # A persona correction (a queued pair) is under persona; the recent window's memo is one per character.
    (_CHARACTER + "persona/corrections/<str:row_id>/", {"layer": "corrections"}, "correction"),
    (_CHARACTER + "recent/memo/", {"layer": "recent_memo", "row_id": "memo"}, "memo"),
)

urlpatterns = [
    *(
        route
        for prefix, kwargs, name in _ROW_ROUTES
        for route in (
            path(prefix + "history/", RowHistoryView.as_view(), kwargs, name=f"api-{name}-history"),
            path(
                prefix + "history/restore/",
                RowRestoreView.as_view(),
                kwargs,
                name=f"api-{name}-history-restore",
            ),
        )
    ),
    path(_CHARACTER + "changes/", ChangeListView.as_view(), name="api-changes"),
    path(_CHARACTER + "changes/undo/", UndoView.as_view(), name="api-changes-undo"),
    path(_CHARACTER + "rollback/", RollbackView.as_view(), name="api-rollback"),
    path(_CHARACTER + "<str:layer>/<str:row_id>/history/", RowHistoryView.as_view(), name="api-row-history"),
    path(
        _CHARACTER + "<str:layer>/<str:row_id>/history/restore/",
        RowRestoreView.as_view(),
        name="api-row-history-restore",
    ),
]
