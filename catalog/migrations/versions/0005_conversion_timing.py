"""how long each converted tablet took, and on which engine (EXPLAIN ANALYZE's estimate)

Revision ID: 0005
Revises: 0004
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | Sequence[str] | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("af_converted_tablets", schema=None) as batch_op:
        batch_op.add_column(sa.Column("engine", sa.String(length=8), nullable=True))
        batch_op.add_column(sa.Column("seconds", sa.Float(), nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("af_converted_tablets", schema=None) as batch_op:
        batch_op.drop_column("seconds")
        batch_op.drop_column("engine")
