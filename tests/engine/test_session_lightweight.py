"""The lightweight path end to end through the embedded session: DDL, loads, ALTERs, reads (Spark)."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal

import pytest

from alterflow.engine.session import StatementError

pytestmark = pytest.mark.spark


def test_add_drop_readd_rename_widen_read_back(run):
    run("""
        CREATE TABLE t (id INT NOT NULL, qty INT, note VARCHAR(10), PRIMARY KEY (id)) DISTRIBUTED BY HASH(id) BUCKETS 3;
        INSERT INTO t VALUES (1, 10, 'a'), (2, 20, 'b');
        ALTER TABLE t ADD COLUMN price DECIMAL(8,2) NOT NULL DEFAULT '9.99';
        INSERT INTO t (id, qty, note) VALUES (3, 30, 'c');
        ALTER TABLE t ALTER COLUMN price SET DEFAULT '1.00';
        INSERT INTO t (id, qty) VALUES (4, 40);
        ALTER TABLE t DROP COLUMN note;
        ALTER TABLE t ADD COLUMN note VARCHAR(10);
        ALTER TABLE t RENAME COLUMN qty TO amount;
        ALTER TABLE t MODIFY COLUMN amount BIGINT;
        INSERT INTO t VALUES (5, 5000000000, '2.50', 'new');
    """)
    rows = run("SELECT * FROM t ORDER BY id")
    assert rows == (
        (1, 10, Decimal("9.99"), None),  # initial default; the dropped note never comes back
        (2, 20, Decimal("9.99"), None),
        (3, 30, Decimal("9.99"), None),  # written before SET DEFAULT, under the column's first write default
        (4, 40, Decimal("1.00"), None),  # the changed write default
        (5, 5000000000, Decimal("2.50"), "new"),
    )
    assert run("DESCRIBE t") == (
        ("id", "INT", "NO", "true", None),
        ("amount", "BIGINT", "YES", "false", None),
        ("price", "DECIMAL(8,2)", "NO", "false", "1.00"),
        ("note", "VARCHAR(10)", "YES", "false", None),
    )
    versions = run("SHOW SCHEMA VERSIONS FROM t")
    assert [v[0] for v in versions] == [1, 2, 3, 4, 5, 6, 7]
    assert versions[0][2].startswith("CREATE TABLE t (id INT NOT NULL")
    assert versions[3][2] == "ALTER TABLE t DROP COLUMN note"
    jobs = run("SHOW ALTER TABLE COLUMN FROM t")
    assert [(j[4], j[5], j[7]) for j in jobs] == [("LIGHT", v, "FINISHED") for v in range(2, 8)]


def test_primary_key_upsert_latest_committed_wins(run):
    run("""
        CREATE TABLE kv (k VARCHAR(5) NOT NULL, v INT, PRIMARY KEY (k)) DISTRIBUTED BY HASH(k) BUCKETS 4;
        INSERT INTO kv VALUES ('a', 1), ('b', 1), ('a', 2);
        INSERT INTO kv VALUES ('b', 3), ('c', 3);
        ALTER TABLE kv ADD COLUMN w INT DEFAULT 0;
        INSERT INTO kv VALUES ('a', 4, 4);
    """)
    assert run("SELECT * FROM kv ORDER BY k") == (("a", 4, 4), ("b", 3, 0), ("c", 3, 0))


def test_partitions_and_buckets_hold_every_row(run, session):
    run("""
        CREATE TABLE ev (day DATE NOT NULL, id BIGINT NOT NULL, tag STRING, PRIMARY KEY (day, id))
            PARTITION BY (day) DISTRIBUTED BY HASH(id) BUCKETS 4 ORDER BY (id);
        INSERT INTO ev VALUES ('2024-01-01', 1, 'x'), ('2024-01-01', 2, 'y'), ('2024-01-02', 1, 'z'), ('2024-01-02', 9, NULL);
    """)
    assert run("SELECT day, count(*) FROM ev GROUP BY day ORDER BY day") == (
        (dt.date(2024, 1, 1), 2),
        (dt.date(2024, 1, 2), 2),
    )
    info = session.catalog.table("ev")
    keys = set(session.catalog.tablets(info.current_index_id).values())
    assert {k for k, _ in keys} == {'["2024-01-01"]', '["2024-01-02"]'}
    assert len(keys) >= 3


def test_insert_select_and_column_lists(run):
    run("""
        CREATE TABLE src (a INT, b STRING);
        INSERT INTO src VALUES (1, 'one'), (2, 'two');
        CREATE TABLE dst (a BIGINT, b STRING, c INT DEFAULT 5);
        INSERT INTO dst (b, a) SELECT upper(b), a * 10 FROM src;
        INSERT INTO dst SELECT a, b, a FROM src WHERE a = 1;
    """)
    assert run("SELECT * FROM dst ORDER BY a") == ((1, "one", 1), (10, "ONE", 5), (20, "TWO", 5))


def test_views_are_pinned_to_the_version_they_were_planned_against(run):
    run("""
        CREATE TABLE t (id INT, name STRING, score INT);
        INSERT INTO t VALUES (1, 'ann', 5);
        CREATE VIEW v AS SELECT * FROM t;
        CREATE VIEW high AS SELECT name FROM t WHERE score > 3;
        ALTER TABLE t ADD COLUMN extra INT DEFAULT 42;
        ALTER TABLE t RENAME COLUMN name TO full_name;
        INSERT INTO t VALUES (2, 'bob', 9, 1);
    """)
    assert run("SELECT * FROM v ORDER BY id") == ((1, "ann", 5), (2, "bob", 9))  # no extra; old name
    assert run("SELECT name FROM high ORDER BY name") == (("ann",), ("bob",))
    assert run("SELECT * FROM t ORDER BY id") == ((1, "ann", 5, 42), (2, "bob", 9, 1))
    with pytest.raises(StatementError, match="ALTER TABLE t: cannot drop column score: it is used by views high, v"):
        run("ALTER TABLE t DROP COLUMN score")
    with pytest.raises(StatementError, match=r"ALTER TABLE t: .*full_name.*view.* v"):
        run("ALTER TABLE t MODIFY COLUMN full_name VARCHAR(3)")
    run("ALTER TABLE t DROP COLUMN extra")  # no view uses it
    run("CREATE VIEW vv AS SELECT id FROM v")
    assert run("SELECT * FROM vv ORDER BY id") == ((1,), (2,))
    with pytest.raises(StatementError, match="cannot drop view v: view vv uses it"):
        run("DROP VIEW v")
    with pytest.raises(StatementError, match="cannot drop table t: view high, v uses it"):
        run("DROP TABLE t")


def test_explain_alter_changes_nothing(run, session):
    run("CREATE TABLE t (a INT, b STRING); INSERT INTO t VALUES (1, '1'), (2, '2')")
    rows = run("EXPLAIN ALTER TABLE t ADD COLUMN c INT, MODIFY COLUMN b INT")
    assert [(r[0], r[1]) for r in rows] == [
        ("ADD COLUMN c INT", "LIGHT"),
        ("MODIFY COLUMN b INT", "HEAVY"),
        ("(statement)", "HEAVY"),
    ]
    assert rows[1][3] == 2 and rows[1][4] > 0  # rows and bytes a rewrite would touch
    assert rows[0][3] == 0
    assert session.catalog.table("t").current_version == 1
    assert run("SHOW ALTER TABLE COLUMN") == ()
    assert session.catalog.view_uses(session.catalog.table("t").id) == {}
