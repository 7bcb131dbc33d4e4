from django.urls import path

from nekomem.journal.history_api import ChangeListView, RollbackView, RowHistoryView, RowRestoreView, UndoView

_CHARACTER = "characters/<str:name>/"

urlpatterns = [
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
