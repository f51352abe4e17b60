"""heavyweight jobs"""

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"


def upgrade() -> None:
    """Upgrade schema."""
    op.create_table(
        "af_converted_tablets",
        sa.Column("id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), autoincrement=True, nullable=False),
        sa.Column("job_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("origin_tablet_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("txn_id", sa.BigInteger().with_variant(sa.Integer(), "sqlite"), nullable=False),
        sa.Column("rows_in", sa.BigInteger(), nullable=False),
        sa.Column("rows_out", sa.BigInteger(), nullable=False),
        sa.Column("failed_casts", sa.BigInteger(), nullable=False),
        sa.Column("samples", sa.Text(), nullable=False),
        sa.Column("finished_at", sa.DateTime(), nullable=False),
        sa.ForeignKeyConstraint(
            ["job_id"],
            ["af_alter_jobs.id"],
        ),
        sa.ForeignKeyConstraint(
            ["origin_tablet_id"],
            ["af_tablets.id"],
        ),
        sa.ForeignKeyConstraint(
            ["txn_id"],
            ["af_transactions.id"],
        ),
        sa.PrimaryKeyConstraint("id"),
        sa.UniqueConstraint("job_id", "origin_tablet_id"),
        sqlite_autoincrement=True,
    )
    with op.batch_alter_table("af_converted_tablets") as batch_op:
        batch_op.create_index(batch_op.f("ix_af_converted_tablets_job_id"), ["job_id"], unique=False)

    with op.batch_alter_table("af_transactions") as batch_op:
        batch_op.add_column(sa.Column("job_id", sa.BigInteger(), nullable=True))


def downgrade() -> None:
    """Downgrade schema."""
    with op.batch_alter_table("af_transactions") as batch_op:
        batch_op.drop_column("job_id")

    with op.batch_alter_table("af_converted_tablets") as batch_op:
        batch_op.drop_index(batch_op.f("ix_af_converted_tablets_job_id"))

    op.drop_table("af_converted_tablets")
