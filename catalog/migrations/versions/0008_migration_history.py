"""versioned migrations (docs/migrations.md): af_migrations holds each migration file applied (or the
baseline) with its checksum and state, af_migration_statements each statement of it with the job
and schema version it made, af_migration_lease who runs `alterflow migrate apply` now
"""

import sqlalchemy as sa
from alembic import op

revision = "0008"
down_revision = "0007"

_ID = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "af_migrations",
        sa.Column("id", _ID, primary_key=True, autoincrement=True),
        sa.Column("version", sa.String(64), nullable=False, unique=True),
        sa.Column("description", sa.Text(), nullable=False),
        sa.Column("script", sa.String(256), nullable=False),
        sa.Column("checksum", sa.String(64), nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("installed_by", sa.String(256), nullable=False),
        sa.Column("started_at", sa.DateTime(), nullable=False),
        sa.Column("finished_at", sa.DateTime(), nullable=True),
        sa.Column("error", sa.Text(), nullable=False),
        sqlite_autoincrement=True,
    )
    op.create_table(
        "af_migration_statements",
        sa.Column("id", _ID, primary_key=True, autoincrement=True),
        sa.Column("migration_id", _ID, sa.ForeignKey("af_migrations.id"), nullable=False, index=True),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("line", sa.Integer(), nullable=False),
        sa.Column("text_hash", sa.String(64), nullable=False),
        sa.Column("request_id", sa.String(64), nullable=False, unique=True),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("table_name", sa.String(128), nullable=True),
        sa.Column("table_id", _ID, nullable=True),
        sa.Column("job_id", _ID, nullable=True),
        sa.Column("schema_version", sa.Integer(), nullable=True),
        sa.Column("started_at", sa.DateTime(), nullable=False),
        sa.Column("finished_at", sa.DateTime(), nullable=True),
        sa.Column("error", sa.Text(), nullable=False),
        sa.UniqueConstraint("migration_id", "position"),
        sqlite_autoincrement=True,
    )
    op.create_table(
        "af_migration_lease",
        sa.Column("name", sa.String(32), primary_key=True),
        sa.Column("holder", sa.String(256), nullable=True),
        sa.Column("acquired_at", sa.DateTime(), nullable=True),
        sa.Column("expires_at", sa.DateTime(), nullable=True),
    )


def downgrade() -> None:
    op.drop_table("af_migration_lease")
    op.drop_table("af_migration_statements")
    op.drop_table("af_migrations")
