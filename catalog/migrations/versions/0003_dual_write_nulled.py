"""dual-write NULL count on alter jobs"""

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"


def upgrade() -> None:
    with op.batch_alter_table("af_alter_jobs") as batch_op:
        batch_op.add_column(sa.Column("dual_write_nulled", sa.BigInteger(), nullable=False, server_default="0"))


def downgrade() -> None:
    with op.batch_alter_table("af_alter_jobs") as batch_op:
        batch_op.drop_column("dual_write_nulled")
