"""What changed since the last sync file, recorded by triggers in the same transaction as
the write, whoever writes (the window, a turn, an app over MCP in another process, an
import): a row and the columns that changed, nothing more. The values are read when the
file is written, so a column changed ten times travels once.

Recording is off until this device joins a sync set (`sync_capture.on`), and off while
another device's changes are applied, so they are not sent back.
"""

from __future__ import annotations

import sqlite3

from core.store.statements import statements

# The tables that travel, parents first (the order rows are applied in). Not the config,
# the key, the vectors (each device indexes what it receives), nor what is this device's
# own: approvals waiting for the person here, backups, the review marks of branches.
SYNCED = ("past_imports", "nodes", "edges", "conversations", "messages", "change_log")

TABLES = """
CREATE TABLE sync_capture (on_ INTEGER NOT NULL DEFAULT 0);
INSERT INTO sync_capture VALUES (0);
CREATE TABLE sync_outbox (
    id INTEGER PRIMARY KEY,
    tbl TEXT NOT NULL,
    row_id INTEGER NOT NULL,
    col TEXT NOT NULL  -- a column, '*' (every column: a new row), '-' (removed) or '='
    --                    (merged into another node: see sync_alias)
);
CREATE TABLE sync_rows (  -- each synced row's clock per column: {"name": stamp, ...}
    tbl TEXT NOT NULL,
    row_id INTEGER NOT NULL,
    clocks TEXT NOT NULL,
    removed TEXT,  -- the stamp of its removal: a removed row stays removed
    PRIMARY KEY (tbl, row_id)
) WITHOUT ROWID;
CREATE TABLE sync_self (
    id INTEGER PRIMARY KEY CHECK (id = 1),
    device TEXT NOT NULL,
    name TEXT NOT NULL,
    slot INTEGER NOT NULL,
    set_id TEXT NOT NULL,
    folder TEXT NOT NULL,
    seq INTEGER NOT NULL DEFAULT 0,
    clock TEXT,
    joined_at REAL NOT NULL,
    last_sync REAL
);
CREATE TABLE sync_former (  -- who this device was before it left a set: its changes stay
    device TEXT PRIMARY KEY,  -- its own (undo), its range stays the one it numbers in
    slot INTEGER NOT NULL,
    left_at REAL NOT NULL
);
CREATE TABLE sync_devices (  -- the other devices: how far their files were applied
    device TEXT PRIMARY KEY,
    name TEXT NOT NULL DEFAULT '',
    seq INTEGER NOT NULL DEFAULT 0,
    last_seen REAL,
    public_key TEXT,  -- its signing key, known from its first file on
    acked INTEGER NOT NULL DEFAULT 0  -- how far it had applied this device's files
);
CREATE TABLE sync_alias (  -- a row merged into another (the same person on two devices)
    tbl TEXT NOT NULL,
    from_id INTEGER NOT NULL,
    to_id INTEGER NOT NULL,
    stamp TEXT,  -- when the merge was sent or received (NULL: made here, not sent yet)
    PRIMARY KEY (tbl, from_id)
) WITHOUT ROWID;
CREATE TABLE sync_rewritten (  -- a fact pointed at the node another was merged into
    tbl TEXT NOT NULL,
    row_id INTEGER NOT NULL,
    col TEXT NOT NULL,
    original INTEGER NOT NULL,  -- the merged node it named: named again if the merge is undone
    became INTEGER NOT NULL,
    PRIMARY KEY (tbl, row_id, col)
) WITHOUT ROWID;
CREATE TABLE sync_parked (  -- a node as it was when merged away: an undone merge needs it
    --                           (version 20 keys it by table too: see `core.store.schema`)
    row_id INTEGER PRIMARY KEY,
    row TEXT NOT NULL
);
CREATE TABLE sync_conflicts (  -- a column written on two devices: what the rule decided
    id INTEGER PRIMARY KEY,
    tbl TEXT NOT NULL,
    row_id INTEGER NOT NULL,
    col TEXT NOT NULL,
    kept TEXT,
    lost TEXT,
    kept_device TEXT,
    lost_device TEXT,
    at REAL NOT NULL
);
CREATE TABLE sync_refused (  -- files from the folder that were not applied, and why
    file TEXT PRIMARY KEY,
    reason TEXT NOT NULL,
    at REAL NOT NULL
) WITHOUT ROWID;
ALTER TABLE change_log ADD COLUMN device TEXT;
CREATE TABLE change_arrivals (  -- each logged change in the order it came to this file
    seq INTEGER PRIMARY KEY,
    change_id INTEGER NOT NULL
);
CREATE TRIGGER change_log_arrival AFTER INSERT ON change_log BEGIN
    INSERT INTO change_arrivals(change_id) VALUES (new.id);
END;
"""


def note_merge(conn: sqlite3.Connection, gone: int, keep: int) -> None:
    """Node `gone` was merged into `keep` here: the other devices merge it too (facts
    still naming it, written before they heard, then name `keep`). Nothing when this
    memory does not sync."""
    if conn.execute("SELECT on_ FROM sync_capture").fetchone()[0] != 1 and \
            conn.execute("SELECT 1 FROM sync_self").fetchone() is None:
        return
    conn.execute("INSERT OR REPLACE INTO sync_alias VALUES ('nodes', ?, ?, NULL)",
                 (gone, keep))
    conn.execute("INSERT INTO sync_outbox(tbl, row_id, col) VALUES ('nodes', ?, '=')",
                 (gone,))


def columns(conn: sqlite3.Connection, table: str) -> list[str]:
    return [row[1] for row in conn.execute(f"PRAGMA table_info({table})")]


def install_triggers(conn: sqlite3.Connection) -> None:
    """(Re)create the recording triggers from the tables' columns as they are now: a later
    migration that adds a column calls this again."""
    for table in SYNCED:
        for kind in ("insert", "update", "delete"):
            conn.execute(f"DROP TRIGGER IF EXISTS sync_{table}_{kind}")
        recording = "(SELECT on_ FROM sync_capture) = 1"
        conn.execute(
            f"CREATE TRIGGER sync_{table}_insert AFTER INSERT ON {table} WHEN {recording}"
            f" BEGIN INSERT INTO sync_outbox(tbl, row_id, col)"
            f" VALUES ('{table}', new.id, '*'); END")
        changed = " UNION ALL ".join(
            f"SELECT '{table}', new.id, '{name}' WHERE old.{name} IS NOT new.{name}"
            for name in columns(conn, table) if name != "id")
        conn.execute(
            f"CREATE TRIGGER sync_{table}_update AFTER UPDATE ON {table} WHEN {recording}"
            f" BEGIN INSERT INTO sync_outbox(tbl, row_id, col) {changed}; END")
        conn.execute(
            f"CREATE TRIGGER sync_{table}_delete AFTER DELETE ON {table} WHEN {recording}"
            f" BEGIN INSERT INTO sync_outbox(tbl, row_id, col)"
            f" VALUES ('{table}', old.id, '-'); END")


def v17(conn: sqlite3.Connection) -> None:
    for statement in statements(TABLES):
        conn.execute(statement)
    install_triggers(conn)
