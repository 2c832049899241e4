"""Splitting an SQL script into statements: `executescript` would commit the caller's
transaction, and a migration runs inside one."""

from __future__ import annotations

import sqlite3


def statements(script: str) -> list[str]:
    """Split a script into statements, keeping trigger bodies whole."""
    statements, buffer = [], ""
    for line in script.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            statements.append(buffer.strip())
            buffer = ""
    if buffer.strip():
        statements.append(buffer.strip())
    return [s for s in statements if s]
