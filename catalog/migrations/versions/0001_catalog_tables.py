"""catalog tables"""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None

# SQLite only autoincrements INTEGER PRIMARY KEY; BigInteger elsewhere.
_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def _create_table_with_id(name: str, *items: sa.schema.SchemaItem) -> None:
    """A table keyed by an autoincrement `id` that is never reused (SQLite's AUTOINCREMENT)."""
    op.create_table(
        name,
        sa.Column("id", _ID, autoincrement=True, nullable=False),
        *items,
        sa.PrimaryKeyConstraint("id"),
        sqlite_autoincrement=True,
    )


def _create_indexes(table: str, *columns: str) -> None:
    """An index `ix_<table>_<column>` on each of the columns."""
    with op.batch_alter_table(table) as batch_op:
        for column in columns:
            batch_op.create_index(batch_op.f(f"ix_{table}_{column}"), [column], unique=False)


def _drop_indexes(table: str, *columns: str) -> None:
    """The indexes `_create_indexes` made, last first."""
    with op.batch_alter_table(table) as batch_op:
        for column in reversed(columns):
            batch_op.drop_index(batch_op.f(f"ix_{table}_{column}"))


def _create_named_table(name: str, *columns: sa.Column) -> None:
    """A table of named objects (tables, views): the name, its lower-cased key while the object
    lives (unique; NULL once dropped), and when it was created and dropped."""
    _create_table_with_id(
        name,
        sa.Column("name", sa.String(length=128), nullable=False),
        sa.Column("name_key", sa.String(length=128), nullable=True),
        *columns,
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("dropped_at", sa.DateTime(), nullable=True),
        sa.UniqueConstraint("name_key"),
    )


def upgrade() -> None:
    """Upgrade schema."""
    _create_named_table(
        "af_tables",
        sa.Column("current_version", sa.Integer(), nullable=False),
        sa.Column("next_column_id", sa.Integer(), nullable=False),
        sa.Column("current_index_id", _ID, nullable=True),
        sa.Column("commit_seq", sa.BigInteger(), nullable=False),
    )
    _create_named_table("af_views", sa.Column("query", sa.Text(), nullable=False))
    _create_table_with_id(
        "af_alter_jobs",
        sa.Column("request_id", sa.String(length=64), nullable=False),
        sa.Column("table_id", _ID, nullable=False),
        sa.Column("table_name", sa.String(length=128), nullable=False),
        sa.Column("kind", sa.String(length=8), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("statement", sa.Text(), nullable=False),
        sa.Column("properties", sa.Text(), nullable=False),
        sa.Column("from_version", sa.Integer(), nullable=False),
        sa.Column("to_version", sa.Integer(), nullable=False),
        sa.Column("boundary_txn", sa.BigInteger(), nullable=True),
        sa.Column("origin_index_id", _ID, nullable=True),
        sa.Column("shadow_index_id", _ID, nullable=True),
        sa.Column("msg", sa.Text(), nullable=False),
        sa.Column("progress", sa.Text(), nullable=False),
        sa.Column("steps", sa.Text(), nullable=False),
        sa.Column("timeout_s", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("finished_at", sa.DateTime(), nullable=True),
        sa.ForeignKeyConstraint(["table_id"], ["af_tables.id"]),
        sa.UniqueConstraint("request_id"),
    )
    _create_indexes("af_alter_jobs", "table_id")

    _create_table_with_id(
        "af_indexes",
        sa.Column("table_id", _ID, nullable=False),
        sa.Column("schema_version", sa.Integer(), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("retired_at", sa.DateTime(), nullable=True),
        sa.ForeignKeyConstraint(["table_id"], ["af_tables.id"]),
    )
    _create_indexes("af_indexes", "table_id")

    op.create_table(
        "af_schema_versions",
        sa.Column("table_id", _ID, nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("spec", sa.Text(), nullable=False),
        sa.Column("statement", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(["table_id"], ["af_tables.id"]),
        sa.PrimaryKeyConstraint("table_id", "version"),
    )
    _create_table_with_id(
        "af_transactions",
        sa.Column("table_id", _ID, nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("label", sa.String(length=256), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("timeout_at", sa.DateTime(), nullable=False),
        sa.Column("finished_at", sa.DateTime(), nullable=True),
        sa.Column("commit_seq", sa.BigInteger(), nullable=True),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(["table_id"], ["af_tables.id"]),
    )
    with op.batch_alter_table("af_transactions") as batch_op:
        batch_op.create_index("ix_af_transactions_table_state", ["table_id", "state"], unique=False)

    _create_table_with_id(
        "af_view_dependencies",
        sa.Column("view_id", _ID, nullable=False),
        sa.Column("ref_name", sa.String(length=128), nullable=False),
        sa.Column("table_id", _ID, nullable=True),
        sa.Column("table_version", sa.Integer(), nullable=True),
        sa.Column("column_ids", sa.Text(), nullable=False),
        sa.Column("dep_view_id", _ID, nullable=True),
        sa.ForeignKeyConstraint(["dep_view_id"], ["af_views.id"]),
        sa.ForeignKeyConstraint(["table_id"], ["af_tables.id"]),
        sa.ForeignKeyConstraint(["view_id"], ["af_views.id"]),
    )
    _create_indexes("af_view_dependencies", "table_id", "view_id")

    _create_table_with_id(
        "af_tablets",
        sa.Column("index_id", _ID, nullable=False),
        sa.Column("partition_key", sa.String(length=1024), nullable=False),
        sa.Column("bucket", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(["index_id"], ["af_indexes.id"]),
        sa.UniqueConstraint("index_id", "partition_key", "bucket"),
    )
    _create_indexes("af_tablets", "index_id")

    _create_table_with_id(
        "af_data_files",
        sa.Column("tablet_id", _ID, nullable=False),
        sa.Column("txn_id", _ID, nullable=False),
        sa.Column("schema_version", sa.Integer(), nullable=False),
        sa.Column("path", sa.String(length=1024), nullable=False),
        sa.Column("row_count", sa.BigInteger(), nullable=False),
        sa.Column("byte_size", sa.BigInteger(), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(["tablet_id"], ["af_tablets.id"]),
        sa.ForeignKeyConstraint(["txn_id"], ["af_transactions.id"]),
    )
    _create_indexes("af_data_files", "tablet_id", "txn_id")


def downgrade() -> None:
    """Downgrade schema."""
    _drop_indexes("af_data_files", "tablet_id", "txn_id")
    op.drop_table("af_data_files")
    _drop_indexes("af_tablets", "index_id")
    op.drop_table("af_tablets")
    _drop_indexes("af_view_dependencies", "table_id", "view_id")
    op.drop_table("af_view_dependencies")
    with op.batch_alter_table("af_transactions") as batch_op:
        batch_op.drop_index("ix_af_transactions_table_state")
    op.drop_table("af_transactions")
    op.drop_table("af_schema_versions")
    _drop_indexes("af_indexes", "table_id")
    op.drop_table("af_indexes")
    _drop_indexes("af_alter_jobs", "table_id")
    op.drop_table("af_alter_jobs")
    op.drop_table("af_views")
    op.drop_table("af_tables")
