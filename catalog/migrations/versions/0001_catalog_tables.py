"""catalog tables

Revision ID: 0001
Revises:
Create Date: 2026-11-22 03:53:57.739271

"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

# revision identifiers, used by Alembic.
revision: str = "0001"
down_revision: str | Sequence[str] | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    """Upgrade schema."""
    op.create_table(
        "af_tables",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False),
        sa.Column("name", sa.String(length=128), nullable=False),
        sa.Column("name_key", sa.String(length=128), nullable=True),
        sa.Column("current_version", sa.Integer(), nullable=False),
        sa.Column("next_column_id", sa.Integer(), nullable=False),
        sa.Column("current_index_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=True),
        sa.Column("commit_seq", sa.BigInteger(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("dropped_at", sa.DateTime(), nullable=True),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("name_key"),
        sqlite_autoincrement=True,
    )
    op.create_table(
        "af_views",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False),
        sa.Column("name", sa.String(length=128), nullable=False),
        sa.Column("name_key", sa.String(length=128), nullable=True),
        sa.Column("query", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("dropped_at", sa.DateTime(), nullable=True),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("name_key"),
        sqlite_autoincrement=True,
    )
    op.create_table(
        "af_alter_jobs",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False),
        sa.Column("request_id", sa.String(length=64), nullable=False),
        sa.Column("table_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("table_name", sa.String(length=128), nullable=False),
        sa.Column("kind", sa.String(length=8), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("statement", sa.Text(), nullable=False),
        sa.Column("properties", sa.Text(), nullable=False),
        sa.Column("from_version", sa.Integer(), nullable=False),
        sa.Column("to_version", sa.Integer(), nullable=False),
        sa.Column("boundary_txn", sa.BigInteger(), nullable=True),
        sa.Column("origin_index_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=True),
        sa.Column("shadow_index_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=True),
        sa.Column("msg", sa.Text(), nullable=False),
        sa.Column("progress", sa.Text(), nullable=False),
        sa.Column("steps", sa.Text(), nullable=False),
        sa.Column("timeout_s", sa.Integer(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("finished_at", sa.DateTime(), nullable=True),
        sa.ForeignKeyConstraint(
            ["table_id"],
            ["af_tables.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("request_id"),
        sqlite_autoincrement=True,
    )
    with op.batch_alter_table("af_alter_jobs", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_af_alter_jobs_table_id"), ["table_id"], unique=False)

    op.create_table(
        "af_indexes",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False),
        sa.Column("table_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("schema_version", sa.Integer(), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("retired_at", sa.DateTime(), nullable=True),
        sa.ForeignKeyConstraint(
            ["table_id"],
            ["af_tables.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sqlite_autoincrement=True,
    )
    with op.batch_alter_table("af_indexes", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_af_indexes_table_id"), ["table_id"], unique=False)

    op.create_table(
        "af_schema_versions",
        sa.Column("table_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("version", sa.Integer(), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("spec", sa.Text(), nullable=False),
        sa.Column("statement", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["table_id"],
            ["af_tables.id"],
        ),
        sa.PrimaryKeyConstraint("table_id", "version"),
    )
    op.create_table(
        "af_transactions",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False),
        sa.Column("table_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("label", sa.String(length=256), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.Column("timeout_at", sa.DateTime(), nullable=False),
        sa.Column("finished_at", sa.DateTime(), nullable=True),
        sa.Column("commit_seq", sa.BigInteger(), nullable=True),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.ForeignKeyConstraint(
            ["table_id"],
            ["af_tables.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sqlite_autoincrement=True,
    )
    with op.batch_alter_table("af_transactions", schema=None) as batch_op:
        batch_op.create_index("ix_af_transactions_table_state", ["table_id", "state"], unique=False)

    op.create_table(
        "af_view_dependencies",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False),
        sa.Column("view_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("ref_name", sa.String(length=128), nullable=False),
        sa.Column("table_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=True),
        sa.Column("table_version", sa.Integer(), nullable=True),
        sa.Column("column_ids", sa.Text(), nullable=False),
        sa.Column("dep_view_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=True),
        sa.ForeignKeyConstraint(
            ["dep_view_id"],
            ["af_views.id"],
        ),
        sa.ForeignKeyConstraint(
            ["table_id"],
            ["af_tables.id"],
        ),
        sa.ForeignKeyConstraint(
            ["view_id"],
            ["af_views.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sqlite_autoincrement=True,
    )
    with op.batch_alter_table("af_view_dependencies", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_af_view_dependencies_table_id"), ["table_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_af_view_dependencies_view_id"), ["view_id"], unique=False)

    op.create_table(
        "af_tablets",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False),
        sa.Column("index_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("partition_key", sa.String(length=1024), nullable=False),
        sa.Column("bucket", sa.Integer(), nullable=False),
        sa.ForeignKeyConstraint(
            ["index_id"],
            ["af_indexes.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("index_id", "partition_key", "bucket"),
        sqlite_autoincrement=True,
    )
    with op.batch_alter_table("af_tablets", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_af_tablets_index_id"), ["index_id"], unique=False)

    op.create_table(
        "af_data_files",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False),
        sa.Column("tablet_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("txn_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("schema_version", sa.Integer(), nullable=False),
        sa.Column("path", sa.String(length=1024), nullable=False),
        sa.Column("row_count", sa.BigInteger(), nullable=False),
        sa.Column("byte_size", sa.BigInteger(), nullable=False),
        sa.Column("state", sa.String(length=16), nullable=False),
        sa.Column("created_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["tablet_id"],
            ["af_tablets.id"],
        ),
        sa.ForeignKeyConstraint(
            ["txn_id"],
            ["af_transactions.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sqlite_autoincrement=True,
    )
    with op.batch_alter_table("af_data_files", schema=None) as batch_op:
        batch_op.create_index(batch_op.f("ix_af_data_files_tablet_id"), ["tablet_id"], unique=False)
        batch_op.create_index(batch_op.f("ix_af_data_files_txn_id"), ["txn_id"], unique=False)


def downgrade() -> None:
    """Downgrade schema."""
    with op.batch_alter_table("af_data_files", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_af_data_files_txn_id"))
        batch_op.drop_index(batch_op.f("ix_af_data_files_tablet_id"))

    op.drop_table("af_data_files")
    with op.batch_alter_table("af_tablets", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_af_tablets_index_id"))

    op.drop_table("af_tablets")
    with op.batch_alter_table("af_view_dependencies", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_af_view_dependencies_view_id"))
        batch_op.drop_index(batch_op.f("ix_af_view_dependencies_table_id"))

    op.drop_table("af_view_dependencies")
    with op.batch_alter_table("af_transactions", schema=None) as batch_op:
        batch_op.drop_index("ix_af_transactions_table_state")

    op.drop_table("af_transactions")
    op.drop_table("af_schema_versions")
    with op.batch_alter_table("af_indexes", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_af_indexes_table_id"))

    op.drop_table("af_indexes")
    with op.batch_alter_table("af_alter_jobs", schema=None) as batch_op:
        batch_op.drop_index(batch_op.f("ix_af_alter_jobs_table_id"))

    op.drop_table("af_alter_jobs")
    op.drop_table("af_views")
    op.drop_table("af_tables")
