"""Database schema and its migrations, keyed by `PRAGMA user_version`.

Each migration moves a file from one version to the next inside one transaction, so a
file is always at a whole version. Version 1 is the first layout (nodes and edges only);
version 2 adds the change log, edge categories, task fields and the full-text index;
version 3 adds the chat history; 4 keeps reasoning with replies; 5 adds soft-deleted
nodes and the index from rows to their changes; 6 the person's approvals of large deletions;
7 an index for successors; 8 conversations; 9 the review inbox; 10 fact vectors for
recall by meaning.
"""

from __future__ import annotations

import json
import sqlite3
import zlib
from collections.abc import Callable

from core.store.change_capture import v17
from core.store.statements import statements as _statements

FTS_TOKENIZER = "porter unicode61 remove_diacritics 2"

V1 = """
CREATE TABLE nodes (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    norm_name TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL DEFAULT 'entity' CHECK (kind IN ('entity', 'task', 'persona', 'state')),
    type TEXT,
    mention_count INTEGER NOT NULL DEFAULT 1,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL
);
CREATE TABLE edges (
    id INTEGER PRIMARY KEY,
    source_id INTEGER NOT NULL REFERENCES nodes(id),
    target_id INTEGER NOT NULL REFERENCES nodes(id),
    relation TEXT NOT NULL,
    norm_relation TEXT NOT NULL,
    confidence REAL NOT NULL DEFAULT 1.0,
    status TEXT NOT NULL DEFAULT 'active'
        CHECK (status IN ('active', 'superseded', 'deleted', 'archived')),
    valid_from REAL,
    valid_to REAL,
    superseded_by INTEGER REFERENCES edges(id),
    source_message TEXT,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL
);
CREATE INDEX edges_source ON edges(source_id, status);
CREATE INDEX edges_target ON edges(target_id, status);
"""

V2 = f"""
ALTER TABLE nodes ADD COLUMN description TEXT;
ALTER TABLE nodes ADD COLUMN state TEXT;
ALTER TABLE nodes ADD COLUMN summary TEXT;
ALTER TABLE edges ADD COLUMN category TEXT NOT NULL DEFAULT 'general'
    CHECK (category IN ('general', 'persona', 'task'));
ALTER TABLE edges ADD COLUMN mention_count INTEGER NOT NULL DEFAULT 1;
ALTER TABLE edges ADD COLUMN temporal_tag TEXT;
ALTER TABLE edges ADD COLUMN archived_at REAL;

UPDATE edges SET category = 'persona'
    WHERE source_id IN (SELECT id FROM nodes WHERE kind = 'persona');
UPDATE edges SET category = 'task'
    WHERE source_id IN (SELECT id FROM nodes WHERE kind = 'task');

CREATE UNIQUE INDEX edges_one_active
    ON edges(source_id, norm_relation, target_id) WHERE status = 'active';
CREATE INDEX edges_status_updated ON edges(status, category, updated_at);
DROP INDEX edges_source;
DROP INDEX edges_target;
CREATE INDEX edges_from ON edges(source_id, status, mention_count, updated_at);
CREATE INDEX edges_to ON edges(target_id, status, mention_count, updated_at);
CREATE INDEX nodes_kind ON nodes(kind, created_at);

CREATE TABLE change_log (
    id INTEGER PRIMARY KEY,
    created_at REAL NOT NULL,
    tool TEXT NOT NULL,
    arguments TEXT NOT NULL,
    turn_id TEXT,
    actor TEXT NOT NULL,
    summary TEXT NOT NULL,
    ops BLOB NOT NULL,  -- zlib-compressed JSON: the row images before and after
    undo_of INTEGER REFERENCES change_log(id),
    undone_by INTEGER REFERENCES change_log(id)
);
CREATE INDEX change_log_turn ON change_log(turn_id);

CREATE VIRTUAL TABLE node_fts USING fts5(body, tokenize = '{FTS_TOKENIZER}');
CREATE VIRTUAL TABLE edge_fts USING fts5(body, tokenize = '{FTS_TOKENIZER}');

CREATE TRIGGER nodes_fts_insert AFTER INSERT ON nodes BEGIN
    INSERT INTO node_fts(rowid, body)
        VALUES (new.id, search_text(new.name || ' ' || coalesce(new.description, '')));
END;
CREATE TRIGGER nodes_fts_delete AFTER DELETE ON nodes BEGIN
    DELETE FROM node_fts WHERE rowid = old.id;
END;
CREATE TRIGGER nodes_fts_update AFTER UPDATE OF name, description ON nodes BEGIN
    UPDATE node_fts SET body = search_text(new.name || ' ' || coalesce(new.description, ''))
        WHERE rowid = new.id;
    UPDATE edge_fts SET body = (
        SELECT search_text(s.name || ' ' || e.relation || ' ' || t.name)
        FROM edges e JOIN nodes s ON s.id = e.source_id JOIN nodes t ON t.id = e.target_id
        WHERE e.id = edge_fts.rowid)
    WHERE rowid IN (SELECT id FROM edges WHERE source_id = new.id OR target_id = new.id);
END;
CREATE TRIGGER edges_fts_insert AFTER INSERT ON edges BEGIN
    INSERT INTO edge_fts(rowid, body) VALUES (new.id, search_text(
        (SELECT name FROM nodes WHERE id = new.source_id) || ' ' || new.relation || ' ' ||
        (SELECT name FROM nodes WHERE id = new.target_id)));
END;
CREATE TRIGGER edges_fts_delete AFTER DELETE ON edges BEGIN
    DELETE FROM edge_fts WHERE rowid = old.id;
END;
CREATE TRIGGER edges_fts_update AFTER UPDATE OF source_id, target_id, relation ON edges BEGIN
    UPDATE edge_fts SET body = search_text(
        (SELECT name FROM nodes WHERE id = new.source_id) || ' ' || new.relation || ' ' ||
        (SELECT name FROM nodes WHERE id = new.target_id))
    WHERE rowid = new.id;
END;

INSERT INTO node_fts(rowid, body)
    SELECT id, search_text(name || ' ' || coalesce(description, '')) FROM nodes;
INSERT INTO edge_fts(rowid, body)
    SELECT e.id, search_text(s.name || ' ' || e.relation || ' ' || t.name)
    FROM edges e JOIN nodes s ON s.id = e.source_id JOIN nodes t ON t.id = e.target_id;
"""

V3 = """
CREATE TABLE messages (
    id INTEGER PRIMARY KEY,
    role TEXT NOT NULL CHECK (role IN ('user', 'assistant', 'system')),
    content TEXT NOT NULL,
    tool_calls TEXT,
    rejected_tools TEXT,
    usage TEXT,
    partial INTEGER NOT NULL DEFAULT 0,
    error TEXT,
    turn_id TEXT,
    created_at REAL NOT NULL
);
"""

# The reasoning text of thinking models, shown collapsed under the reply it led to.
V4 = """
ALTER TABLE messages ADD COLUMN reasoning TEXT;
ALTER TABLE messages ADD COLUMN round_trips INTEGER;
"""

# Soft-deleted nodes, and an index from each row to the changes that touched it, so a
# node's history is one indexed lookup instead of a scan of every logged change.
V5_DDL = """
ALTER TABLE nodes ADD COLUMN deleted_at REAL;
CREATE TABLE change_rows (  -- columns in key order: SQLite 3.40's quick_check needs it
    tbl TEXT NOT NULL,
    row_id INTEGER NOT NULL,
    change_id INTEGER NOT NULL REFERENCES change_log(id),
    PRIMARY KEY (tbl, row_id, change_id)
) WITHOUT ROWID;
"""


def v5(conn: sqlite3.Connection) -> None:
    for statement in _statements(V5_DDL):
        conn.execute(statement)
    for change_id, blob in conn.execute("SELECT id, ops FROM change_log").fetchall():
        conn.executemany("INSERT OR IGNORE INTO change_rows VALUES (?, ?, ?)",
                         [(op["table"], op["id"], change_id) for op in _decode(blob)])


def _decode(blob: bytes) -> list[dict]:
    return json.loads(zlib.decompress(blob))


# Calls the model asked for that would take away more than a turn may: the person allows
# or denies each in the window. `rows` are the [table, id] pairs the person saw.
V6 = """
CREATE TABLE approvals (
    id INTEGER PRIMARY KEY,
    turn_id TEXT,
    tool TEXT NOT NULL,
    arguments TEXT NOT NULL,
    summary TEXT NOT NULL,
    count INTEGER NOT NULL,
    rows TEXT NOT NULL,
    preview TEXT NOT NULL,
    state TEXT NOT NULL DEFAULT 'pending'
        CHECK (state IN ('pending', 'allowed', 'denied', 'failed')),
    outcome TEXT,
    change_id INTEGER REFERENCES change_log(id),
    created_at REAL NOT NULL,
    decided_at REAL
);
CREATE INDEX approvals_state ON approvals(state, id);
"""

# Deleting an edge makes SQLite look for edges naming it as their successor (the foreign
# key); without an index that is a scan of every edge per deleted edge, and undoing an
# import of a million facts would take hours.
V7 = """
CREATE INDEX edges_successor ON edges(superseded_by) WHERE superseded_by IS NOT NULL;
"""

# Conversations: the memory is shared, each conversation keeps its own messages. What was
# there before becomes one conversation. Messages get a full-text index for search across
# every conversation, CJK-aware like the graph's.
V8 = f"""
CREATE TABLE conversations (
    id INTEGER PRIMARY KEY,
    title TEXT NOT NULL,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    deleted_at REAL
);
CREATE INDEX conversations_recent ON conversations(deleted_at, updated_at);
ALTER TABLE messages ADD COLUMN conversation_id INTEGER REFERENCES conversations(id);
CREATE INDEX messages_conversation ON messages(conversation_id, id);
CREATE INDEX messages_turn ON messages(turn_id);
INSERT INTO conversations(title, created_at, updated_at)
    SELECT 'Earlier conversation', min(created_at), max(created_at) FROM messages
    HAVING count(*) > 0;
UPDATE messages SET conversation_id = (SELECT max(id) FROM conversations);
CREATE VIRTUAL TABLE message_fts USING fts5(body, tokenize = '{FTS_TOKENIZER}');
INSERT INTO message_fts(rowid, body) SELECT id, search_text(content) FROM messages;
CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
    INSERT INTO message_fts(rowid, body) VALUES (new.id, search_text(new.content));
END;
CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
    DELETE FROM message_fts WHERE rowid = old.id;
END;
CREATE TRIGGER messages_fts_update AFTER UPDATE OF content ON messages BEGIN
    UPDATE message_fts SET body = search_text(new.content) WHERE rowid = new.id;
END;
"""

# The review inbox: a change the person kept is marked reviewed, and so are the facts it
# wrote (that mark travels with an export). Changes made before this version wait in the
# inbox like new ones: the person has not seen them either.
V9 = """
ALTER TABLE change_log ADD COLUMN reviewed_at REAL;
ALTER TABLE edges ADD COLUMN reviewed_at REAL;
CREATE INDEX change_log_inbox ON change_log(actor, reviewed_at, undone_by, undo_of, id);
"""

# Recall by meaning: one vector per fact, made by the background indexer off the turn's
# path. `model` names the embedding model (a new one re-indexes), `text_crc` the text the
# vector was made from (an edited fact is made again), `seq` grows with every write so a
# saved search index can tell whether it is still current. Vectors are derived data: they
# are not in the change log, and a vector of a purged fact is dropped by the indexer.
V10 = """
CREATE TABLE edge_vectors (
    edge_id INTEGER PRIMARY KEY,
    model TEXT NOT NULL,
    text_crc INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    vector BLOB NOT NULL
);
CREATE INDEX edge_vectors_seq ON edge_vectors(seq);
"""

# Ids are never used twice. SQLite gives a new row the largest id + 1, so removing the
# newest fact (an undo, emptying the trash) handed its id to the next one, and the change
# history of the old fact showed under the new. `id_floor` keeps the largest id each table
# ever had, read from the change log for older files.
V11 = """
CREATE TABLE id_floor (tbl TEXT PRIMARY KEY, top INTEGER NOT NULL) WITHOUT ROWID;
INSERT INTO id_floor SELECT t, max(top) FROM (
    SELECT tbl AS t, max(row_id) AS top FROM change_rows GROUP BY tbl
    UNION ALL SELECT 'nodes', coalesce(max(id), 0) FROM nodes
    UNION ALL SELECT 'edges', coalesce(max(id), 0) FROM edges) GROUP BY t;
"""

# A reply the person stopped was kept with the error text "cancelled", which the window
# then had to recognise; now it is a partial reply without an error (errors are words).
V12 = """
UPDATE messages SET error = NULL WHERE error = 'cancelled' AND partial = 1;
"""

# Other apps, within bounds: the change log keeps, beside the name an app gives itself,
# how it reached the memory (`via`: the program that started it, or its HTTP
# connection), which it cannot choose. An app's call over its write budget waits for the
# person like the model's removals: an approval names whose call it is and why it waits.
# The hour's budgets read the last hour of the change log by time. The Memory tab's search
# as you type finds nodes by the beginning of their type ("Instr" finds Instruments). A
# deleted exchange is kept, marked, so the person can bring it back. A regenerated reply
# keeps the replies it replaced (`versions`, JSON), for the person to look back at; a
# reply's refused calls say why in one word each (`refused_why`, JSON: limit, budget…).
V13 = """
ALTER TABLE change_log ADD COLUMN via TEXT;
ALTER TABLE approvals ADD COLUMN actor TEXT NOT NULL DEFAULT 'model';
ALTER TABLE approvals ADD COLUMN via TEXT;
ALTER TABLE approvals ADD COLUMN reason TEXT NOT NULL DEFAULT 'removes';
CREATE INDEX change_log_time ON change_log(created_at);
CREATE INDEX nodes_type ON nodes(type COLLATE NOCASE);
ALTER TABLE messages ADD COLUMN deleted_at REAL;
ALTER TABLE messages ADD COLUMN versions TEXT;
ALTER TABLE messages ADD COLUMN refused_why TEXT;
"""

# What the model was shown with a person's message (JSON: the memory snapshot or its
# changes, and what it named), so later requests repeat it exactly and a server's prompt
# cache reuses them.
V14 = """
ALTER TABLE messages ADD COLUMN sent TEXT;
"""

# Past conversations brought in from elsewhere (a ChatGPT or Claude export, LoCoMo, the
# app's own Markdown): each import is a row; its conversations name it and their source
# (the same file imported again adds nothing), the names of who spoke, and how far the
# memory was built from them (`remembered_to`, a message id), so a stopped build resumes.
V15 = """
CREATE TABLE past_imports (
    id INTEGER PRIMARY KEY,
    file_name TEXT NOT NULL,
    format TEXT NOT NULL,
    created_at REAL NOT NULL,
    conversations INTEGER NOT NULL DEFAULT 0,
    messages INTEGER NOT NULL DEFAULT 0,
    building INTEGER NOT NULL DEFAULT 0,
    undone_at REAL
);
ALTER TABLE conversations ADD COLUMN source TEXT;
ALTER TABLE conversations ADD COLUMN import_id INTEGER REFERENCES past_imports(id);
ALTER TABLE conversations ADD COLUMN speakers TEXT;
ALTER TABLE conversations ADD COLUMN remembered_to INTEGER;
CREATE UNIQUE INDEX conversations_source ON conversations(source) WHERE source IS NOT NULL;
CREATE INDEX conversations_import ON conversations(import_id) WHERE import_id IS NOT NULL;
"""

# Version 16: an edited message branches the conversation. The exchanges it replaced are
# kept aside, marked with the first turn of their branch (`branch_hidden`, and hidden as a
# deleted exchange is), and each branch of a fork is a row here, with the undo that took
# its memory changes back while another branch is shown (redone when it is shown again).
V16 = """
ALTER TABLE messages ADD COLUMN branch_hidden TEXT;
CREATE TABLE branches (
    id INTEGER PRIMARY KEY,
    conversation_id INTEGER,
    fork TEXT NOT NULL,
    first_turn TEXT NOT NULL UNIQUE,
    undo_change INTEGER,
    created_at REAL NOT NULL
);
CREATE INDEX branches_fork ON branches(fork);
CREATE INDEX messages_branch_hidden ON messages(branch_hidden) WHERE branch_hidden IS NOT NULL;
"""

# Version 17: sync. What changed is recorded for the other devices (see
# `core.store.change_capture`), and each change in the log says which device made it (NULL:
# this one).
# Version 18: a sync conflict says when each of its two edits was made.
V18 = """
ALTER TABLE sync_conflicts ADD COLUMN kept_at REAL;
ALTER TABLE sync_conflicts ADD COLUMN lost_at REAL;
"""
# Version 19: recall by meaning over the conversations themselves, one vector per
# message, made like the facts' (see V10 and `core.meaning.turns`): derived data, not in
# the change log and not synced.
V19 = """
CREATE TABLE message_vectors (
    message_id INTEGER PRIMARY KEY,
    model TEXT NOT NULL,
    text_crc INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    vector BLOB NOT NULL
);
CREATE INDEX message_vectors_seq ON message_vectors(seq);
"""
# Version 20: sync keeps aside any row's values, not only a merged node's: the edits that
# reach a row removed here (or not here yet) wait for the write that puts it back, and a
# row removed keeps its later edits (see `core.sync.incoming`). Local to this file: the
# synced tables are as in version 19 (`SYNCED_SCHEMA`).
V20 = """
CREATE TABLE sync_parked_rows (
    tbl TEXT NOT NULL,
    row_id INTEGER NOT NULL,
    row TEXT NOT NULL,
    PRIMARY KEY (tbl, row_id)
) WITHOUT ROWID;
INSERT INTO sync_parked_rows SELECT 'nodes', row_id, row FROM sync_parked;
DROP TABLE sync_parked;
ALTER TABLE sync_parked_rows RENAME TO sync_parked;
"""
# The last version that changed a synced table (see `core.store.change_capture.SYNCED`):
# what a sync file says it was written with, so a version that changes only this file's
# own tables does not split a set of devices.
SYNCED_SCHEMA = 19
Migration = str | Callable[[sqlite3.Connection], None]
MIGRATIONS: list[Migration] = [V1, V2, V3, V4, v5, V6, V7, V8, V9, V10, V11, V12, V13, V14,
                              V15, V16, v17, V18, V19, V20]
LATEST_VERSION = len(MIGRATIONS)


def migrate(conn: sqlite3.Connection, target: int = LATEST_VERSION,
            on_step: Callable[[int], None] | None = None) -> int:
    """Bring the file up to `target`, one version per transaction; returns the old version.

    A file newer than this program is refused rather than guessed at.
    """
    first = conn.execute("PRAGMA user_version").fetchone()[0]
    if first > LATEST_VERSION:
        raise _too_new(first)
    while True:
        # The version is read again inside the write lock: another process starting on
        # the same fresh file at the same moment may have migrated it meanwhile.
        conn.execute("BEGIN IMMEDIATE")
        try:
            current = conn.execute("PRAGMA user_version").fetchone()[0]
            if current > LATEST_VERSION:
                raise _too_new(current)
            if current >= target:
                conn.execute("COMMIT")
                return first
            step = MIGRATIONS[current]
            if callable(step):
                step(conn)
            else:
                for statement in _statements(step):
                    conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {current + 1}")
            conn.execute("COMMIT")
        except BaseException:
            if conn.in_transaction:
                conn.execute("ROLLBACK")
            raise
        if on_step:
            on_step(current + 1)


def _too_new(version: int) -> sqlite3.DatabaseError:
    return sqlite3.DatabaseError(
        f"the database is schema version {version}, newer than this program understands "
        f"({LATEST_VERSION}); update TrulyMEM")
