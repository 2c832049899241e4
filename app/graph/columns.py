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
        self._points = table.font().pointSizeF()  # widths sized by hand follow text zoom
        table.viewport().installEventFilter(self)
        table.installEventFilter(self)
        model = table.model()
        for signal in (model.modelReset, model.layoutChanged, model.rowsInserted,
                       model.dataChanged):
            signal.connect(self._timer.start)

    def eventFilter(self, watched, event) -> bool:
        if event.type() == QEvent.Type.FontChange and watched is self.table:
            self._scale_widths()
        if event.type() in (QEvent.Type.Resize, QEvent.Type.FontChange, QEvent.Type.Show):
            self._timer.start()
        return False

    def _scale_widths(self) -> None:
        points, self._points = self._points, self.table.font().pointSizeF()
        if points <= 0 or self._points <= 0:
            return
        header = self.table.horizontalHeader()
        for column in range(header.count()):
            if header.sectionResizeMode(column) == QHeaderView.ResizeMode.Interactive \
                    and not header.isSectionHidden(column):
                header.resizeSection(column, round(header.sectionSize(column) * self._points
                                                   / points))

    def words(self, column: int) -> int:
        """The header's words, with room for the sort mark."""
        header = self.table.horizontalHeader()
        label = str(self.table.model().headerData(column, Qt.Orientation.Horizontal) or "")
        metrics = header.fontMetrics()
        return metrics.horizontalAdvance(label) + 2 * metrics.height()

    def needed(self, column: int) -> int:
        """The width the column wants, whether it is on show or not: its header's words
        and its rows' on show."""
        return max(self.words(column), self.table.sizeHintForColumn(column))

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
        # need; the last one stretches over what is left; no header's words are cut.
        for column in shown[1:-1]:
            if header.sectionSize(column) < self.words(column):
                header.resizeSection(column, self.words(column))
        middle = shown[1:-1]
        excess = header.sectionSize(shown[0]) + widths[shown[-1]] - room + sum(
            max(header.sectionSize(c), widths[c]) for c in middle)
        for column in sorted(middle, key=lambda c: widths[c] - header.sectionSize(c)):
            give = min(max(0, header.sectionSize(column) - widths[column]), max(0, excess))
            if give:  # a column wider than its words and rows gives back first
                header.resizeSection(column, header.sectionSize(column) - give)
                excess -= give
        if excess > 0:
            header.resizeSection(shown[0], max(widths[shown[0]] // 2,
                                               header.sectionSize(shown[0]) - excess))
        if header.sectionResizeMode(shown[-1]) == QHeaderView.ResizeMode.Interactive:
            header.resizeSection(shown[-1], widths[shown[-1]])
