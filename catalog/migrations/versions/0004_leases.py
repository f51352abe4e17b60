"""runner leases on alter jobs, load leases on transactions"""

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"


def upgrade() -> None:
    with op.batch_alter_table("af_alter_jobs") as batch_op:
        batch_op.add_column(sa.Column("lease_holder", sa.String(256), nullable=True))
        batch_op.add_column(sa.Column("lease_group", sa.String(256), nullable=True))
        batch_op.add_column(sa.Column("lease_acquired_at", sa.DateTime(), nullable=True))
        batch_op.add_column(sa.Column("lease_renewed_at", sa.DateTime(), nullable=True))
        batch_op.add_column(sa.Column("lease_expires_at", sa.DateTime(), nullable=True))
    with op.batch_alter_table("af_transactions") as batch_op:
        batch_op.add_column(sa.Column("lease_holder", sa.String(256), nullable=True))
        batch_op.add_column(sa.Column("lease_expires_at", sa.DateTime(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("af_transactions") as batch_op:
        batch_op.drop_column("lease_expires_at")
        batch_op.drop_column("lease_holder")
    with op.batch_alter_table("af_alter_jobs") as batch_op:
        for column in ("lease_expires_at", "lease_renewed_at", "lease_acquired_at", "lease_group", "lease_holder"):
            batch_op.drop_column(column)
