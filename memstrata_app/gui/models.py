"""Models tab: the user's Ollama — there or not, its models, which are loaded and where (GPU,
CPU or split), pull with progress and cancel, unload and keep-alive, the model for extraction
and judging, and "Try it" (time to first token, tokens/s).

Every Ollama call runs on a short-lived background thread (memstrata_app.ollama_admin,
imported there); results come back to the GUI thread by queued signal. The engine's worker is
not used: a slow Ollama must never hold up the ledger.
"""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Callable
from html import escape
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor
from PySide6.QtWidgets import QTableWidgetItem, QWidget

from .background import Background
from .models_ui import BANNER, ModelsLayout

log = logging.getLogger(__name__)
RIGHT = Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter
CPU_RED = "#d9534f"  # a model (partly) on the CPU; readable on light and dark tables


def admin_module() -> Any:
    from memstrata_app import ollama_admin

    return ollama_admin


def human_bytes(n: int) -> str:
    return admin_module().human_bytes(n)  # type: ignore[no-any-return]


class ModelsView(ModelsLayout):
    """The Models tab. `status` is the last probe (None before the first)."""

    status_changed = Signal(object)  # OllamaStatus
    settings_requested = Signal()  # "Set the Ollama URL…": the window opens Settings
    probed = Signal()  # a probe finished and the view shows it
    pull_finished = Signal(str, str)  # model, outcome: success | cancelled | error
    tried = Signal(object)  # TryResult
    action_failed = Signal(str)  # the advice shown

    def __init__(self, settings: Any, parent: QWidget | None = None):
        super().__init__(parent)
        self.settings = settings
        self.status: Any = None
        self.last_advice: Any = None
        self.bg = Background(self)
        self._cancel: threading.Event | None = None
        self._pulling = ""
        self._probing = False
        self.refresh_button.clicked.connect(self.refresh)
        self.url_button.clicked.connect(self.settings_requested)
        self.copy_button.clicked.connect(self._copy_install)
        self.advice_pull.clicked.connect(self._pull_advised)
        self.installed.itemSelectionChanged.connect(self._on_selection)
        self.use_button.clicked.connect(self._use_selected)
        self.try_button.clicked.connect(self._try_selected)
        self.loaded.itemSelectionChanged.connect(self._on_selection)
        self.unload_button.clicked.connect(self._unload_selected)
        self.keep_button.clicked.connect(self._keep_selected)
        self.pull_name.returnPressed.connect(self._pull_typed)
        self.pull_button.clicked.connect(self._pull_typed)
        self.cancel_button.clicked.connect(self.cancel_pull)
        self._show_status(None)

    def focus_chain(self) -> list[QWidget]:
        return [self.refresh_button, self.url_button, self.copy_button, self.advice_pull,
                self.installed, self.use_button,
                self.try_button, self.loaded, self.unload_button, self.keep_alive,
                self.keep_button, self.pull_name, self.pull_button, self.cancel_button]

    @property
    def url(self) -> str:
        return str(self.settings.get("ollama_url")).rstrip("/")

    # --- probing ------------------------------------------------------------------------------
    def refresh(self) -> None:
        """Probe Ollama (version, tags, ps) off the GUI thread."""
        url = self.url

        def probe() -> Any:
            oa = admin_module()
            with oa.OllamaAdmin(url, timeout=3.0) as admin:
                return admin.probe()

        if self._probing:
            return
        self._probing = True
        self.bg.run(probe, self._on_probe)

    def _on_probe(self, status: Any, error: BaseException | None) -> None:
        self._probing = False
        if error is not None:  # only if the admin module itself failed
            log.warning("probing Ollama failed: %s", error)
            return
        self.status = status
        self._show_status(status)
        self.status_changed.emit(status)
        self.probed.emit()

    def _show_status(self, st: Any) -> None:
        if st is None:
            self.status_label.setText(f"Looking for Ollama at {self.url}…")
            self._enable(False)
            return
        if not st.reachable:
            self.status_label.setText(f"<b>Ollama is not running at {escape(st.url)}</b> "
                                      f"({escape(st.error[:160])})")
            self.missing.setText(self._install_text())
            self.missing_box.show()
            self.body.hide()
            self.try_result.setText("")
            if self.last_advice is None or self.last_advice.kind == "memory":
                self.last_advice = None
                self.advice_box.hide()
            self.installed.setRowCount(0)
            self.loaded.setRowCount(0)
            self.needed.setText("")
            self._enable(False)
            return
        self.missing_box.hide()
        self.body.show()
        gpu = ("on the GPU" if st.loaded and all(m.processor == "100% GPU" for m in st.loaded)
               else "partly on the CPU" if any(m.partial for m in st.loaded)
               else "on the CPU" if st.loaded else "none loaded")
        self.status_label.setText(
            f"<b>Ollama {escape(st.version)}</b> at {escape(st.url)} · {len(st.models)} models "
            f"installed · {len(st.loaded)} loaded ({gpu})"
            + (f" · {escape(st.error)}" if st.error else ""))
        self._fill_installed(st)
        self._fill_loaded(st)
        self._fill_needed(st)
        self._enable(True)
        cpu = [m for m in st.loaded if not m.on_gpu or m.partial]
        if cpu and (self.last_advice is None or self.last_advice.kind == "memory"):
            self.last_advice = None
            names = ", ".join(f"{m.name} ({m.processor})" for m in cpu)
            self._show_advice("warn", f"Running on the CPU: {names}. The model does not fit "
                              "in GPU memory (or no GPU was found), so answers are slower. "
                              "Unload other models, or pick a smaller model or quantization.")
        elif self.last_advice is None or self.last_advice.kind == "memory":
            self.last_advice = None
            self.advice_box.hide()

    def _install_text(self) -> str:
        oa = admin_module()
        lines = oa.install_help(sys.platform).splitlines()
        return ("<b>Ollama is needed for local chat models, `ollama:` embeddings and the "
                "extraction tier.</b><br>" + "<br>".join(lines))

    def install_command(self) -> str:
        if sys.platform.startswith("linux"):
            return "curl -fsSL https://ollama.com/install.sh | sh"
        if sys.platform == "darwin":
            return "brew install ollama && ollama serve"
        return "https://ollama.com/download"

    def _copy_install(self) -> None:
        from PySide6.QtWidgets import QApplication

        QApplication.clipboard().setText(self.install_command())
        self.copy_button.setText("Copied")

    def _enable(self, on: bool) -> None:
        for w in (self.installed, self.loaded, self.pull_name, self.pull_button,
                  self.keep_alive):
            w.setEnabled(on)
        self._on_selection()

    def _fill_installed(self, st: Any) -> None:
        chosen = str(self.settings.get("extraction_model") or "")
        oa = admin_module()
        keep = self.selected_installed()
        self.installed.clearSelection()
        self.installed.setRowCount(len(st.models))
        for i, m in enumerate(st.models):
            use = ("extraction + judging" if chosen and oa.same_model(m.name, chosen)
                   else "embeddings" if m.is_embedding else "")
            cells = (m.name, human_bytes(m.size), m.parameter_size, m.quantization, use)
            for j, c in enumerate(cells):
                item = QTableWidgetItem(c)
                if j == 1:
                    item.setTextAlignment(RIGHT)
                self.installed.setItem(i, j, item)
            if m.name == keep:
                self.installed.selectRow(i)

    def _fill_loaded(self, st: Any) -> None:
        keep = self.selected_loaded()
        self.loaded.clearSelection()
        self.loaded.setRowCount(len(st.loaded))
        for i, m in enumerate(st.loaded):
            until = "forever" if m.expires_at.startswith("2318") else \
                m.expires_at[:19].replace("T", " ") + " UTC"
            cells = (m.name, human_bytes(m.size), m.processor,
                     f"{human_bytes(m.size_vram)} of {human_bytes(m.size)}", until)
            for j, c in enumerate(cells):
                item = QTableWidgetItem(c)
                if j in (1, 3):
                    item.setTextAlignment(RIGHT)
                if j == 2 and (m.partial or not m.on_gpu):
                    item.setForeground(QColor(CPU_RED))
                    item.setToolTip("Part or all of the model runs on the CPU: slower")
                self.loaded.setItem(i, j, item)
            if m.name == keep:
                self.loaded.selectRow(i)

    def _fill_needed(self, st: Any) -> None:
        oa = admin_module()
        needed = oa.needed_models(st, str(self.settings.get("embedder")),
                                  str(self.settings.get("extraction_model") or ""))
        parts = [f"{n.purpose}: <b>{escape(n.name)}</b> "
                 + ("✓ installed" if n.installed else "— not installed, pull it below")
                 for n in needed]
        self.needed.setText("What the features use — " + "; ".join(parts))
        missing = [n.name for n in needed if not n.installed]
        if missing and not self.pull_name.text() and not self._pulling:
            self.pull_name.setText(missing[0])

    # --- selection and actions ----------------------------------------------------------------
    def selected_installed(self) -> str:
        rows = self.installed.selectionModel().selectedRows()
        item = self.installed.item(rows[0].row(), 0) if rows else None
        return item.text() if item is not None else ""

    def selected_loaded(self) -> str:
        rows = self.loaded.selectionModel().selectedRows()
        item = self.loaded.item(rows[0].row(), 0) if rows else None
        return item.text() if item is not None else ""

    def _on_selection(self) -> None:
        up = self.status is not None and self.status.reachable
        model = self.selected_installed()
        st = self.status
        embed = bool(up and st and any(m.name == model and m.is_embedding for m in st.models))
        self.use_button.setEnabled(bool(up and model) and not embed)
        self.try_button.setEnabled(bool(up and model) and not embed)
        self.unload_button.setEnabled(bool(up and self.selected_loaded()))
        self.keep_button.setEnabled(bool(up and (self.selected_loaded() or model)))

    def select_model(self, name: str) -> bool:
        for i in range(self.installed.rowCount()):
            item = self.installed.item(i, 0)
            if item is not None and item.text() == name:
                self.installed.selectRow(i)
                return True
        return False

    def _use_selected(self) -> None:
        name = self.selected_installed()
        if not name:
            return
        try:
            self.settings.set("extraction_model", name)
            self.settings.save()
        except Exception as e:
            self._show_advice("error", f"Could not save the setting: {e}")
            return
        self._show_advice("ok", f"{name} now structures prose and judges updates in the "
                          "background (Settings → Extraction model); restart the "
                          "endpoint to apply.")
        if self.status is not None:
            self._fill_installed(self.status)
            self._fill_needed(self.status)

    def _try_selected(self) -> None:
        name = self.selected_installed()
        if name:
            self.try_model(name)

    def try_model(self, name: str) -> None:
        url = self.url
        self.try_button.setEnabled(False)
        self.try_result.setText(f"Trying {name}… (the first answer includes loading it)")

        def work() -> Any:
            oa = admin_module()
            with oa.OllamaAdmin(url) as admin:
                return admin.try_model(name)

        def done(result: Any, error: BaseException | None) -> None:
            self._on_selection()
            if error is not None:
                self.try_result.setText("")
                self._failed(error)
                return
            t = result.timing
            self.try_result.setText(
                f"<b>{escape(result.model)}</b>: first token in <b>{result.ttft_ms:.0f} ms</b>, "
                f"<b>{result.tokens_per_s:.1f} tokens/s</b> · load {t.load_ms:.0f} ms"
                + (" (it had to load)" if t.loaded else "")
                + f" · prompt {t.prompt_eval_ms:.0f} ms · {t.eval_count} tokens in "
                f"{t.eval_ms:.0f} ms")
            self.tried.emit(result)
            self.refresh()  # it is loaded now

        self.bg.run(work, done)

    def _unload_selected(self) -> None:
        name = self.selected_loaded()
        if name:
            self._admin_action(f"Unloading {name}…", lambda a: a.unload(name))

    def _keep_selected(self) -> None:
        name = self.selected_installed() or self.selected_loaded()
        value = self.keep_alive.currentData()
        if name:
            self._admin_action(f"Loading {name} (kept {self.keep_alive.currentText()})…",
                               lambda a: a.load(name, keep_alive=value))

    def _admin_action(self, text: str, fn: Callable[[Any], Any]) -> None:
        url = self.url
        self.pull_status.setText(text)

        def work() -> Any:
            oa = admin_module()
            with oa.OllamaAdmin(url) as admin:
                return fn(admin)

        def done(_: Any, error: BaseException | None) -> None:
            self.pull_status.setText("")
            if error is not None:
                self._failed(error)
            self.refresh()

        self.bg.run(work, done)

    # --- pulling ------------------------------------------------------------------------------
    def _pull_typed(self) -> None:
        name = self.pull_name.text().strip()
        if name:
            self.pull(name)

    def _pull_advised(self) -> None:
        if self.last_advice is not None and self.last_advice.model:
            self.pull_name.setText(self.last_advice.model)
            self.pull(self.last_advice.model)

    def pull(self, name: str) -> None:
        """Pull `name` with progress; Cancel stops it (Ollama keeps what it downloaded)."""
        if self._pulling:
            return
        url = self.url
        self._pulling = name
        self._cancel = cancel = threading.Event()
        self.pull_button.setEnabled(False)
        self.cancel_button.setEnabled(True)
        self.progress.setValue(0)
        self.progress.setFormat(f"{name}: starting")
        self.pull_status.setText(f"Pulling {name}…")

        def work() -> Any:
            oa = admin_module()
            with oa.OllamaAdmin(url) as admin:
                admin.pull(name, lambda p: self.bg.report(self._on_progress, p), cancel)

        self.bg.run(work, self._on_pulled)

    def _on_progress(self, p: Any, _error: Any) -> None:
        frac = p.fraction
        if frac is not None:
            self.progress.setValue(int(frac * 1000))
            self.progress.setFormat(f"{self._pulling}: {frac:.0%} of {human_bytes(p.total)}")
        else:
            self.progress.setFormat(f"{self._pulling}: {p.status}")
        self.pull_status.setText(p.status)

    def cancel_pull(self) -> None:
        if self._cancel is not None:
            self._cancel.set()
            self.pull_status.setText(f"Cancelling the pull of {self._pulling}…")

    def _on_pulled(self, _: Any, error: BaseException | None) -> None:
        name, self._pulling = self._pulling, ""
        self._cancel = None
        self.pull_button.setEnabled(True)
        self.cancel_button.setEnabled(False)
        oa = admin_module()
        if error is None:
            self.progress.setValue(1000)
            self.progress.setFormat(f"{name}: pulled")
            self.pull_status.setText(f"{name} is installed.")
            if self.last_advice is not None and self.last_advice.model == name:
                self.last_advice = None
                self.advice_box.hide()
            outcome = "success"
        elif isinstance(error, oa.PullCancelled):
            self.progress.setFormat(f"{name}: cancelled")
            self.pull_status.setText("Cancelled; what was downloaded is kept, and pulling it "
                                     "again resumes.")
            outcome = "cancelled"
        else:
            self.progress.setFormat(f"{name}: failed")
            self.pull_status.setText("")
            self._failed(error)
            outcome = "error"
        self.pull_finished.emit(name, outcome)
        self.refresh()

    # --- errors -------------------------------------------------------------------------------
    def _failed(self, error: BaseException) -> None:
        oa = admin_module()
        if isinstance(error, oa.OllamaError):
            self.last_advice = error.advice
            tone = "warn" if error.advice.kind in ("busy", "loading") else "error"
            self._show_advice(tone, error.advice.message, error.advice.kind == "not_found")
        else:
            self._show_advice("error", f"{type(error).__name__}: {error}")
        self.action_failed.emit(self.advice.text())

    def _show_advice(self, tone: str, text: str, offer_pull: bool = False) -> None:
        self.advice.setText(text)
        self.advice_box.setStyleSheet(f"QFrame {{ {BANNER[tone]} }} QLabel {{ border: none; "
                                      "background: transparent; }")
        self.advice_pull.setVisible(offer_pull)
        if offer_pull and self.last_advice is not None:
            self.advice_pull.setText(f"Pull {self.last_advice.model}")
        self.advice_box.show()

    def shutdown(self) -> None:
        if self._cancel is not None:
            self._cancel.set()
        self.bg.close()
