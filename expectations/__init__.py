"""Great Expectations suites that prove a heavyweight rewrite before it goes live.

Importing Great Expectations imports Spark Connect, which can exit the process (see
`spark_connect`): it is imported safely here first, before any module of this package imports
Great Expectations."""

import logging

from alterflow.expectations.spark_connect import import_spark_connect

# Great Expectations' INFO chatter (some 200 "Skipping registering function ..." lines on import,
# "Created temporary directory ... for ephemeral docs site" on each context) is for debugging: its
# loggers at WARNING, the children that set a level of their own (on import) too. A job's story
# is alterflow's to log.
logging.getLogger("great_expectations").setLevel(logging.WARNING)
import_spark_connect()


def quiet_great_expectations() -> None:
    """Raise every Great Expectations logger that set its own level below WARNING (call after import)."""
    for name in list(logging.root.manager.loggerDict):
        if name.split(".")[0] == "great_expectations":
            logger = logging.getLogger(name)
            if logger.level < logging.WARNING:
                logger.setLevel(logging.WARNING)
