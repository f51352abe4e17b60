"""dual-write NULL count on alter jobs

Revision ID: 0003
Revises: 0002
"""

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | Sequence[str] | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("af_alter_jobs", schema=None) as batch_op:
        batch_op.add_column(sa.Column("dual_write_nulled", sa.BigInteger(), nullable=False, server_default="0"))


def downgrade() -> None:
    with op.batch_alter_table("af_alter_jobs", schema=None) as batch_op:
        batch_op.drop_column("dual_write_nulled")
