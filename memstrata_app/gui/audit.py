"""Audit tab: why did the assistant see this? The endpoint's log of served requests, and for
one request the facts it injected and the stale facts it left out, with the settings in force."""

from __future__ import annotations

import html
from typing import Any

from PySide6.QtCore import QModelIndex, Qt, Signal
from PySide6.QtWidgets import (
    QAbstractItemView,
    QHeaderView,
    QLabel,
    QTableWidget,
    QTableWidgetItem,
    QVBoxLayout,
    QWidget,
)

from .state import AppState
from .style import heading, muted, on_resize
from .worker import Change, Operation

ENTRY_HEADERS = ("Time", "API", "Model", "Space", "Tool", "Injected", "Left out")
INJECTED_HEADERS = ("Score", "Sentence", "Key", "ID")
FILTERED_HEADERS = ("Score", "Sentence", "Key", "Retired by")
ID_ROLE = Qt.ItemDataRole.UserRole + 7
ERASED = "[erased]"
LIMIT = 500


def fact_text(f: dict[str, Any]) -> str:
    """A logged fact's sentence, or "[erased]" once it was redacted or purged."""
    return ERASED if f.get("erased") or not f.get("text") else str(f["text"])


def fact_key(f: dict[str, Any]) -> str:
    """The key as people read it (`auth service · port = 7001`), from the stored key."""
    key = f.get("key")
    if not key:
        return "(plain fact)" if not f.get("erased") else ""
    key = str(key)
    space, _, key = key.rpartition("//")  # a project's key: "space//subject::relation@ctx"
    key, _, context = key.partition("@")
    parts = [p.replace("_", " ") for p in (*key.split("::"), context) if p]
    words = " · ".join(parts) + (f" ({space})" if space else "")
    obj = f.get("object")
    return f"{words} = {obj}" if obj else words


def entry_name(e: dict[str, Any]) -> str:
    """A request log entry's name, "audit 12" (as `memstrata audit 12` shows it): "#12" is
    always a fact."""
    return f"audit {e.get('id')}"


def when(t: Any) -> str:
    """A request's time to the second, local."""
    return t.astimezone().strftime("%Y-%m-%d %H:%M:%S") if t is not None else "—"


def settings_words(settings: dict[str, Any]) -> str:
    if not settings:
        return "(none recorded)"
    return " · ".join(f"{html.escape(str(k))} = <b>{html.escape(str(v))}</b>"
                      for k, v in sorted(settings.items()))


def _table(headers: tuple[str, ...], name: str) -> QTableWidget:
    t = QTableWidget(0, len(headers))
    t.setObjectName(name)
    t.setHorizontalHeaderLabels(headers)
    t.verticalHeader().hide()
    t.verticalHeader().setDefaultSectionSize(22)
    t.setEditTriggers(QAbstractItemView.EditTrigger.NoEditTriggers)
    t.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
    t.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
    t.setAlternatingRowColors(True)
    t.setWordWrap(False)
    t.setTabKeyNavigation(False)  # Tab leaves the table; the arrows move in it
    t.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
    return t


class AuditView(QWidget):
    """Lists `engine.injections()`; the selected request's facts come from the same entry.
    Enter (or a double-click) on a fact selects it in the ledger."""

    loaded = Signal(int)  # entries listed
    shown = Signal(object)  # the entry shown in detail (dict), or None

    def __init__(self, state: AppState, parent: QWidget | None = None):
        super().__init__(parent)
        self._state = state
        self.entries: list[dict[str, Any]] = []
        self._gen = 0
        self.title = heading("Why did the assistant see this? Requests the endpoint served, "
                             "newest first")
        self.title.setWordWrap(True)
        self.table = _table(ENTRY_HEADERS, "audit_entries")
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(2, QHeaderView.ResizeMode.Stretch)
        for col, w in ((0, 150), (1, 90), (3, 100), (4, 150), (5, 70), (6, 70)):
            self.table.setColumnWidth(col, w)
        self.table.itemSelectionChanged.connect(self._on_select)
        self.empty = QLabel("<p style='font-size:15px'><b>No requests logged yet.</b></p>"
                            "<p>When a coding tool talks through the local endpoint, every "
                            "request it serves is logged here: which facts it injected, which "
                            "stale facts it left out and which row retired them, and the "
                            "settings in force. The log keeps row ids and a hash of the "
                            "question, never text (Settings → <i>Keep the request log</i>)."
                            "</p>")
        self.empty.setObjectName("audit_empty")
        self.empty.setWordWrap(True)
        self.empty.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty.setContentsMargins(24, 24, 24, 24)
        self.injected = _table(INJECTED_HEADERS, "audit_injected")
        self.filtered = _table(FILTERED_HEADERS, "audit_filtered")
        for t in (self.injected, self.filtered):
            t.horizontalHeader().setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
            t.setColumnWidth(0, 60)
            t.setColumnWidth(2, 260)
            t.setColumnWidth(3, 120 if t is self.filtered else 70)
            t.activated.connect(lambda index, t=t: self._open_fact(t, index))
            t.setToolTip("Enter (or a double-click) shows this row in the ledger")
            on_resize(t.viewport(), lambda t=t: self._fit(t))
        on_resize(self.table.viewport(), self._fit_entries)
        self.entry_title = heading("")
        self.entry_title.setWordWrap(True)
        self.settings = QLabel()
        self.settings.setObjectName("audit_settings")
        self.settings.setWordWrap(True)
        self.settings.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.note = muted("Injected: what the request carried, with its retrieval score. Left "
                          "out: facts as close to the question that were no longer valid, and "
                          "the row that retired each. Rows are shown as the ledger holds them "
                          "now: an erased one reads [erased].")
        detail = QWidget()
        dv = QVBoxLayout(detail)
        dv.setContentsMargins(0, 0, 0, 0)
        dv.addWidget(self.entry_title)
        dv.addWidget(heading("Injected into the request"))
        dv.addWidget(self.injected)
        dv.addWidget(heading("Left out: no longer valid"))
        dv.addWidget(self.filtered)
        dv.addWidget(self.settings)
        dv.addWidget(self.note)
        self.detail = detail
        self.body = QWidget()  # the log on top takes the spare height; the request below fits
        bv = QVBoxLayout(self.body)
        bv.setContentsMargins(0, 0, 0, 0)
        bv.addWidget(self.title)
        bv.addWidget(self.table, 1)
        bv.addWidget(detail)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(self.empty, 1)
        layout.addWidget(self.body, 1)
        state.client.changed.connect(self._on_changed)
        self._show_entries([])

    def focus_chain(self) -> list[QWidget]:
        """Its controls in Tab order: the requests, the injected facts, the facts left out."""
        return [self.table, self.injected, self.filtered]

    # --- loading ------------------------------------------------------------------------------
    def reload(self) -> None:
        if self._state.client.engine is None:
            return
        self._gen += 1
        gen = self._gen
        self._state.client.submit(Operation(
            "audit log", lambda e: e.injections(limit=LIMIT), lambda r: self._on_entries(gen, r),
            failure=lambda _e: None))

    def showEvent(self, event: Any) -> None:
        super().showEvent(event)
        self.reload()  # the endpoint logs from its own threads: fresh whenever opened

    def _on_changed(self, change: Change) -> None:
        if change.touches("ledger", "review") and self.isVisible():
            self.reload()

    def _on_entries(self, gen: int, entries: list[dict[str, Any]]) -> None:
        if gen != self._gen:
            return
        self._show_entries(list(entries))
        self.loaded.emit(len(self.entries))

    def _show_entries(self, entries: list[dict[str, Any]]) -> None:
        keep = self.current()
        keep_id = keep["id"] if keep else None
        self.entries = entries
        self.table.blockSignals(True)
        self.table.setRowCount(len(entries))
        for i, e in enumerate(entries):
            cells = (when(e.get("at")), e.get("api") or "", e.get("model") or "",
                     e.get("space") or "global", e.get("tool") or "",
                     str(len(e.get("injected") or [])), str(len(e.get("filtered") or [])))
            for j, c in enumerate(cells):
                item = QTableWidgetItem(c)
                if j >= 5:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight
                                              | Qt.AlignmentFlag.AlignVCenter)
                item.setToolTip(f"{entry_name(e)} · {c}")
                self.table.setItem(i, j, item)
        self.table.blockSignals(False)
        self.empty.setVisible(not entries)
        self.body.setVisible(bool(entries))
        if entries:
            row = next((i for i, e in enumerate(entries) if e.get("id") == keep_id), 0)
            self.table.selectRow(row)
            self._on_select()
        else:
            self.show_entry(None)

    # --- one entry ----------------------------------------------------------------------------
    def current(self) -> dict[str, Any] | None:
        sel = self.table.selectionModel().selectedRows()
        r = sel[0].row() if sel else -1
        return self.entries[r] if 0 <= r < len(self.entries) else None

    def select_entry(self, entry_id: int) -> None:
        for i, e in enumerate(self.entries):
            if e.get("id") == entry_id:
                self.table.selectRow(i)
                return

    def _on_select(self) -> None:
        self.show_entry(self.current())

    def show_entry(self, e: dict[str, Any] | None) -> None:
        for t in (self.injected, self.filtered):
            t.setRowCount(0)
        if e is None:
            self.entry_title.setText("")
            self.settings.setText("")
            self.shown.emit(None)
            return
        who = " · ".join(str(x) for x in (e.get("api"), e.get("model"), e.get("tool")) if x)
        self.entry_title.setText(f"{entry_name(e)}: the request at {when(e.get('at'))}"
                                 f" · {html.escape(who)} · space {e.get('space') or 'global'}")
        self.entry_title.setToolTip(f"`memstrata audit {e.get('id')}` prints this entry; "
                                    "#N is always a fact (a ledger row)")
        self._fill(self.injected, e.get("injected") or [], retired=False)
        self._fill(self.filtered, e.get("filtered") or [], retired=True)
        self.settings.setText(f"<b>Settings in force:</b> {settings_words(e.get('settings') or {})}"
                              f" · query hash {html.escape(str(e.get('query_sha') or ''))}")
        self.shown.emit(e)

    def _fill(self, table: QTableWidget, facts: list[dict[str, Any]], retired: bool) -> None:
        table.setRowCount(len(facts))
        rows = max(1, min(6, len(facts)))  # as tall as its rows: no tall empty box
        table.setFixedHeight(table.horizontalHeader().sizeHint().height() + rows * 22
                             + 2 * table.frameWidth() + 2)
        for i, f in enumerate(facts):
            by = f.get("retired_by")
            judged = " (update judge)" if f.get("by_judge") else ""
            last = ((f"retired by #{by}{judged}" if by is not None else "—") if retired
                    else f"#{f['id']}")
            text = fact_text(f)
            cells = (f"{float(f.get('score') or 0):.3f}", text, fact_key(f), last)
            for j, c in enumerate(cells):
                item = QTableWidgetItem(c)
                item.setData(ID_ROLE, int(f["id"]))
                tip = f"#{f['id']} ({f.get('status') or 'erased'}) {text}"
                if retired and by is not None:
                    tip += f"\nRetired by #{by}: Enter on this cell's row shows the fact"
                item.setToolTip(tip)
                if j == 0:
                    item.setTextAlignment(Qt.AlignmentFlag.AlignRight
                                              | Qt.AlignmentFlag.AlignVCenter)
                if text == ERASED and j == 1:
                    font = item.font()
                    font.setItalic(True)
                    item.setFont(font)
                table.setItem(i, j, item)

    def fact_ids(self, table: QTableWidget) -> list[int]:
        return [int(table.item(r, 0).data(ID_ROLE)) for r in range(table.rowCount())]

    def _open_fact(self, table: QTableWidget, index: QModelIndex) -> None:
        item = table.item(index.row(), 0)
        if item is not None:
            self._state.pick_row(int(item.data(ID_ROLE)))

    # --- sizing -------------------------------------------------------------------------------
    def resizeEvent(self, event: Any) -> None:
        super().resizeEvent(event)
        self.note.setVisible(self.height() >= 560)  # a short window: the log gets the room
        side = max(24, (self.width() - 720) // 2)
        self.empty.setContentsMargins(side, 24, side, 24)

    def _fit(self, t: QTableWidget) -> None:
        w = t.viewport().width()
        t.setColumnWidth(2, max(120, min(300, int(w * 0.3))))

    def _fit_entries(self) -> None:
        w = self.table.viewport().width()
        self.table.setColumnHidden(4, w < 640)  # the tool (user agent): in the detail title
        self.table.setColumnHidden(3, w < 520)
