"""The ledger's detail pane: one row's sentence, provenance, validity and its chain."""

from __future__ import annotations

import html
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QAction, QActionGroup
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QFormLayout,
    QGridLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QMenu,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from memstrata_app.engine.ledger.keys import key_label
from memstrata_app.understood import method_label

from .state import AppState
from .style import (
    fmt_time,
    fmt_time_long,
    heading,
    muted,
    status_text,
    themed_status_color,
)
from .worker import Operation

CHAIN_ID_ROLE = Qt.ItemDataRole.UserRole + 2
LABELS = ("normal", "sensitive", "restricted")
LABEL_HELP = {"normal": "served as usual",
              "sensitive": "served, and marked so it can be narrowed later",
              "restricted": "never injected, recalled or retrieved; listed only"}
# the governance fields, shown only when the row has them
GOVERNED = ("Authority", "Author", "Label", "Reviewed", "Expires", "Hold")


class ReasonDialog(QDialog):
    """Asks for a reason (required) and, optionally, a value: Contest… and Hold…"""

    def __init__(self, title: str, intro: str, parent: QWidget | None = None,
                 value_label: str | None = None, ok_text: str = "OK"):
        super().__init__(parent)
        self.setWindowTitle(title)
        self.setObjectName("reason_dialog")
        text = QLabel(intro)
        text.setWordWrap(True)
        self.reason = QLineEdit()
        self.reason.setObjectName("reason")
        self.value = QLineEdit()
        self.value.setObjectName("right_value")
        form = QFormLayout()
        reason_label = QLabel("&Reason:")
        reason_label.setBuddy(self.reason)
        form.addRow(reason_label, self.reason)
        if value_label is not None:
            value_caption = QLabel(value_label)
            value_caption.setBuddy(self.value)
            self.value.setPlaceholderText("optional")
            form.addRow(value_caption, self.value)
        else:
            self.value.hide()
        self.buttons = QDialogButtonBox(QDialogButtonBox.StandardButton.Ok
                                        | QDialogButtonBox.StandardButton.Cancel)
        self.ok = self.buttons.button(QDialogButtonBox.StandardButton.Ok)
        self.ok.setText(ok_text)
        self.ok.setEnabled(False)
        self.reason.textChanged.connect(lambda t: self.ok.setEnabled(bool(t.strip())))
        self.buttons.accepted.connect(self.accept)
        self.buttons.rejected.connect(self.reject)
        v = QVBoxLayout(self)
        v.addWidget(text)
        v.addLayout(form)
        v.addWidget(self.buttons)
        self.setMinimumWidth(420)

    def answers(self) -> tuple[str, str | None]:
        return self.reason.text().strip(), (self.value.text().strip() or None)


class DetailPane(QWidget):
    """Shows the selected assertion and loads its supersession chain from the worker."""

    chain_loaded = Signal(int)  # number of rows in the chain
    chain_row_picked = Signal(int)  # an assertion id from the chain
    move_asked = Signal(object)  # the MoveDialog, open
    dialog_opened = Signal(object)  # a ReasonDialog (Contest…, Hold…), open

    def __init__(self, state: AppState, parent: QWidget | None = None):
        super().__init__(parent)
        self._state = state
        self._current: Any = None
        self._gen = 0
        self.move_dialog: Any = None
        self.sentence = QLabel()
        self.sentence.setWordWrap(True)
        self.sentence.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.sentence.setStyleSheet("font-size: 15px; padding: 6px; background: palette(base);"
                                    "border: 1px solid palette(mid); border-radius: 4px;")
        self.fields: dict[str, QLabel] = {}
        form = QFormLayout()
        form.setLabelAlignment(Qt.AlignmentFlag.AlignRight)
        self.form = form
        for name in ("Status", "Space", "Key", "Value", "Valid", "Recorded", "Retired", "Source",
                     *GOVERNED, "Method", "Confidence", "Reinforced", "Superseded by",
                     "Reason"):
            label = QLabel()
            label.setWordWrap(True)
            label.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
            self.fields[name] = label
            form.addRow(name + ":", label)
        self.chain = QListWidget()
        self.chain.setObjectName("chain")
        self.chain.setWordWrap(False)  # one line per value; the full line is in its tooltip
        self.chain.setTextElideMode(Qt.TextElideMode.ElideMiddle)
        self.chain.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.chain.itemActivated.connect(self._on_chain_activated)
        self.timeline_button = QPushButton("Show in &timeline")
        self.timeline_button.clicked.connect(self._show_timeline)
        self.forget_button = QPushButton("For&get…")
        self.forget_button.clicked.connect(self._forget)
        self.purge_button = QPushButton("P&urge…")
        self.purge_button.setToolTip("Erase this sentence and its vector from the ledger file "
                                     "(irreversible); a tombstone keeps the key and interval")
        self.purge_button.clicked.connect(self._purge)
        self.move_button = QPushButton("Move to s&pace…")
        self.move_button.setObjectName("move_button")
        self.move_button.setToolTip("Move this fact, with its earlier values, to another space "
                                    "(project), or to the global space for every project")
        self.move_button.clicked.connect(self._move)
        self.contest_button = QPushButton("&Contest…")
        self.contest_button.setObjectName("contest_button")
        self.contest_button.setToolTip("Mark this current fact wrong, with a reason and "
                                       "optionally the right value (a reviewer's decision)")
        self.contest_button.clicked.connect(self._contest)
        self.label_button = QPushButton("&Label")
        self.label_button.setObjectName("label_button")
        self.label_menu = QMenu(self.label_button)
        self.label_group = QActionGroup(self)
        self.label_actions: dict[str, QAction] = {}
        for name in LABELS:
            act = QAction(f"&{name}: {LABEL_HELP[name]}", self)
            act.setCheckable(True)
            act.triggered.connect(lambda _c=False, name=name: self._set_label(name))
            self.label_group.addAction(act)
            self.label_menu.addAction(act)
            self.label_actions[name] = act
        self.label_button.setMenu(self.label_menu)
        self.label_button.setToolTip("Permission: normal, sensitive, or restricted (never "
                                     "served); every row of the sentence takes it")
        self.hold_button = QPushButton("&Hold…")
        self.hold_button.setObjectName("hold_button")
        self.hold_button.clicked.connect(self._hold)
        self.redact_button = QPushButton("R&edact…")
        self.redact_button.setObjectName("redact_button")
        self.redact_button.setToolTip("Erase the sentence, value and vector; keep the key, "
                                      "interval and place in the chain (irreversible)")
        self.redact_button.clicked.connect(self._redact)
        buttons = QGridLayout()  # two by two: fits a narrow pane
        buttons.addWidget(self.timeline_button, 0, 0)
        buttons.addWidget(self.move_button, 0, 1)
        buttons.addWidget(self.forget_button, 1, 0)
        buttons.addWidget(self.purge_button, 1, 1)
        buttons.addWidget(self.contest_button, 2, 0)
        buttons.addWidget(self.label_button, 2, 1)
        buttons.addWidget(self.hold_button, 3, 0)
        buttons.addWidget(self.redact_button, 3, 1)
        self.placeholder = muted("Select a row to see its sentence, provenance and history.")
        self.body = QWidget()  # hidden until a row is selected: no pane of empty fields
        body = QVBoxLayout(self.body)
        body.setContentsMargins(0, 0, 0, 0)
        body.addWidget(heading("Source sentence"))
        body.addWidget(self.sentence)
        body.addLayout(form)
        body.addWidget(heading("Chain (oldest first)"))
        body.addWidget(self.chain)
        body.addLayout(buttons)
        body.addStretch(1)  # the buttons follow the chain; spare room goes below them
        layout = QVBoxLayout(self)
        layout.addWidget(self.placeholder)
        layout.addWidget(self.body, 1)
        layout.addStretch(0)
        self._fit_chain()
        self.show_assertion(None)

    def focus_chain(self) -> list[QWidget]:
        """Its controls in Tab order: the chain, then the buttons row by row."""
        return [self.chain, self.timeline_button, self.move_button, self.forget_button,
                self.purge_button, self.contest_button, self.label_button, self.hold_button,
                self.redact_button]

    def show_assertion(self, a: Any) -> None:
        """Fill the pane from `a` (an Assertion, or None to clear) and load its chain."""
        self._current = a
        self._gen += 1
        self.chain.clear()
        has = a is not None
        for w in (self.timeline_button, self.forget_button):
            w.setEnabled(has and getattr(a, "subject", None) is not None)
        forgettable = has and status_text(a.status) in ("active", "plain")
        self.forget_button.setEnabled(forgettable)
        self.forget_button.setToolTip(self._forget_tip(a, forgettable))
        purged = has and a.text == "" and (a.reason or "").startswith("purged")
        self.purge_button.setEnabled(has and not purged)
        self.move_button.setEnabled(has and status_text(a.status) not in ("rejected",))
        current = has and status_text(a.status) in ("active", "plain") and a.valid_to is None
        self.contest_button.setEnabled(current)
        self.contest_button.setToolTip(
            "Mark this current fact wrong, with a reason and optionally the right value"
            if current else "Only a current fact (active, still valid) can be contested")
        held = has and bool(getattr(a, "hold", None))
        self.hold_button.setText("Release &hold" if held else "&Hold…")
        self.hold_button.setToolTip("Release the legal hold: expiry, purge and redaction "
                                    "apply again" if held else
                                    "Put the row on legal hold: no expiry, purge or redaction")
        self.hold_button.setEnabled(has)
        self.label_button.setEnabled(has and not purged)
        if has:
            self.label_actions.get(getattr(a, "label", "normal") or "normal",
                                   self.label_actions["normal"]).setChecked(True)
        self.redact_button.setEnabled(has and bool(a.text) and not held)
        if held:
            self.purge_button.setEnabled(False)
            for w in (self.purge_button, self.redact_button):
                w.setToolTip(f"Off: the row is on legal hold ({a.hold})")
        else:
            self.purge_button.setToolTip("Erase this sentence and its vector from the ledger "
                                         "file (irreversible); a tombstone keeps the key and "
                                         "interval")
            self.redact_button.setToolTip("Erase the sentence, value and vector; keep the key, "
                                          "interval and place in the chain (irreversible)")
        if self._state.read_only:
            for w in (self.forget_button, self.purge_button, self.move_button,
                      self.contest_button, self.label_button, self.hold_button,
                      self.redact_button):
                w.setEnabled(False)
                w.setToolTip("Off: the ledger is read-only")
        self.placeholder.setVisible(not has)
        self.body.setVisible(has)
        if a is None:
            self.sentence.setText("")
            for label in self.fields.values():
                label.setText("")
            return
        self.sentence.setText(a.text or "(purged: the sentence was erased)")
        color = themed_status_color(a.status).name()
        f = self.fields
        f["Status"].setText(f"<b style='color:{color}'>{status_text(a.status)}</b>  · #{int(a.id)}")
        f["Space"].setText(html.escape(getattr(a, "space", "global")))
        key = (key_label(a.subject, a.relation, getattr(a, "context", None)) if a.subject
               else "(plain fact)")
        f["Key"].setText(html.escape(key))
        f["Value"].setText(html.escape(a.object or "—"))
        f["Valid"].setText(f"{fmt_time_long(a.valid_from)} → {fmt_time_long(a.valid_to)}")
        f["Recorded"].setText(fmt_time_long(a.recorded_at))
        f["Retired"].setText(fmt_time_long(a.retired_at, "—"))
        f["Source"].setText(html.escape(a.source))
        f["Method"].setText(html.escape(method_label(a.method) or a.method))
        f["Method"].setToolTip(a.method)
        f["Confidence"].setText(f"{a.confidence:.2f}")
        f["Reinforced"].setText(f"{a.reinforced}×")
        f["Superseded by"].setText(f"#{int(a.superseded_by)}" if a.superseded_by else "—")
        f["Reason"].setText(html.escape(a.reason or "—"))
        self._show_governed(a)
        if a.subject and a.relation:
            gen, subject, relation = self._gen, a.subject, a.relation
            context, space = getattr(a, "context", None), getattr(a, "space", None)
            self._state.client.submit(Operation(
                "history", lambda e: e.history(subject, relation, context, space),
                lambda rows: self._on_chain(gen, rows)))

    def _show_governed(self, a: Any) -> None:
        """Authority, author, label, review, expiry and hold: only the ones the row has."""
        label = getattr(a, "label", "normal") or "normal"
        by, at = getattr(a, "reviewed_by", None), getattr(a, "reviewed_at", None)
        reviewed = " · ".join(x for x in (html.escape(by or ""),
                                          fmt_time_long(at, "") if at else "") if x)
        label_text = html.escape(label)
        if label != "normal":
            label_text = f"<b>{label_text}</b> ({LABEL_HELP.get(label, '')})"
        values = {
            "Authority": html.escape(getattr(a, "authority", None) or ""),
            "Author": html.escape(getattr(a, "author", None) or ""),
            "Label": label_text,
            "Reviewed": reviewed,
            "Expires": fmt_time_long(a.expires_at, "") if getattr(a, "expires_at", None)
            else "",
            "Hold": html.escape(getattr(a, "hold", None) or ""),
        }
        for name, text in values.items():
            self.fields[name].setText(text)
            self.form.setRowVisible(self.fields[name], bool(text))

    # --- governance actions -------------------------------------------------------------------
    def _ask(self, title: str, intro: str, ok_text: str, value_label: str | None,
             then: Any) -> ReasonDialog | None:
        a = self._current
        if a is None:
            return None
        dlg = ReasonDialog(title, intro, self, value_label=value_label, ok_text=ok_text)
        aid = int(a.id)
        dlg.accepted.connect(lambda: then(aid, *dlg.answers()))  # read on this thread
        dlg.finished.connect(dlg.deleteLater)
        self.reason_dialog = dlg
        dlg.open()
        self.dialog_opened.emit(dlg)
        return dlg

    def _contest(self) -> None:
        a = self._current
        if a is None:
            return
        self._ask("Contest this fact",
                  f"“{html.escape(a.text)}” stops being valid now and stays in its key's "
                  "chain with your reason. With a right value, a reviewer-stated row holds "
                  "the key from now on; without one, the fact is retracted.",
                  "Contest", "Right &value:" if a.subject else None, self.contest)

    def contest(self, aid: int, reason: str, value: str | None = None) -> None:
        self._state.client.call("contest", lambda e: e.contest(aid, reason, value),
                                writes=("ledger",))

    def _set_label(self, label: str) -> None:
        a = self._current
        if a is None or (getattr(a, "label", "normal") or "normal") == label:
            return
        self.set_label(int(a.id), label)

    def set_label(self, aid: int, label: str) -> None:
        self._state.client.call("label", lambda e: e.set_label(aid, label), writes=("ledger",))

    def _hold(self) -> None:
        a = self._current
        if a is None:
            return
        aid = int(a.id)
        if getattr(a, "hold", None):
            self._state.client.call("release hold", lambda e: e.release_hold(aid),
                                    writes=("ledger",))
            return
        self._ask("Put on legal hold",
                  "While on hold, the row is neither expired, purged nor redacted, until "
                  "the hold is released.", "Hold", None,
                  lambda aid, reason, _v: self.hold(aid, reason))

    def hold(self, aid: int, reason: str) -> None:
        self._state.client.call("hold", lambda e: e.hold(aid, reason=reason),
                                writes=("ledger",))

    def _redact(self) -> None:
        from PySide6.QtWidgets import QMessageBox

        a = self._current
        if a is None:
            return
        answer = QMessageBox.warning(
            self, "Redact this sentence?",
            f"“{html.escape(a.text)}”<br><br>Redact erases this sentence, its value and its "
            "vector, with every row made from the same sentence, and keeps the row's key, "
            "status, validity interval and place in the chain. <b>This cannot be undone</b>, "
            "and the sentence can never be stated again.",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
            QMessageBox.StandardButton.Cancel)
        if answer == QMessageBox.StandardButton.Yes:
            aid = int(a.id)
            self._state.client.call("redact", lambda e: e.redact(aid, "redacted in the app"),
                                    writes=("ledger",))

    @staticmethod
    def _forget_tip(a: Any, forgettable: bool) -> str:
        """Why Forget is off (a disabled button shows its tooltip), or what it does."""
        if forgettable:
            return "Retract this row: it stays in the ledger for audit only (Alt+G)"
        if a is None:
            return "Select a row to forget it"
        why = {"superseded": "it is already superseded (no longer retrieved)",
               "retracted": "it is already forgotten (retracted)",
               "rejected": "it was rejected in review (never retrieved)",
               "quarantined": "it awaits review: reject it in the Review tab instead"}
        return f"Can't forget this row: {why.get(status_text(a.status), 'it is not current')}"

    def _on_chain(self, gen: int, rows: list[Any]) -> None:
        if gen != self._gen:
            return
        self.chain.clear()
        current = int(self._current.id) if self._current is not None else -1
        for r in rows:
            text = (f"{status_text(r.status)} · {r.object}  "
                    f"{fmt_time(r.valid_from)} → {fmt_time(r.valid_to, 'open')}")
            item = QListWidgetItem(text)
            item.setToolTip(f"{text}\n{r.text}")
            item.setForeground(themed_status_color(r.status))
            item.setData(CHAIN_ID_ROLE, int(r.id))
            if int(r.id) == current:
                font = item.font()
                font.setBold(True)
                item.setFont(font)
            self.chain.addItem(item)
        self._fit_chain()
        self.chain_loaded.emit(len(rows))

    def _fit_chain(self) -> None:
        """The chain as tall as its values (3 to 12 lines): no tall empty box under a short
        chain, no scrolling for an ordinary one."""
        row = max(self.chain.sizeHintForRow(0), 16) if self.chain.count() else 18
        n = max(3, min(12, self.chain.count()))
        self.chain.setFixedHeight(n * row + 2 * self.chain.frameWidth() + 4)

    def _on_chain_activated(self, item: QListWidgetItem) -> None:
        self.chain_row_picked.emit(int(item.data(CHAIN_ID_ROLE)))

    def _show_timeline(self) -> None:
        a = self._current
        if a is not None and a.subject and a.relation:
            self._state.pick_key(a.subject, a.relation, getattr(a, "space", None),
                                 getattr(a, "context", None))

    def _move(self) -> None:
        """Ask which space (the existing ones, or a new name), then move on the worker."""
        a = self._current
        if a is None:
            return
        self._state.client.call("spaces", lambda e: list(e.spaces()),
                                lambda names: self._ask_move(a, names))

    def _ask_move(self, a: Any, names: list[str]) -> None:
        from .spaces import MoveDialog

        if self._current is None or int(self._current.id) != int(a.id):
            return  # the selection moved on while the spaces loaded
        dlg = MoveDialog(a, names, self)
        aid = int(a.id)
        dlg.accepted.connect(lambda: self._move_to(aid, dlg.chosen()))  # read on this thread
        dlg.finished.connect(dlg.deleteLater)
        self.move_dialog = dlg
        dlg.open()
        self.move_asked.emit(dlg)

    def _move_to(self, aid: int, target: str) -> None:
        self._state.client.call("move to space", lambda e: e.move_to_space(aid, target),
                                writes=("ledger",))

    def _forget(self) -> None:
        from PySide6.QtWidgets import QMessageBox

        a = self._current
        if a is None:
            return
        answer = QMessageBox.question(
            self, "Forget this row?",
            f"“{a.text}” will no longer be retrieved. It stays in the ledger as retracted.")
        if answer == QMessageBox.StandardButton.Yes:
            aid = int(a.id)
            self._state.client.call("forget", lambda e: e.forget(aid), writes=("ledger",))

    def _purge(self) -> None:
        from PySide6.QtWidgets import QMessageBox

        a = self._current
        if a is None:
            return
        answer = QMessageBox.warning(
            self, "Purge this sentence?",
            f"“{html.escape(a.text)}”<br><br>Purge erases this sentence, its triple and its "
            "vector from the ledger file, together with every row made from the same "
            "sentence. <b>This cannot be undone</b>, and no export or backup made from now on "
            "will hold it. A tombstone keeps the key, the interval and the reason.<br><br>"
            "To stop using a fact but keep it for audit, use Forget instead.",
            QMessageBox.StandardButton.Yes | QMessageBox.StandardButton.Cancel,
            QMessageBox.StandardButton.Cancel)
        if answer == QMessageBox.StandardButton.Yes:
            aid = int(a.id)
            self._state.client.call("purge", lambda e: e.purge(aid, "purged in the app"),
                                    writes=("ledger",))
