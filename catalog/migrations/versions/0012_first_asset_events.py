"""af_first_asset_events: when each table's asset had its first event, so that the events right
after it wait until Airflow has created the asset (two first events at once collide in Airflow)
"""

import sqlalchemy as sa
from alembic import op

revision = "0012"
down_revision = "0011"


def upgrade() -> None:
    op.create_table(
        "af_first_asset_events",
        sa.Column("uri", sa.String(512), primary_key=True),
        sa.Column("emitted_at", sa.DateTime(), nullable=False),
    )


def downgrade() -> None:
    op.drop_table("af_first_asset_events")
