"""af_alter_turns: Airflow runs of ALTERs waiting for their table (an unfinished job on it, or runs
triggered before them), in the order they were triggered
"""

import sqlalchemy as sa
from alembic import op

revision = "0011"
down_revision = "0010"

IdType = sa.BigInteger().with_variant(sa.Integer(), "sqlite")


def upgrade() -> None:
    op.create_table(
        "af_alter_turns",
        sa.Column("request_id", sa.String(64), primary_key=True),
        sa.Column("table_id", IdType, sa.ForeignKey("af_tables.id"), nullable=False),
        sa.Column("triggered_at", sa.DateTime(), nullable=False),
        sa.Column("heavy", sa.Boolean(), nullable=False, server_default=sa.true()),
        sa.Column("let_through_at", sa.DateTime(), nullable=True),
        sa.Column("expires_at", sa.DateTime(), nullable=False),
    )
    op.create_index("ix_af_alter_turns_table_id", "af_alter_turns", ["table_id"])


def downgrade() -> None:
    op.drop_index("ix_af_alter_turns_table_id", "af_alter_turns")
    op.drop_table("af_alter_turns")
