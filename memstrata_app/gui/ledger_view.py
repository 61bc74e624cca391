"""Ledger tab: search, filters and a paged, sortable table with a detail pane."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import QItemSelection, Qt, QTimer
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import (
    QAbstractItemView,
    QComboBox,
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QLineEdit,
    QScrollArea,
    QSplitter,
    QStackedWidget,
    QTableView,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from .detail import DetailPane
from .ledger_model import LedgerModel
from .state import AppState
from .style import STATUS_COLORS, accent_color, fmt_time, on_resize
from .worker import Change

FILTER_STATUSES = ("active", "superseded", "quarantined", "rejected", "plain", "retracted")
ANY = "any"
SUBJECT_WIDTH = 220


class LedgerView(QWidget):
    """Everything the ledger holds, filtered; selecting a row fills the detail pane."""

    def __init__(self, state: AppState, parent: QWidget | None = None):
        super().__init__(parent)
        self._state = state
        self.model = LedgerModel(state.client, self)
        self.search = QLineEdit(placeholderText="Search sentences, subjects, values…")
        self.search.setClearButtonEnabled(True)
        self._search_timer = QTimer(self, singleShot=True, interval=250)
        self._search_timer.timeout.connect(self._apply_search)
        self.search.textChanged.connect(lambda _: self._search_timer.start())
        self.search.returnPressed.connect(self._apply_search)
        self.search.setMinimumWidth(160)
        self.status_buttons: dict[str, QToolButton] = {}
        filters = QHBoxLayout()  # search and pickers; the status toggles on a row of their own
        filters.addWidget(self.search, 3)
        toggles = QHBoxLayout()
        toggles.setSpacing(4)
        show = QLabel("Show:")
        toggles.addWidget(show)
        for name in FILTER_STATUSES:
            b = QToolButton(text=name, checkable=True)
            b.setObjectName(f"status_{name}")
            b.setToolTip(f"Show {name} rows (none checked: all)")
            b.setStyleSheet(f"QToolButton:checked {{ background: {STATUS_COLORS[name]};"
                            " color: white; border-radius: 3px; }")
            b.toggled.connect(self._apply_statuses)
            self.status_buttons[name] = b
            toggles.addWidget(b)
        toggles.addStretch(1)
        self.source = self._combo("Source")
        self.relation = self._combo("Relation")
        for text, combo in (("S&ource:", self.source), ("&Relation:", self.relation)):
            label = QLabel(text)
            label.setBuddy(combo)
            filters.addWidget(label)
            filters.addWidget(combo, 1)
        self.count = QLabel()
        self.count.setObjectName("ledger_count")
        self.as_of_label = QLabel()
        self.as_of_label.setObjectName("ledger_as_of")
        self.as_of_label.setWordWrap(True)
        self.empty_hint = QLabel()
        self.empty_hint.setObjectName("ledger_empty_hint")
        self.empty_hint.setWordWrap(True)
        self.empty_hint.setAlignment(Qt.AlignmentFlag.AlignCenter)
        self.empty_hint.setTextFormat(Qt.TextFormat.RichText)
        self.empty_hint.setOpenExternalLinks(False)
        self.empty_hint.setTextInteractionFlags(  # Tab reaches its links, Enter follows one
            Qt.TextInteractionFlag.LinksAccessibleByMouse
            | Qt.TextInteractionFlag.LinksAccessibleByKeyboard)
        self.empty_hint.linkActivated.connect(self._on_hint_link)
        self.empty_hint.setContentsMargins(24, 24, 24, 24)

        self.table = QTableView()
        self.table.setModel(self.model)
        self.table.setSelectionBehavior(QAbstractItemView.SelectionBehavior.SelectRows)
        self.table.setSelectionMode(QAbstractItemView.SelectionMode.SingleSelection)
        self.table.setAlternatingRowColors(True)
        self.table.setSortingEnabled(True)
        self.table.sortByColumn(0, Qt.SortOrder.DescendingOrder)
        self.table.verticalHeader().hide()
        self.table.verticalHeader().setDefaultSectionSize(22)
        self.table.setWordWrap(False)
        self.table.setTabKeyNavigation(False)  # Tab leaves the table; the arrows move in it
        header = self.table.horizontalHeader()
        header.setSectionResizeMode(4, QHeaderView.ResizeMode.Stretch)
        for col, width in ((0, 52), (1, 90), (2, SUBJECT_WIDTH), (3, 90), (5, 120), (6, 120),
                           (7, 120), (8, 70), (9, 50)):
            self.table.setColumnWidth(col, width)
        header.sortIndicatorChanged.connect(self._on_sort_indicator)
        on_resize(self.table.viewport(), self._fit_columns)
        self._sort = (0, Qt.SortOrder.DescendingOrder)
        self.table.selectionModel().selectionChanged.connect(self._on_selection)
        self.table.doubleClicked.connect(self._open_timeline)
        self.detail = DetailPane(state)
        self.detail.chain_row_picked.connect(self.select_id)

        left = QWidget()
        lv = QVBoxLayout(left)
        lv.setContentsMargins(0, 0, 0, 0)
        lv.addLayout(filters)
        lv.addLayout(toggles)
        self.stack = QStackedWidget()
        self.stack.addWidget(self.table)
        self.stack.addWidget(self.empty_hint)
        lv.addWidget(self.stack, 1)
        foot = QHBoxLayout()
        foot.addWidget(self.count)
        foot.addStretch(1)
        foot.addWidget(self.as_of_label)
        lv.addLayout(foot)
        split = QSplitter()
        split.setObjectName("ledger_split")
        split.addWidget(left)
        scroll = QScrollArea()  # a short window scrolls the detail pane instead of crushing it
        scroll.setWidget(self.detail)
        scroll.setWidgetResizable(True)
        scroll.setFrameShape(QScrollArea.Shape.NoFrame)
        scroll.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        split.addWidget(scroll)
        split.setStretchFactor(0, 3)
        split.setStretchFactor(1, 1)
        split.setSizes([1000, 420])
        left.setMinimumWidth(300)
        # never narrower than the pane's own minimum: it would be clipped, not wrapped
        scroll.setMinimumWidth(self.detail.body.minimumSizeHint().width() + 24
                               + scroll.verticalScrollBar().sizeHint().width() + 4)
        self.detail_scroll = scroll
        self.split = split
        layout = QVBoxLayout(self)
        layout.setContentsMargins(6, 6, 6, 6)
        layout.addWidget(split)
        self.model.loaded.connect(self._apply_spans)
        self.model.modelReset.connect(self._apply_spans)

        self.model.total_changed.connect(self._on_total)
        self.model.modelReset.connect(lambda: self.detail.show_assertion(None))
        self.model.loaded.connect(self._reselect)
        state.as_of_changed.connect(self._on_as_of)
        state.known_at_changed.connect(self._on_as_of)
        state.row_picked.connect(self.select_id)
        state.space_changed.connect(self._on_space)
        state.client.changed.connect(self._on_changed)
        self._want_id: int | None = None

    def focus_chain(self) -> list[QWidget]:
        """Its controls in Tab order: search, pickers, status toggles, the first-run hint's
        links, the table, then the detail pane."""
        return [self.search, self.source, self.relation,
                *self.status_buttons.values(), self.empty_hint, self.table,
                *self.detail.focus_chain()]

    def _combo(self, what: str) -> QComboBox:
        c = QComboBox()
        c.setObjectName(what.lower())
        c.setEditable(True)
        c.addItem(ANY)
        c.setMinimumContentsLength(8)
        c.setToolTip(f"Only rows whose {what.lower()} is this (any: all)")
        c.currentTextChanged.connect(self._apply_combos)
        return c

    def start(self) -> None:
        """First load, once the ledger is open."""
        from memstrata_app.engine import LedgerFilter

        self.model._known_at = self._state.known_at
        self.model.set_filter(LedgerFilter(as_of=self._state.valid_at, space=self._state.space))
        self.refresh_choices()

    def refresh_choices(self) -> None:
        """Fill the source and relation pickers from what the ledger holds."""

        def choices(e: Any) -> tuple[list[str], list[str]]:
            st = e.stats()
            sources = sorted(st.get("sources", {}) or [])
            relations = sorted(st.get("relations", {}) or e.vocabulary().keys())
            return sources, relations

        self._state.client.call("ledger choices", choices, self._fill_choices,
                                failure=lambda _e: None)

    def _fill_choices(self, result: tuple[list[str], list[str]]) -> None:
        for combo, items in zip((self.source, self.relation), result, strict=True):
            current = combo.currentText()
            combo.blockSignals(True)
            combo.clear()
            combo.addItem(ANY)
            combo.addItems([str(i) for i in items])
            combo.setCurrentText(current)
            combo.blockSignals(False)

    # --- filters ------------------------------------------------------------------------------
    def _apply_search(self) -> None:
        self._search_timer.stop()
        text = self.search.text().strip()
        self.model.update_filter(search=text or None)

    def _apply_statuses(self) -> None:
        from memstrata_app.engine import Status

        chosen = tuple(Status(n) for n, b in self.status_buttons.items() if b.isChecked())
        self.model.update_filter(statuses=chosen)

    def _apply_combos(self) -> None:
        src, rel = self.source.currentText().strip(), self.relation.currentText().strip()
        self.model.update_filter(source=None if src in ("", ANY) else src,
                                 relation=None if rel in ("", ANY) else rel)

    def _on_as_of(self, _t: Any = None) -> None:
        valid, known = self._state.valid_at, self._state.known_at
        self.as_of_label.setStyleSheet(f"color: {accent_color().name()}; font-weight: 600;")
        if known is not None:
            self.as_of_label.setText(f"Showing the ledger as known at {fmt_time(known)}: rows "
                                     "recorded by then, with the status they had then")
        else:
            self.as_of_label.setText(f"Showing rows valid at {fmt_time(valid)} (status column: "
                                     "as of today)" if valid else "")
        self.model._known_at = known  # one reload for both changes
        self.model.update_filter(as_of=valid)

    def _on_space(self, name: str | None) -> None:
        self.model.update_filter(space=name)

    def _on_sort_indicator(self, column: int, order: Qt.SortOrder) -> None:
        if LedgerModel.sortable(column):
            self._sort = (column, order)
            return
        header = self.table.horizontalHeader()
        header.blockSignals(True)
        header.setSortIndicator(*self._sort)
        header.blockSignals(False)

    def _on_total(self, n: int) -> None:
        self.count.setText(f"{n:,} row{'s' if n != 1 else ''}")
        self._show_empty(n == 0)

    def _filtered(self) -> bool:
        f = self.model.filter
        return self.model.known_at is not None or (f is not None and any(
            getattr(f, k, None) for k in ("search", "statuses", "source", "relation", "as_of")))

    def _show_empty(self, empty: bool) -> None:
        """An empty ledger says how to add facts; an empty filter says how to widen it."""
        # the first run (nothing at all to select): the hint gets the width, no empty pane
        self.detail_scroll.setVisible(not empty or self._filtered())
        if not empty:
            self.stack.setCurrentWidget(self.table)
            return
        self._render_hint()
        self.stack.setCurrentWidget(self.empty_hint)

    def _render_hint(self) -> None:
        """The hint's text, its links in the theme's link colour (re-rendered on a theme change:
        rich text keeps the colour it was laid out with)."""
        link = f"style='color:{self.palette().color(QPalette.ColorRole.Link).name()}'"
        if self._filtered():
            text = ("<p style='font-size:15px'><b>No rows match.</b></p>"
                    "<p>Clear the search, uncheck the status toggles, set Source and Relation to "
                    "“any”, or move the as-of bar to now.</p>"
                    f"<p><a href='clear' {link}>Clear all filters</a></p>")
        else:
            space = self._state.space
            where = f" in the space <b>{space}</b>" if space else ""
            text = (f"<p style='font-size:15px'><b>No facts yet{where}.</b></p>"
                    f"<p>Tell MemStrata something in the <a href='ingest' {link}>Ingest</a> tab "
                    "(Ctrl+5), for example “The api-gateway listens on port 8443.”, "
                    f"import a file of statements with <a href='import' {link}>File → Import "
                    "statements…</a> (Ctrl+I), or point a coding tool at the local endpoint "
                    f"(<a href='connect' {link}>Memory → Connect a tool…</a>): what you tell "
                    "it in chat lands here.</p>")
        self.empty_hint.setText(text)

    def changeEvent(self, event: Any) -> None:
        from PySide6.QtCore import QEvent

        super().changeEvent(event)
        if (event.type() in (QEvent.Type.PaletteChange, QEvent.Type.ApplicationPaletteChange)
                and hasattr(self, "detail_scroll")):  # built: the model and the hint exist
            self._render_hint()

    def _on_hint_link(self, link: str) -> None:
        if link == "clear":
            self.search.clear()
            for b in self.status_buttons.values():
                b.setChecked(False)
            self.source.setCurrentText(ANY)
            self.relation.setCurrentText(ANY)
            self._apply_search()
            asof = getattr(self.window(), "asof", None)
            if asof is not None:
                asof.go_now()
        elif link == "ingest":
            self._state.show_view.emit("ingest")
        elif link == "import":
            win = self.window()
            if hasattr(win, "import_statements"):
                win.import_statements()
        elif link == "connect":
            win = self.window()
            if hasattr(win, "connect_tool"):
                win.connect_tool()

    def _apply_spans(self) -> None:
        """A plain fact (no key) reads across the subject, relation and value columns."""
        self.table.clearSpans()
        for row in range(self.model.rowCount()):
            a = self.model.assertion(row)
            if a is not None and not a.subject:
                self.table.setSpan(row, 2, 1, 3)

    def resizeEvent(self, event: Any) -> None:
        super().resizeEvent(event)
        self._fit_columns()
        side = max(24, (self.width() - 720) // 2)  # a readable measure, centred
        self.empty_hint.setContentsMargins(side, 24, side, 24)

    def _fit_columns(self) -> None:
        """Narrow table: drop the columns the detail pane repeats, so none runs off screen."""
        w = self.table.viewport().width()
        for col, min_width in ((8, 900), (7, 800), (6, 700), (9, 620), (5, 560), (0, 480)):
            self.table.setColumnHidden(col, w < min_width)
        # the subject gives way before the value column is squeezed below ~160 px
        others = sum(self.table.columnWidth(c) for c in range(self.model.columnCount())
                     if c not in (2, 4) and not self.table.isColumnHidden(c))
        self.table.setColumnWidth(2, max(90, min(SUBJECT_WIDTH, w - others - 160)))

    def _on_changed(self, change: Change) -> None:
        if change.touches("ledger", "review"):
            sel = self.selected()
            if sel is not None:  # else keep the row a reload still in flight is to reselect
                self._want_id = int(sel.id)
            self.model.reload()
            self.refresh_choices()

    # --- selection ----------------------------------------------------------------------------
    def selected(self) -> Any:
        rows = self.table.selectionModel().selectedRows()
        return self.model.assertion(rows[0].row()) if rows else None

    def _on_selection(self, _new: QItemSelection, _old: QItemSelection) -> None:
        a = self.selected()
        if a is not None:  # a row picked now wins over one a reload was to reselect
            self._want_id = None
        self.detail.show_assertion(a)

    def select_row(self, row: int) -> None:
        self.table.selectRow(row)
        self.table.scrollTo(self.model.index(row, 0))

    def select_id(self, assertion_id: int) -> None:
        """Select the row with this id if loaded, else just show it in the detail pane."""
        row = self.model.row_of(assertion_id)
        if row >= 0:
            self.select_row(row)
        else:
            self._state.client.call("get", lambda e: e.get(assertion_id),
                                    self.detail.show_assertion)

    def _reselect(self) -> None:
        if self._want_id is not None:
            row = self.model.row_of(self._want_id)
            if row >= 0:
                self._want_id = None
                self.select_row(row)

    def _open_timeline(self) -> None:
        a = self.selected()
        if a is not None and a.subject and a.relation:
            self._state.pick_key(a.subject, a.relation, getattr(a, "space", None),
                                 getattr(a, "context", None))

    def shutdown(self) -> None:
        self._search_timer.stop()
