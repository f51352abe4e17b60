"""The lightweight path on both catalog databases (no Spark: DDL, loads, ALTERs, DESCRIBE, SHOW)."""

from __future__ import annotations

import pytest

from alterflow.engine.session import ResultSet, Session, StatementError


def rows(session: Session, text: str):
    *_, last = session.run(text)
    return last.rows if isinstance(last, ResultSet) else last


def test_lightweight_alters_on_each_catalog(settings):
    session = Session(settings)
    rows(
        session,
        """
        CREATE TABLE t (k INT NOT NULL, v VARCHAR(4), PRIMARY KEY (k)) DISTRIBUTED BY HASH(k) BUCKETS 2;
        INSERT INTO t VALUES (1, 'a'), (2, 'b');
        ALTER TABLE t ADD COLUMN n INT NOT NULL DEFAULT 3 FIRST, RENAME COLUMN v TO w;
        ALTER TABLE t MODIFY COLUMN w VARCHAR(8) COMMENT 'wider', ALTER COLUMN n SET DEFAULT 4;
        INSERT INTO t (k) VALUES (3);
    """,
    )
    assert rows(session, "DESCRIBE t") == (
        ("n", "INT", "NO", "false", "4"),
        ("k", "INT", "NO", "true", None),
        ("w", "VARCHAR(8)", "YES", "false", None),
    )
    versions = rows(session, "SHOW SCHEMA VERSIONS FROM t")
    assert [(v[0], v[3]) for v in versions] == [
        (1, "k INT NOT NULL, v VARCHAR(4)"),
        (2, "n INT NOT NULL DEFAULT 3, k INT NOT NULL, w VARCHAR(4)"),
        (3, "n INT NOT NULL DEFAULT 4, k INT NOT NULL, w VARCHAR(8)"),
    ]
    info = session.catalog.table("t")
    assert session.catalog.table_stats(info.id)[0] == 3
    assert {f.schema_version for f in session.catalog.snapshot("t").files} == {1, 3}
    with pytest.raises(StatementError, match=r"^ALTER TABLE t: expected_version 2 but the current version is 3$"):
        rows(session, 'ALTER TABLE t ADD COLUMN z INT PROPERTIES ("expected_version" = "2")')
    rows(session, 'ALTER TABLE t ADD COLUMN z INT PROPERTIES ("expected_version" = "3")')
    assert session.catalog.table("t").current_version == 4


def test_the_version_a_light_alter_remembers_is_the_one_its_row_decodes_to(settings, monkeypatch):
    """A committed light ALTER keeps the planner's SchemaVersion for the next read instead of
    decoding the row it wrote: that object must be exactly what decoding the row gives."""
    from alterflow.catalog.models import SchemaVersionRow
    from alterflow.catalog.records import _DECODED
    from alterflow.catalog.schema import SchemaVersion

    session = Session(settings)
    rows(
        session,
        """
        CREATE TABLE d (k INT NOT NULL, v VARCHAR(4), PRIMARY KEY (k)) DISTRIBUTED BY HASH(k) BUCKETS 2;
        ALTER TABLE d ADD COLUMN m DECIMAL(10, 2) DEFAULT '1.50' COMMENT 'money';
        ALTER TABLE d ADD COLUMN day DATE DEFAULT '2026-01-02', ADD COLUMN at DATETIME DEFAULT '2026-01-02 03:04:05';
        ALTER TABLE d ADD COLUMN big BIGINT NOT NULL DEFAULT 7 AFTER k, ADD COLUMN s STRING DEFAULT 'x';
        ALTER TABLE d MODIFY COLUMN v VARCHAR(16) DEFAULT 'w', RENAME COLUMN m TO money;
        ALTER TABLE d ADD COLUMN f DOUBLE DEFAULT 2.5, ADD COLUMN ok BOOLEAN DEFAULT true, DROP COLUMN s;
    """,
    )
    catalog = session.catalog
    info, current = catalog.current_schema("d")
    assert current.version == 6
    with catalog.engine.connect() as conn:
        stored = conn.execute(SchemaVersionRow.__table__.select().where(SchemaVersionRow.table_id == info.id)).mappings().all()
    assert len(stored) == 6
    for row in stored:
        key = (row["table_id"], row["version"], row["spec"], row["statement"], row["created_at"])
        decoded = SchemaVersion.from_spec_json(*key)
        read = catalog.schema_version(info.id, row["version"])
        assert repr(read) == repr(decoded)
        if row["version"] > 1:  # written by a light ALTER: remembered, not decoded
            assert _DECODED[key] is read

    decodes = []
    original = SchemaVersion.from_spec_json.__func__
    monkeypatch.setattr(SchemaVersion, "from_spec_json", classmethod(lambda cls, *a: decodes.append(a) or original(cls, *a)))
    rows(session, "ALTER TABLE d ADD COLUMN g INT DEFAULT 1")
    assert rows(session, "DESCRIBE d")[-1][0] == "g"
    assert decodes == []  # the ALTER read version 6 and DESCRIBE version 7, both remembered
