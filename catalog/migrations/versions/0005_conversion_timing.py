"""how long each converted tablet took, and on which engine (EXPLAIN ANALYZE's estimate)"""

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"


def upgrade() -> None:
    with op.batch_alter_table("af_converted_tablets") as batch_op:
        batch_op.add_column(sa.Column("engine", sa.String(length=8), nullable=True))
        batch_op.add_column(sa.Column("seconds", sa.Float(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("af_converted_tablets") as batch_op:
        batch_op.drop_column("seconds")
        batch_op.drop_column("engine")
