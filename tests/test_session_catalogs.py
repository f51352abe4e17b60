"""The lightweight path on both catalog databases (no Spark: DDL, loads, ALTERs, DESCRIBE, SHOW)."""

from __future__ import annotations

import pytest

from alterflow.session import ResultSet, Session, StatementError


def rows(session: Session, text: str):
    *_, last = session.run(text)
    return last.rows if isinstance(last, ResultSet) else last


def test_lightweight_alters_on_each_catalog(settings):
    session = Session(settings)
    rows(session, """
        CREATE TABLE t (k INT NOT NULL, v VARCHAR(4), PRIMARY KEY (k)) DISTRIBUTED BY HASH(k) BUCKETS 2;
        INSERT INTO t VALUES (1, 'a'), (2, 'b');
        ALTER TABLE t ADD COLUMN n INT NOT NULL DEFAULT 3 FIRST, RENAME COLUMN v TO w;
        ALTER TABLE t MODIFY COLUMN w VARCHAR(8) COMMENT 'wider', ALTER COLUMN n SET DEFAULT 4;
        INSERT INTO t (k) VALUES (3);
    """)
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
