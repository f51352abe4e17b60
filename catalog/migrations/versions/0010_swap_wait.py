"""the wait for a person's swap on alter jobs: `ready_to_swap_at`, when a postponed job (the
`postpone_swap` property) became READY_TO_SWAP, and `swap_wait_s`, the seconds it waited there in
all, so a job's duration can leave out the time it waited for someone
"""

import sqlalchemy as sa
from alembic import op

revision = "0010"
down_revision = "0009"


def upgrade() -> None:
    with op.batch_alter_table("af_alter_jobs") as batch_op:
        batch_op.add_column(sa.Column("ready_to_swap_at", sa.DateTime(), nullable=True))
        batch_op.add_column(sa.Column("swap_wait_s", sa.Float(), nullable=False, server_default="0"))


def downgrade() -> None:
    with op.batch_alter_table("af_alter_jobs") as batch_op:
        batch_op.drop_column("swap_wait_s")
        batch_op.drop_column("ready_to_swap_at")
