"""quarantine (on_cast_error = quarantine): which job a quarantine table's file belongs to, and
how many rows each converted tablet quarantined

Revision ID: 0006
Revises: 0005
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | Sequence[str] | None = "0005"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("af_data_files", schema=None) as batch_op:
        batch_op.add_column(sa.Column("quarantine_job_id", sa.Integer(), nullable=True))
        batch_op.create_index("ix_af_data_files_quarantine_job_id", ["quarantine_job_id"])
    with op.batch_alter_table("af_converted_tablets", schema=None) as batch_op:
        batch_op.add_column(sa.Column("quarantined", sa.BigInteger(), nullable=False, server_default="0"))


def downgrade() -> None:
    with op.batch_alter_table("af_converted_tablets", schema=None) as batch_op:
        batch_op.drop_column("quarantined")
    with op.batch_alter_table("af_data_files", schema=None) as batch_op:
        batch_op.drop_index("ix_af_data_files_quarantine_job_id")
        batch_op.drop_column("quarantine_job_id")
