"""quarantine (on_cast_error = quarantine): which job a quarantine table's file belongs to, and
how many rows each converted tablet quarantined
"""

import sqlalchemy as sa
from alembic import op

revision = "0006"
down_revision = "0005"


def upgrade() -> None:
    with op.batch_alter_table("af_data_files") as batch_op:
        batch_op.add_column(sa.Column("quarantine_job_id", sa.Integer(), nullable=True))
        batch_op.create_index("ix_af_data_files_quarantine_job_id", ["quarantine_job_id"])
    with op.batch_alter_table("af_converted_tablets") as batch_op:
        batch_op.add_column(sa.Column("quarantined", sa.BigInteger(), nullable=False, server_default="0"))


def downgrade() -> None:
    with op.batch_alter_table("af_converted_tablets") as batch_op:
        batch_op.drop_column("quarantined")
    with op.batch_alter_table("af_data_files") as batch_op:
        batch_op.drop_index("ix_af_data_files_quarantine_job_id")
        batch_op.drop_column("quarantine_job_id")
