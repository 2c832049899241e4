"""A table's columns fitted to its width: the columns that do not fit are hidden, the least
needed first, and come back when there is room. At 800×500 the node list showed Name and
half of Type with Mentions and Last seen behind a scroll bar, and the fact table cut its
sixth column in two; now every column on show is whole and its header readable."""

from __future__ import annotations

from collections.abc import Sequence

from PySide6.QtCore import QEvent, QObject, Qt, QTimer
from PySide6.QtWidgets import QHeaderView, QTableView


class FitColumns(QObject):
    """`drop`: logical columns in the order they give way; the others always show."""

    def __init__(self, table: QTableView, drop: Sequence[int]) -> None:
        super().__init__(table)
        self.table = table
        self.drop = list(drop)
        self._timer = QTimer(self, singleShot=True, interval=0)  # one fit per burst
        self._timer.timeout.connect(self.fit)
        table.viewport().installEventFilter(self)
        table.installEventFilter(self)
        model = table.model()
        for signal in (model.modelReset, model.layoutChanged, model.rowsInserted,
                       model.dataChanged):
            signal.connect(self._timer.start)

    def eventFilter(self, watched, event) -> bool:
        if event.type() in (QEvent.Type.Resize, QEvent.Type.FontChange, QEvent.Type.Show):
            self._timer.start()
        return False

    def needed(self, column: int) -> int:
        """The width the column wants, whether it is on show or not: its header's words
        (with room for the sort mark) and its rows' on show."""
        header = self.table.horizontalHeader()
        label = str(self.table.model().headerData(column, Qt.Orientation.Horizontal) or "")
        metrics = header.fontMetrics()
        words = metrics.horizontalAdvance(label) + 2 * metrics.height()
        return max(words, self.table.sizeHintForColumn(column))

    def fit(self) -> None:
        header = self.table.horizontalHeader()
        if not header.count() or not self.table.isVisible():
            return
        room = self.table.viewport().width()
        widths = {c: self.needed(c) for c in range(header.count())}
        hidden: set[int] = set()
        for column in self.drop:
            if sum(w for c, w in widths.items() if c not in hidden) <= room:
                break
            hidden.add(column)
        for column in widths:
            if header.isSectionHidden(column) != (column in hidden):
                header.setSectionHidden(column, column in hidden)
        shown = [c for c in widths if c not in hidden]
        if len(shown) < 2 or header.sectionResizeMode(shown[0]) != \
                QHeaderView.ResizeMode.Interactive:
            return
        # A first column sized by hand (or to the longest name) gives back what the others
        # need; the last one stretches over what is left.
        others = sum(widths[c] for c in shown[1:])
        first = header.sectionSize(shown[0])
        if first + others > room:
            header.resizeSection(shown[0], max(widths[shown[0]] // 2, room - others))
        if header.sectionResizeMode(shown[-1]) == QHeaderView.ResizeMode.Interactive:
            header.resizeSection(shown[-1], widths[shown[-1]])
